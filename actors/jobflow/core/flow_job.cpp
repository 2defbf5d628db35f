#include "actors/jobflow/core/flow_job.hpp"

namespace caldera {
namespace {

std::string object_string(const std::string& ns, const std::string& name) {
  return ns + "." + name;
}

}  // namespace

JobSpec flow_job_spec(const JobFlow& flow, const std::string& entry, const JobTemplate& tmpl) {
  JobSpec spec = tmpl.spec;
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

std::optional<std::string> entry_of_job(const JobFlowSpec& flow, const std::string& job_name) {
  for (const auto& f : flow.flows)
    if (flow_job_name(flow.name, f.name) == job_name) return f.name;
  return std::nullopt;
}

}  // namespace caldera
