#include "messages/yaml_flow.hpp"

namespace caldera {
namespace {

FlowDependsOn read_flow_depends_on(YamlContext& ctx, const YamlNode& node,
                                   const std::string& path) {
  FlowDependsOn d;
  MapReader m(ctx, node, path);
  m.strings("targets", d.targets);
  if (m.get("probe"))
    ctx.warn(m.path("probe"),
             "probes are not supported by caldera, ignored: a flow waits for its targets' jobs");
  m.warn_unknown();
  return d;
}

Flow read_flow(YamlContext& ctx, const YamlNode& node, const std::string& path) {
  Flow f;
  MapReader m(ctx, node, path);
  m.str("name", f.name);
  if (auto n = m.get("dependsOn"))
    f.depends_on = read_flow_depends_on(ctx, *n, m.path("dependsOn"));
  if (m.get("patch"))
    ctx.warn(m.path("patch"),
             "patch is not supported by caldera, ignored: the template runs as is");
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
