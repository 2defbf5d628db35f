#include "messages/admission/batch_job_patch.hpp"

#include <string>
#include <variant>

#include "messages/admission/batch_job_validation.hpp"
#include "messages/model/batch_job.hpp"
#include "messages/yaml/job_yaml.hpp"
#include "messages/yaml/yaml_reader.hpp"
#include "messages/yaml/yaml_tree.hpp"

namespace caldera {
namespace {

// The API server's word for a change it does not take.
void immutable(Diagnostics& diags, const std::string& path, const YamlNode& value) {
  const std::string shown = value.is_scalar() ? value.scalar() : "...";
  diags.error(path, "Invalid value: " + shown + ": field is immutable");
}

// An integer field; null unsets it when it may be unset (`nullable`).
template <class T>
void patch_int(YamlContext& ctx, const YamlNode& value, const std::string& path, int64_t min,
               bool nullable, std::optional<T>& field, Diagnostics& diags) {
  if (value.is_null()) {
    if (nullable)
      field.reset();
    else
      diags.error(path, "Required value: cannot be removed");
    return;
  }
  if (auto v = read_int(ctx, value, path, min, INT32_MAX)) field = static_cast<T>(*v);
}

void patch_spec(YamlContext& ctx, const YamlNode& node, BatchJobSpec& job, Diagnostics& diags) {
  if (!node.is_map()) {
    diags.error("spec", "expected a mapping");
    return;
  }
  for (const auto& [k, value] : node.entries()) {
    const std::string key = k.is_scalar() ? k.scalar() : "";
    const std::string path = "spec." + key;
    if (key == "suspend") {
      if (auto v = read_bool(ctx, value, path)) job.suspend = *v;
    } else if (key == "parallelism") {
      patch_int(ctx, value, path, 0, false, job.parallelism, diags);
    } else if (key == "backoffLimit") {
      patch_int(ctx, value, path, 0, true, job.backoff_limit, diags);
    } else if (key == "maxFailedIndexes") {
      patch_int(ctx, value, path, 0, true, job.max_failed_indexes, diags);
    } else if (key == "activeDeadlineSeconds") {
      patch_int(ctx, value, path, 1, true, job.active_deadline_seconds, diags);
    } else if (key == "ttlSecondsAfterFinished") {
      patch_int(ctx, value, path, 0, true, job.ttl_seconds_after_finished, diags);
    } else if (key == "completions" || key == "completionMode" || key == "template" ||
               key == "selector" || key == "manualSelector" || key == "podFailurePolicy" ||
               key == "successPolicy" || key == "backoffLimitPerIndex" ||
               key == "podReplacementPolicy") {
      immutable(diags, path, value);
    } else {
      diags.error(path, "Unsupported value: not a field of a Job's spec");
    }
  }
}

}  // namespace

void apply_batch_job_patch(JobSpec& spec, std::string_view patch, Diagnostics& diags) {
  if (patch.size() > kMaxPatchBytes) {
    diags.error("", "the patch has " + std::to_string(patch.size()) + " bytes; at most " +
                        std::to_string(kMaxPatchBytes) + " are taken");
    return;
  }
  auto loaded = load_yaml(patch, kMaxYamlDepth);
  if (auto* error = std::get_if<YamlLoadError>(&loaded)) {
    diags.error("", "the patch is not JSON: " + error->message);
    return;
  }
  const auto& docs = std::get<std::vector<YamlNode>>(loaded);
  if (docs.size() != 1 || !docs[0].is_map()) {
    diags.error("", "the patch is not a JSON object");
    return;
  }
  BatchJobSpec job = to_batch_job_spec(spec);
  Diagnostics found;
  YamlContext ctx(found);
  for (const auto& [k, value] : docs[0].entries()) {
    const std::string key = k.is_scalar() ? k.scalar() : "";
    if (key == "spec")
      patch_spec(ctx, value, job, found);
    else if (key == "metadata" || key == "status")
      found.error(key, "caldera patches a Job's spec only");
    else if (key == "apiVersion" || key == "kind")
      immutable(found, key, value);
    else
      found.error(key, "Unsupported value: not a field of a Job");
  }
  if (found.ok()) validate_batch_job(job, found);
  for (auto& e : found.errors) diags.errors.push_back(std::move(e));
  if (!found.ok()) return;
  JobSpec patched = to_job_spec(std::move(job));
  // What the job runs as stays: its queue and scheduling are not a patch's to change.
  patched.queue = spec.queue;
  patched.priority_class_name = spec.priority_class_name;
  patched.generation = spec.generation;
  spec = std::move(patched);
}

}  // namespace caldera
