#include "messages/yaml/yaml_flow.hpp"

namespace caldera {
namespace {

// Volcano's probe: only taskStatusList runs here; HTTP and TCP probes are warned about.
void read_probe(YamlContext& ctx, const YamlNode& node, const std::string& path,
                std::vector<TaskProbe>& out) {
  MapReader m(ctx, node, path);
  if (auto n = m.get("taskStatusList")) {
    const auto list_path = m.path("taskStatusList");
    if (auto items = read_sequence(ctx, *n, list_path))
      for (size_t i = 0; i < items->size(); ++i) {
        TaskProbe p;
        MapReader t(ctx, (*items)[i], index_path(list_path, i));
        t.str("taskName", p.task_name);
        t.str("phase", p.phase);
        t.warn_unknown();
        out.push_back(std::move(p));
      }
  }
  for (const char* kind : {"httpGetList", "tcpSocketList"})
    if (m.get(kind))
      ctx.warn(m.path(kind), std::string(kind) +
                                 " probes are not supported by caldera, ignored: only "
                                 "taskStatusList probes run");
  m.warn_unknown();
}

FlowDependsOn read_flow_depends_on(YamlContext& ctx, const YamlNode& node,
                                   const std::string& path) {
  FlowDependsOn d;
  MapReader m(ctx, node, path);
  m.strings("targets", d.targets);
  if (auto n = m.get("probe")) read_probe(ctx, *n, m.path("probe"), d.probe);
  m.warn_unknown();
  return d;
}

Flow read_flow(YamlContext& ctx, const YamlNode& node, const std::string& path) {
  Flow f;
  MapReader m(ctx, node, path);
  m.str("name", f.name);
  if (auto n = m.get("dependsOn"))
    f.depends_on = read_flow_depends_on(ctx, *n, m.path("dependsOn"));
  m.i32("retry", f.retry);
  if (auto n = m.get("patch")) {
    MapReader patch(ctx, *n, m.path("patch"));
    // Volcano's field is jobSpec; spec, which caldera read before, is still taken.
    auto volcano = patch.get("jobSpec");
    auto older = patch.get("spec");
    if (volcano && older)
      ctx.error(patch.path("spec"), "the patch gives both jobSpec and spec: keep jobSpec");
    if (auto spec = volcano ? volcano : older) {
      JobSpec p;
      p.queue.clear();  // unset unless the patch names one
      read_job_spec(ctx, *spec, p, patch.path(volcano ? "jobSpec" : "spec"), true);
      f.patch = std::move(p);
    }
    patch.warn_unknown();
  }
  m.warn_unknown();
  return f;
}

}  // namespace

void read_flow_spec(YamlContext& ctx, const YamlNode& node, JobFlowSpec& flow) {
  MapReader m(ctx, node, "spec");
  if (auto n = m.get("flows")) {
    if (auto items = read_sequence(ctx, *n, "spec.flows"))
      for (size_t i = 0; i < items->size(); ++i)
        flow.flows.push_back(read_flow(ctx, (*items)[i], index_path("spec.flows", i)));
  }
  m.str("jobRetainPolicy", flow.job_retain_policy);
  m.warn_unknown();
}

}  // namespace caldera
