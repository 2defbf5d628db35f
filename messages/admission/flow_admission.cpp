#include "messages/admission/flow_admission.hpp"

#include <map>
#include <set>
#include <vector>

#include "messages/admission/admission.hpp"

namespace caldera {
namespace {

// A job name is a DNS-1123 label, as the pods' hostnames derive from it.
constexpr size_t kMaxJobNameLength = 63;
// Each retry creates a whole job again; a bound keeps a broken template from churning forever.
constexpr int32_t kMaxFlowRetry = 100;

std::string flow_path(size_t i) {
  return "spec.flows[" + std::to_string(i) + "]";
}

// `flow_name_ok`: the JobFlow's own name is valid, so a too long job name is the flow's fault.
void check_flow_names(const JobFlowSpec& spec, bool flow_name_ok,
                      const TemplateExists& template_exists, Diagnostics& d) {
  std::set<std::string> names;
  for (size_t i = 0; i < spec.flows.size(); ++i) {
    const std::string& name = spec.flows[i].name;
    const std::string path = flow_path(i) + ".name";
    const size_t errors = d.errors.size();
    check_dns_label(d, path, "flow name", name);
    if (!name.empty() && !names.insert(name).second)
      d.error(path, "flow name \"" + name + "\" is used twice");
    if (d.errors.size() != errors) continue;
    const std::string job = flow_job_name(spec.name, name);
    if (flow_name_ok && job.size() > kMaxJobNameLength)
      d.error(path, "the flow's job name \"" + job + "\" would be " + std::to_string(job.size()) +
                        " characters; a job name has at most " + std::to_string(kMaxJobNameLength));
    if (spec.flows[i].retry < 0 || spec.flows[i].retry > kMaxFlowRetry)
      d.error(flow_path(i) + ".retry", "retry must be between 0 and " +
                                           std::to_string(kMaxFlowRetry) + ", not " +
                                           std::to_string(spec.flows[i].retry));
    if (template_exists && !template_exists(spec.namespace_, name))
      d.warn(path, "JobTemplate " + name + " does not exist yet in namespace " + spec.namespace_ +
                       "; the flow waits for it");
  }
}

void check_flow_dependencies(const JobFlowSpec& spec, Diagnostics& d) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < spec.flows.size(); ++i) index.emplace(spec.flows[i].name, i);
  std::vector<std::vector<size_t>> edges(spec.flows.size());
  for (size_t i = 0; i < spec.flows.size(); ++i) {
    const auto& dep = spec.flows[i].depends_on;
    if (!dep) continue;
    for (size_t k = 0; k < dep->targets.size(); ++k) {
      const std::string& target = dep->targets[k];
      const std::string path = flow_path(i) + ".dependsOn.targets[" + std::to_string(k) + "]";
      auto it = index.find(target);
      if (target == spec.flows[i].name)
        d.error(path, "a flow cannot depend on itself");
      else if (it == index.end())
        d.error(path, "no flow named \"" + target + "\" in this JobFlow");
      else
        edges[i].push_back(it->second);
    }
  }
  for (size_t i = 0; i < spec.flows.size(); ++i) {
    const auto& dep = spec.flows[i].depends_on;
    if (!dep) continue;
    for (size_t k = 0; k < dep->probe.size(); ++k) {
      const auto& p = dep->probe[k];
      const std::string path =
          flow_path(i) + ".dependsOn.probe.taskStatusList[" + std::to_string(k) + "]";
      if (p.task_name.empty()) d.error(path + ".taskName", "taskName is required");
      if (p.phase != "Running" && p.phase != "Succeeded")
        d.error(path + ".phase", "phase \"" + p.phase +
                                     "\" is not supported; a probe waits for Running or Succeeded");
    }
    const std::string probe_path = flow_path(i) + ".dependsOn.probe.";
    auto check_endpoint = [&](const std::string& path, const std::string& task, int32_t port) {
      if (task.empty()) d.error(path + ".taskName", "taskName is required");
      if (port < 1 || port > 65535)
        d.error(path + ".port", "port " + std::to_string(port) + " is not a port (1..65535)");
    };
    for (size_t k = 0; k < dep->http_get.size(); ++k) {
      const auto& g = dep->http_get[k];
      const std::string path = probe_path + "httpGetList[" + std::to_string(k) + "]";
      check_endpoint(path, g.task_name, g.port);
      if (g.path.empty() || g.path[0] != '/' || g.path.size() > 2048 ||
          g.path.find_first_of(" \r\n") != std::string::npos)
        d.error(path + ".path",
                "path must start with / and hold no space or line break "
                "(at most 2048 characters)");
      if (g.header_name.find_first_of(" :\r\n") != std::string::npos ||
          g.header_value.find_first_of("\r\n") != std::string::npos ||
          g.header_name.size() + g.header_value.size() > 4096 ||
          (g.header_name.empty() && !g.header_value.empty()))
        d.error(path + ".httpHeader",
                "httpHeader needs a name without spaces or colons and a "
                "value on one line (at most 4096 characters)");
    }
    for (size_t k = 0; k < dep->tcp_socket.size(); ++k)
      check_endpoint(probe_path + "tcpSocketList[" + std::to_string(k) + "]",
                     dep->tcp_socket[k].task_name, dep->tcp_socket[k].port);
    if (dep->has_probes() && dep->targets.empty())
      d.error(flow_path(i) + ".dependsOn.probe", "a probe needs targets to probe");
  }
  for (const auto& cycle : find_cycles(edges)) {
    std::string text;
    for (size_t f : cycle) text += spec.flows[f].name + " -> ";
    text += spec.flows[cycle.front()].name;
    d.error(flow_path(cycle.front()) + ".dependsOn", "dependency cycle: " + text);
  }
}

}  // namespace

void apply_defaults(JobFlowSpec& spec) {
  if (spec.namespace_.empty()) spec.namespace_ = "default";
  if (spec.job_retain_policy.empty()) spec.job_retain_policy = "retain";
}

void admit(const JobFlowSpec& spec, const TemplateExists& template_exists, Diagnostics& diags) {
  const size_t errors = diags.errors.size();
  check_dns_label(diags, "metadata.name", "jobflow name", spec.name);
  const bool name_ok = diags.errors.size() == errors;
  check_dns_label(diags, "metadata.namespace", "namespace", spec.namespace_);
  if (spec.flows.empty()) diags.error("spec.flows", "a JobFlow needs at least one flow");
  if (!spec.job_retain_policy.empty() && spec.job_retain_policy != "retain" &&
      spec.job_retain_policy != "delete")
    diags.error("spec.jobRetainPolicy", "jobRetainPolicy must be \"retain\" or \"delete\", got \"" +
                                            spec.job_retain_policy + "\"");
  check_flow_names(spec, name_ok, template_exists, diags);
  check_flow_dependencies(spec, diags);
}

}  // namespace caldera
