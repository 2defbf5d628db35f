#include "actors/job/core/pod_template.hpp"

#include <charconv>
#include <string>

#include "actors/job/core/plugins.hpp"
#include "messages/admission/admission.hpp"

namespace caldera {
namespace {

std::optional<int64_t> annotation_int(const PodTemplate& t, const char* key) {
  auto it = t.annotations.find(key);
  if (it == t.annotations.end()) return std::nullopt;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
  if (ec != std::errc() || ptr != it->second.data() + it->second.size()) return std::nullopt;
  return v;
}

void set_env(std::vector<EnvVar>& env, const std::string& name, const std::string& value) {
  for (const auto& e : env)
    if (e.name == name) return;  // the user's own value wins
  env.push_back({name, value});
}

// A pod's labels and annotations, as `get pod` shows them, with what its plugins add: what its
// variables' fieldRefs read.
void pod_metadata(const JobSpec& spec, const TaskSpec& task, const Pod& pod,
                  const std::map<std::string, std::string>& plugin_annotations,
                  std::map<std::string, std::string>& labels,
                  std::map<std::string, std::string>& annotations) {
  labels = task.template_.labels;
  annotations = task.template_.annotations;
  if (spec.batch) {
    labels["batch.kubernetes.io/job-name"] = spec.name;
    labels["job-name"] = spec.name;
    if (spec.batch->indexed() && pod.index >= 0) {
      labels[kCompletionIndexAnnotation] = std::to_string(pod.index);
      annotations[kCompletionIndexAnnotation] = std::to_string(pod.index);
    }
  } else {
    labels["volcano.sh/job-name"] = spec.name;
    labels["volcano.sh/task-spec"] = task.name;
    labels["volcano.sh/task-index"] = std::to_string(pod.index);
    if (pod.partition >= 0) labels["volcano.sh/task-partition-id"] = std::to_string(pod.partition);
    annotations["volcano.sh/job-version"] = std::to_string(pod.job_version);
  }
  for (const auto& [k, v] : plugin_annotations) annotations[k] = v;
}

// Kubernetes' downward API for env: each fieldRef variable takes the pod's field as it starts.
void resolve_field_refs(PodRuntime& rt, const JobSpec& spec, const TaskSpec& task, const Pod& pod,
                        const std::map<std::string, std::string>& plugin_annotations) {
  std::map<std::string, std::string> labels, annotations;
  bool made = false;
  for (auto& c : rt.containers)
    for (auto& e : c.env) {
      if (e.field_path.empty()) continue;
      if (!made) pod_metadata(spec, task, pod, plugin_annotations, labels, annotations);
      made = true;
      const auto& f = e.field_path;
      if (f == "metadata.name") e.value = pod.name;
      if (f == "metadata.namespace") e.value = pod.namespace_;
      if (f == "metadata.uid") e.value = pod.uid;
      if (f == "spec.nodeName") e.value = pod.node;
      if (f == "status.hostIP" || f == "status.podIP") e.value = pod.host_ip;  // the node's
      if (auto m = metadata_field(f)) {
        const auto& from = m->first == "labels" ? labels : annotations;
        auto it = from.find(m->second);
        e.value = it == from.end() ? "" : it->second;  // Kubernetes' value for a missing key
      }
      e.field_path.clear();
    }
}

}  // namespace

namespace {

std::optional<int64_t> template_grace_ms(const JobSpec& spec, const std::string& task_name) {
  for (const auto& task : spec.tasks)
    if (task.name == task_name && task.template_.termination_grace_seconds)
      return *task.template_.termination_grace_seconds * 1000;
  return std::nullopt;
}

}  // namespace

int64_t pod_grace_ms(const JobSpec& spec, const std::string& task_name) {
  return template_grace_ms(spec, task_name).value_or(kPodGraceMs);
}

int64_t lease_stop_grace_ms(const JobSpec& spec, const std::string& task_name) {
  return template_grace_ms(spec, task_name).value_or(kLeaseStopGraceMs);
}

std::optional<PodRuntime> pod_runtime(const JobSpec& spec, const Pod& pod, const PodTable& pods,
                                      const std::optional<SshKeyPair>& ssh_keys) {
  for (const auto& task : spec.tasks) {
    if (task.name != pod.task_name) continue;
    PodRuntime rt;
    rt.requests = pod_resource_request(task);
    rt.sim_duration_ms = annotation_int(task.template_, kSimDurationAnnotation);
    rt.sim_exit_code =
        static_cast<int32_t>(annotation_int(task.template_, kSimExitCodeAnnotation).value_or(0));
    rt.containers = task.template_.containers;
    rt.grace_ms = pod_grace_ms(spec, task.name);
    rt.lease_stop_grace_ms = lease_stop_grace_ms(spec, task.name);
    if (spec.batch) {
      // A Kubernetes Job's pod: its completion index (Indexed) and its hostname, no Volcano's.
      const bool indexed = spec.batch->indexed() && pod.index >= 0;
      for (auto& c : rt.containers) {
        if (indexed) set_env(c.env, kCompletionIndexEnv, std::to_string(pod.index));
        set_env(c.env, "HOSTNAME",
                indexed ? spec.name + "-" + std::to_string(pod.index) : pod.name);
      }
      resolve_field_refs(rt, spec, task, pod, {});
      return rt;
    }
    auto index = std::to_string(pod.index);
    for (auto& c : rt.containers) {
      set_env(c.env, "VK_TASK_INDEX", index);
      set_env(c.env, "VC_TASK_INDEX", index);
      set_env(c.env, "VC_JOB_NAME", spec.name);
      set_env(c.env, "VC_JOB_NAMESPACE", spec.namespace_);
      set_env(c.env, "VC_TASK_NAME", task.name);
      set_env(c.env, "VC_POD_NAME", pod.name);
      set_env(c.env, "HOSTNAME", pod.name);
      if (pod.partition >= 0) set_env(c.env, "VC_TASK_PARTITION_ID", std::to_string(pod.partition));
    }
    auto plugins = plugin_output(spec, pod, pods, ssh_keys);
    for (auto& c : rt.containers) {
      for (const auto& e : plugins.env) set_env(c.env, e.name, e.value);
      auto command = plugins.commands.find(c.name);
      if (command != plugins.commands.end()) {
        c.command = command->second;
        c.args.clear();
      }
    }
    resolve_field_refs(rt, spec, task, pod, plugins.annotations);
    rt.files = std::move(plugins.files);
    rt.views = std::move(plugins.views);
    return rt;
  }
  return std::nullopt;
}

}  // namespace caldera
