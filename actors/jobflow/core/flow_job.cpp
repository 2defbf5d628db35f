#include "actors/jobflow/core/flow_job.hpp"

#include <algorithm>

namespace caldera {
namespace {

std::string object_string(const std::string& ns, const std::string& name) {
  return ns + "." + name;
}

template <class T>
void set_if(std::optional<T>& out, const std::optional<T>& in) {
  if (in) out = in;
}

void merge(std::map<std::string, std::string>& out, const std::map<std::string, std::string>& in) {
  for (const auto& [k, v] : in) out[k] = v;
}

void merge_env(std::vector<EnvVar>& out, const std::vector<EnvVar>& in) {
  for (const auto& e : in) {
    auto it =
        std::find_if(out.begin(), out.end(), [&](const EnvVar& o) { return o.name == e.name; });
    if (it == out.end())
      out.push_back(e);
    else
      it->value = e.value;
  }
}

void merge_resources(ResourceList& out, const ResourceList& in) {
  for (const auto& [k, v] : in.values) out.values[k] = v;
}

void patch_container(Container& c, const Container& p) {
  if (!p.command.empty()) c.command = p.command;
  if (!p.args.empty()) c.args = p.args;
  if (!p.working_dir.empty()) c.working_dir = p.working_dir;
  merge_env(c.env, p.env);
  merge_resources(c.requests, p.requests);
  merge_resources(c.limits, p.limits);
}

std::optional<std::string> patch_task(TaskSpec& t, const TaskSpec& p, const std::string& path) {
  if (p.replicas > 0) t.replicas = p.replicas;
  set_if(t.min_available, p.min_available);
  set_if(t.max_retry, p.max_retry);
  if (!p.policies.empty()) t.policies = p.policies;
  set_if(t.depends_on, p.depends_on);
  set_if(t.partition_policy, p.partition_policy);
  merge(t.template_.labels, p.template_.labels);
  merge(t.template_.annotations, p.template_.annotations);
  if (!p.template_.restart_policy.empty()) t.template_.restart_policy = p.template_.restart_policy;
  if (!p.template_.priority_class_name.empty())
    t.template_.priority_class_name = p.template_.priority_class_name;
  for (size_t i = 0; i < p.template_.containers.size(); ++i) {
    const auto& pc = p.template_.containers[i];
    auto it = std::find_if(t.template_.containers.begin(), t.template_.containers.end(),
                           [&](const Container& c) { return c.name == pc.name; });
    if (it == t.template_.containers.end())
      return path + ".template.spec.containers[" + std::to_string(i) + "].name: task " + t.name +
             " has no container \"" + pc.name + "\"";
    patch_container(*it, pc);
  }
  return std::nullopt;
}

}  // namespace

Result<JobSpec> apply_patch(JobSpec spec, const JobSpec& patch) {
  set_if(spec.min_available, patch.min_available);
  set_if(spec.min_success, patch.min_success);
  set_if(spec.max_retry, patch.max_retry);
  if (!patch.queue.empty()) spec.queue = patch.queue;
  if (!patch.priority_class_name.empty()) spec.priority_class_name = patch.priority_class_name;
  if (!patch.scheduler_name.empty()) spec.scheduler_name = patch.scheduler_name;
  if (!patch.policies.empty()) spec.policies = patch.policies;
  if (!patch.plugins.empty()) spec.plugins = patch.plugins;
  set_if(spec.ttl_seconds_after_finished, patch.ttl_seconds_after_finished);
  set_if(spec.active_deadline_seconds, patch.active_deadline_seconds);
  merge(spec.labels, patch.labels);
  merge(spec.annotations, patch.annotations);
  for (size_t i = 0; i < patch.tasks.size(); ++i) {
    const auto& pt = patch.tasks[i];
    const auto path = "patch.spec.tasks[" + std::to_string(i) + "]";
    auto it = std::find_if(spec.tasks.begin(), spec.tasks.end(),
                           [&](const TaskSpec& t) { return t.name == pt.name; });
    if (it == spec.tasks.end())
      return Failure{path + ".name: the JobTemplate has no task \"" + pt.name + "\""};
    if (auto error = patch_task(*it, pt, path)) return Failure{*error};
  }
  return spec;
}

Result<JobSpec> flow_job_spec(const JobFlow& flow, const std::string& entry,
                              const JobTemplate& tmpl) {
  JobSpec spec = tmpl.spec;
  for (const auto& f : flow.spec.flows)
    if (f.name == entry && f.patch) {
      auto patched = apply_patch(std::move(spec), *f.patch);
      if (!patched) return patched;
      spec = std::move(*patched);
    }
  spec.name = flow_job_name(flow.spec.name, entry);
  spec.namespace_ = flow.spec.namespace_;
  const auto by_flow = object_string(flow.spec.namespace_, flow.spec.name);
  const auto by_template = object_string(tmpl.spec.namespace_, tmpl.spec.name);
  for (auto* marks : {&spec.labels, &spec.annotations}) {
    (*marks)[kCreatedByJobFlow] = by_flow;
    (*marks)[kCreatedByJobTemplate] = by_template;
  }
  spec.annotations[kJobFlowUid] = flow.uid;
  return spec;
}

std::optional<std::string> owner_flow_key(const JobSpec& job) {
  auto it = job.labels.find(kCreatedByJobFlow);
  if (it == job.labels.end()) return std::nullopt;
  // Namespaces and names are DNS-1123 labels: neither holds a dot.
  auto dot = it->second.find('.');
  if (dot == std::string::npos) return std::nullopt;
  return it->second.substr(0, dot) + "/" + it->second.substr(dot + 1);
}

bool created_by(const JobSpec& job, const JobFlow& flow) {
  auto uid = job.annotations.find(kJobFlowUid);
  return owner_flow_key(job) == flow.spec.key() && uid != job.annotations.end() &&
         uid->second == flow.uid;
}

std::map<std::string, std::string> job_entries(const JobFlowSpec& flow) {
  std::map<std::string, std::string> out;
  for (const auto& f : flow.flows) out[flow_job_name(flow.name, f.name)] = f.name;
  return out;
}

}  // namespace caldera
