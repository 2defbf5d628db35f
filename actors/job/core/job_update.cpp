#include "actors/job/core/job_update.hpp"

#include <string>
#include <utility>

#include <fmt/format.h>

#include "messages/admission/admission.hpp"
#include "messages/admission/batch_job_patch.hpp"

namespace caldera {
namespace {

// Annotations caldera writes on a job (a flow's marks): an applied document keeps them.
bool caldera_owned(const std::string& key) {
  return key.starts_with("caldera.io/");
}

void take_metadata(JobSpec& next, const JobSpec& applied) {
  next.labels = applied.labels;
  std::map<std::string, std::string> annotations;
  for (const auto& [k, v] : next.annotations)
    if (caldera_owned(k)) annotations[k] = v;
  for (const auto& [k, v] : applied.annotations)
    if (!caldera_owned(k)) annotations[k] = v;
  next.annotations = std::move(annotations);
}

// The first field where `a` and `b` differ, Volcano's spelling; "" when none does.
std::string first_difference(const JobSpec& a, const JobSpec& b) {
  if (a.min_success != b.min_success) return "spec.minSuccess";
  if (a.queue != b.queue) return "spec.queue";
  if (a.scheduler_name != b.scheduler_name) return "spec.schedulerName";
  if (a.policies != b.policies) return "spec.policies";
  if (a.plugins != b.plugins) return "spec.plugins";
  if (a.active_deadline_seconds != b.active_deadline_seconds) return "spec.activeDeadlineSeconds";
  if (a.tasks.size() != b.tasks.size()) return "spec.tasks";
  for (size_t i = 0; i < a.tasks.size(); ++i) {
    const auto& x = a.tasks[i];
    const auto& y = b.tasks[i];
    const auto at = fmt::format("spec.tasks[{}].", i);
    if (x.name != y.name) return at + "name";
    if (x.max_retry != y.max_retry) return at + "maxRetry";
    if (x.policies != y.policies) return at + "policies";
    if (x.depends_on != y.depends_on) return at + "dependsOn";
    if (x.partition_policy != y.partition_policy) return at + "partitionPolicy";
    if (!(x.template_ == y.template_)) return at + "template";
  }
  if (a.batch != b.batch) return "spec";
  if (!(a == b)) return "spec";
  return "";
}

bool finished(JobPhase p) {
  return p == JobPhase::Completing || p == JobPhase::Completed || p == JobPhase::Terminating ||
         p == JobPhase::Terminated || p == JobPhase::Failed;
}

std::optional<JobSpec> update_volcano_job(const JobSpec& stored, JobPhase phase,
                                          const JobSpec& applied, Diagnostics& diags) {
  if (applied.tasks.size() != stored.tasks.size()) {
    diags.error("spec.tasks", fmt::format("job updates may not add or remove tasks ({} -> {})",
                                          stored.tasks.size(), applied.tasks.size()));
    return std::nullopt;
  }
  JobSpec next = stored;
  next.min_available = applied.min_available;
  // A file that names no minAvailable keeps the gang the job was created with (Volcano's webhook
  // wrote it into the stored job then), rather than growing it to every pod of a scaled job.
  if (!applied.min_available) next.min_available = stored.effective_min_available();
  if (!applied.min_available && !stored.min_available) {
    bool same_replicas = true;
    for (size_t i = 0; i < next.tasks.size(); ++i)
      same_replicas &= applied.tasks[i].replicas == stored.tasks[i].replicas;
    if (same_replicas) next.min_available.reset();  // nothing to keep: unchanged
  }
  next.priority_class_name = applied.priority_class_name;
  next.max_retry = applied.max_retry;
  next.ttl_seconds_after_finished = applied.ttl_seconds_after_finished;
  for (size_t i = 0; i < next.tasks.size(); ++i) {
    next.tasks[i].replicas = applied.tasks[i].replicas;
    next.tasks[i].min_available = applied.tasks[i].min_available;
  }
  take_metadata(next, applied);
  JobSpec wanted = applied;
  // A job stored before the plugins others need were added for it is the same job when the
  // file, defaulted now, has them.
  JobSpec stored_now = stored;
  add_plugin_dependencies(stored_now);
  if (applied.plugins == stored_now.plugins) wanted.plugins = stored.plugins;
  wanted.generation = stored.generation;
  wanted.labels = next.labels;
  wanted.annotations = next.annotations;
  wanted.min_available = next.min_available;
  if (auto field = first_difference(next, wanted); !field.empty()) {
    diags.error(field,
                "job updates may not change fields other than minAvailable, "
                "priorityClassName, maxRetry, ttlSecondsAfterFinished, and "
                "tasks[*].replicas and tasks[*].minAvailable (as Volcano's webhook)");
    return std::nullopt;
  }
  const bool scaled = next.min_available != stored.min_available || [&] {
    for (size_t i = 0; i < next.tasks.size(); ++i)
      if (next.tasks[i].replicas != stored.tasks[i].replicas ||
          next.tasks[i].min_available != stored.tasks[i].min_available)
        return true;
    return false;
  }();
  if (scaled && finished(phase)) {
    diags.error("spec", "the job is " + std::string(to_string(phase)) +
                            ": its replicas and minAvailable no longer change (maxRetry, "
                            "ttlSecondsAfterFinished, labels and annotations still may)");
    return std::nullopt;
  }
  if (next == stored) return std::nullopt;
  ++next.generation;
  return next;
}

// A Kubernetes Job: the changes are made a merge patch, so that they meet the rules `caldera
// patch` meets.
std::optional<JobSpec> update_batch_job(const JobSpec& stored, const JobSpec& applied,
                                        Diagnostics& diags) {
  const auto& was = *stored.batch;
  const auto& now = *applied.batch;
  std::string patch;
  auto add = [&](const char* field, const std::string& value) {
    patch += fmt::format("{}\"{}\":{}", patch.empty() ? "" : ",", field, value);
  };
  auto num = [](const auto& v) { return v ? std::to_string(*v) : std::string("null"); };
  if (now.suspend != was.suspend) add("suspend", now.suspend ? "true" : "false");
  if (now.parallelism != was.parallelism) add("parallelism", num(now.parallelism));
  if (now.backoff_limit != was.backoff_limit) add("backoffLimit", num(now.backoff_limit));
  if (now.max_failed_indexes != was.max_failed_indexes)
    add("maxFailedIndexes", num(now.max_failed_indexes));
  if (applied.active_deadline_seconds != stored.active_deadline_seconds)
    add("activeDeadlineSeconds", num(applied.active_deadline_seconds));
  if (applied.ttl_seconds_after_finished != stored.ttl_seconds_after_finished)
    add("ttlSecondsAfterFinished", num(applied.ttl_seconds_after_finished));
  JobSpec next = stored;
  if (!patch.empty()) {
    Diagnostics patched;
    apply_batch_job_patch(next, "{\"spec\":{" + patch + "}}", patched);
    for (auto& e : patched.errors) diags.errors.push_back(std::move(e));
    if (!diags.ok()) return std::nullopt;
  }
  take_metadata(next, applied);
  JobSpec wanted = applied;
  wanted.generation = stored.generation;
  wanted.labels = next.labels;
  wanted.annotations = next.annotations;
  if (!(next == wanted)) {
    diags.error("spec",
                "a Kubernetes Job's update may change only spec.suspend, "
                "spec.parallelism, spec.backoffLimit, spec.maxFailedIndexes, "
                "spec.activeDeadlineSeconds and spec.ttlSecondsAfterFinished (the rest "
                "is immutable, as the API server says)");
    return std::nullopt;
  }
  if (next == stored) return std::nullopt;
  ++next.generation;
  return next;
}

}  // namespace

std::optional<JobSpec> update_job_spec(const JobSpec& stored, JobPhase phase, JobSpec applied,
                                       Diagnostics& diags) {
  if (applied.batch.has_value() != stored.batch.has_value()) {
    diags.error("kind", "the object is of another kind than the job stored under this name");
    return std::nullopt;
  }
  return stored.batch ? update_batch_job(stored, applied, diags)
                      : update_volcano_job(stored, phase, applied, diags);
}

}  // namespace caldera
