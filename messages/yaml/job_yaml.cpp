#include "messages/yaml/job_yaml.hpp"

#include <exception>
#include <variant>

#include "messages/model/job_template.hpp"
#include "messages/yaml/yaml_batch_job.hpp"
#include "messages/yaml/yaml_flow.hpp"
#include "messages/yaml/yaml_pod.hpp"
#include "messages/yaml/yaml_policy.hpp"
#include "messages/yaml/yaml_reader.hpp"
#include "messages/yaml/yaml_scheduling.hpp"

namespace caldera {
namespace {

constexpr const char* kJobApiVersion = "batch.volcano.sh/v1alpha1";
// A Kubernetes Job: the same kind name, another kind.
constexpr const char* kBatchApiVersion = "batch/v1";

// Job, JobTemplate (both a JobSpec) and JobFlowSpec share Kubernetes' object metadata.
template <class Spec>
void read_metadata(YamlContext& ctx, const YamlNode& node, Spec& obj) {
  MapReader m(ctx, node, "metadata");
  m.str("name", obj.name);
  m.str("namespace", obj.namespace_);
  m.string_map("labels", obj.labels);
  m.string_map("annotations", obj.annotations);
  m.ignore({"generateName", "uid", "resourceVersion", "generation", "creationTimestamp",
            "deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences", "finalizers",
            "managedFields", "selfLink"});
  m.warn_unknown();
}

std::vector<Plugin> read_plugins(YamlContext& ctx, const YamlNode& node, const std::string& path) {
  std::vector<Plugin> out;
  MapReader m(ctx, node, path);
  for (const auto& [name, args] : m.entries()) {
    Plugin p{name, {}};
    if (auto list = read_string_list(ctx, args, m.path(name))) p.args = std::move(*list);
    out.push_back(std::move(p));
  }
  return out;
}

DependsOn read_depends_on(YamlContext& ctx, const YamlNode& node, const std::string& path) {
  DependsOn d;
  MapReader m(ctx, node, path);
  m.strings("name", d.names);
  m.str("iteration", d.iteration);
  m.str("condition", d.condition);
  m.warn_unknown();
  return d;
}

PartitionPolicy read_partition_policy(YamlContext& ctx, const YamlNode& node,
                                      const std::string& path) {
  PartitionPolicy p;
  MapReader m(ctx, node, path);
  m.i32("partitionSize", p.partition_size);
  m.i32("minPartitions", p.min_partitions);
  if (m.get("totalPartitions"))
    ctx.warn(m.path("totalPartitions"),
             "totalPartitions is derived from replicas / partitionSize, ignored");
  m.ignore({"networkTopology"});
  m.warn_unknown();
  return p;
}

TaskSpec read_task(YamlContext& ctx, const YamlNode& node, const std::string& path, bool patch) {
  TaskSpec t;
  t.replicas = patch ? 0 : 1;  // Volcano's default for a task that does not say; 0: keep
  MapReader m(ctx, node, path);
  m.str("name", t.name);
  m.i32("replicas", t.replicas);
  m.i32("minAvailable", t.min_available);
  m.i32("maxRetry", t.max_retry);
  if (auto n = m.get("policies")) t.policies = read_policies(ctx, *n, m.path("policies"));
  if (auto n = m.get("dependsOn")) t.depends_on = read_depends_on(ctx, *n, m.path("dependsOn"));
  if (auto n = m.get("partitionPolicy"))
    t.partition_policy = read_partition_policy(ctx, *n, m.path("partitionPolicy"));
  if (auto n = m.get("template")) t.template_ = read_pod_template(ctx, *n, m.path("template"));
  m.ignore({"topologyPolicy"});
  m.warn_unknown();
  return t;
}

}  // namespace

void read_job_spec(YamlContext& ctx, const YamlNode& node, JobSpec& job, const std::string& path,
                   bool patch) {
  MapReader m(ctx, node, path);
  m.i32("minAvailable", job.min_available);
  m.i32("minSuccess", job.min_success);
  m.i32("maxRetry", job.max_retry);
  m.str("queue", job.queue);
  m.str("priorityClassName", job.priority_class_name);
  m.str("schedulerName", job.scheduler_name);
  if (auto n = m.get("policies")) job.policies = read_policies(ctx, *n, m.path("policies"));
  if (auto n = m.get("plugins")) job.plugins = read_plugins(ctx, *n, m.path("plugins"));
  m.i64("ttlSecondsAfterFinished", job.ttl_seconds_after_finished);
  m.i64("activeDeadlineSeconds", job.active_deadline_seconds);
  if (auto n = m.get("tasks")) {
    const auto tasks = m.path("tasks");
    if (auto items = read_sequence(ctx, *n, tasks))
      for (size_t i = 0; i < items->size(); ++i)
        job.tasks.push_back(read_task(ctx, (*items)[i], index_path(tasks, i), patch));
  }
  m.ignore({"volumes", "networkTopology", "runningEstimate"});
  m.warn_unknown();
}

namespace {

// Reads the apiVersion against the one `kind` belongs to: missing is an error, another a warning.
void check_api_version(YamlContext& ctx, const std::string& api_version, const char* expected) {
  if (api_version.empty())
    ctx.error("apiVersion", std::string("apiVersion is required (") + expected + ")");
  else if (api_version != expected)
    ctx.warn("apiVersion", "apiVersion " + api_version + " is read as " + expected);
}

// Reads the metadata with kubectl's rule for -n: a document that names no namespace gets
// `default_namespace` ("default" when empty), and one naming another is refused.
template <class Spec>
void read_object_metadata(YamlContext& ctx, MapReader& root, std::string_view default_namespace,
                          Spec& obj) {
  obj.namespace_.clear();
  if (auto n = root.get("metadata")) read_metadata(ctx, *n, obj);
  if (obj.namespace_.empty()) {
    obj.namespace_ = default_namespace.empty() ? "default" : default_namespace;
  } else if (!default_namespace.empty() && obj.namespace_ != default_namespace) {
    const std::string& named = obj.namespace_;
    ctx.error("metadata.namespace",
              "the namespace from the provided object \"" + named +
                  "\" does not match the namespace \"" + std::string(default_namespace) +
                  "\". You must pass '--namespace=" + named + "' to perform this operation.");
  }
}

void read_document(YamlContext& ctx, const YamlNode& doc, const std::string& prefix, size_t index,
                   std::string_view default_namespace, ParsedDocuments& out) {
  MapReader root(ctx, doc, "");
  if (!root.valid()) return;
  std::string api_version;
  root.str("apiVersion", api_version);
  auto kind_node = root.get("kind");
  if (!kind_node) {
    ctx.error("kind",
              "kind is required (caldera reads kinds Job, JobTemplate, JobFlow, Queue and "
              "PriorityClass)");
    return;
  }
  auto kind = read_string(ctx, *kind_node, "kind");
  if (!kind) return;
  // The cluster-scoped kinds: one reader each, no namespace.
  auto read_cluster_object = [&](const char* expected, auto read, auto& list) {
    check_api_version(ctx, api_version, expected);
    // Member by member: GCC 12 at -O3 takes `{{}, prefix, index}` for a maybe-uninitialized value.
    typename std::remove_reference_t<decltype(list)>::value_type item;
    item.prefix = prefix;
    item.document = index;
    read(ctx, root, item.value);
    root.warn_unknown();
    list.push_back(std::move(item));
  };
  if (*kind == "Queue") return read_cluster_object(kSchedulingApiVersion, read_queue, out.queues);
  if (*kind == "PriorityClass")
    return read_cluster_object(kPriorityApiVersion, read_priority_class, out.priority_classes);
  if (*kind != "Job" && *kind != "JobTemplate" && *kind != "JobFlow") {
    ctx.error("kind", "unsupported kind \"" + *kind + "\"; supported kinds: Job (" +
                          kJobApiVersion + ", or " + kBatchApiVersion +
                          " for a Kubernetes Job), JobTemplate and JobFlow (" + kFlowApiVersion +
                          "), Queue (" + kSchedulingApiVersion + "), PriorityClass (" +
                          kPriorityApiVersion + ")");
    return;
  }
  if (*kind == "Job" && api_version == kBatchApiVersion) {
    BatchJobSpec job;
    read_object_metadata(ctx, root, default_namespace, job);
    if (auto n = root.get("spec")) read_batch_job_spec(ctx, *n, job);
    root.ignore({"status"});
    root.warn_unknown();
    out.batch_jobs.push_back({std::move(job), prefix, index});
    return;
  }
  check_api_version(ctx, api_version, *kind == "Job" ? kJobApiVersion : kFlowApiVersion);
  if (*kind == "JobFlow") {
    JobFlowSpec flow;
    read_object_metadata(ctx, root, default_namespace, flow);
    if (auto n = root.get("spec")) read_flow_spec(ctx, *n, flow);
    root.ignore({"status"});
    root.warn_unknown();
    out.flows.push_back({std::move(flow), prefix, index});
    return;
  }
  JobSpec job;  // a JobTemplate's spec is a Job's spec, read by the same code
  read_object_metadata(ctx, root, default_namespace, job);
  if (auto n = root.get("spec")) read_job_spec(ctx, *n, job);
  root.ignore({"status"});
  root.warn_unknown();
  (*kind == "Job" ? out.jobs : out.templates).push_back({std::move(job), prefix, index});
}

const std::string kTooDeep = "the YAML nests mappings and lists deeper than the limit of " +
                             std::to_string(kMaxYamlDepth) + " levels";

std::string line_path(int line) {
  return line > 0 ? "line " + std::to_string(line) : "";
}

}  // namespace

ParsedDocuments parse_yaml(std::string_view text, Diagnostics& diags,
                           std::string_view default_namespace) {
  ParsedDocuments out;
  // A NUL byte is no YAML character: a parser may stop there and silently drop what follows.
  if (auto nul = text.find('\0'); nul != std::string_view::npos) {
    diags.error("", "the YAML contains a NUL byte at byte offset " + std::to_string(nul) +
                        " (is it a binary file?); YAML text cannot contain NUL bytes");
    return out;
  }
  // One pass: the loader refuses nesting beyond the limit as it reads.
  auto loaded = load_yaml(text, kMaxYamlDepth);
  if (auto* error = std::get_if<YamlLoadError>(&loaded)) {
    diags.error(line_path(error->line), error->too_deep ? kTooDeep : error->message);
    return out;
  }
  std::vector<YamlNode> docs;
  for (auto& doc : std::get<std::vector<YamlNode>>(loaded))
    if (!doc.is_null()) docs.push_back(std::move(doc));
  YamlContext ctx(diags);
  for (size_t i = 0; i < docs.size(); ++i) {
    std::string prefix = docs.size() > 1 ? "documents[" + std::to_string(i) + "]." : "";
    ctx.set_prefix(prefix);
    try {
      read_document(ctx, docs[i], prefix, i, default_namespace, out);
    } catch (const std::exception& e) {
      ctx.error("", std::string("cannot read the document: ") + e.what());
    }
  }
  return out;
}

}  // namespace caldera
