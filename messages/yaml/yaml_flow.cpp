#include "messages/yaml/yaml_flow.hpp"

namespace caldera {
namespace {

// Each item of the list under `key`, if there is one, read by fn(MapReader&).
template <class Fn>
void each_item(YamlContext& ctx, MapReader& m, const char* key, Fn&& fn) {
  auto n = m.get(key);
  if (!n) return;
  const auto list_path = m.path(key);
  if (auto items = read_sequence(ctx, *n, list_path))
    for (size_t i = 0; i < items->size(); ++i) {
      MapReader item(ctx, (*items)[i], index_path(list_path, i));
      fn(item);
      item.warn_unknown();
    }
}

// Volcano's probe: its three lists, each a way for a target to count as reached.
void read_probe(YamlContext& ctx, const YamlNode& node, const std::string& path,
                FlowDependsOn& out) {
  MapReader m(ctx, node, path);
  each_item(ctx, m, "taskStatusList", [&](MapReader& t) {
    auto& p = out.probe.emplace_back();
    t.str("taskName", p.task_name);
    t.str("phase", p.phase);
  });
  each_item(ctx, m, "httpGetList", [&](MapReader& g) {
    auto& p = out.http_get.emplace_back();
    g.str("taskName", p.task_name);
    g.str("path", p.path);
    g.i32("port", p.port);
    if (auto h = g.get("httpHeader")) {
      MapReader header(ctx, *h, g.path("httpHeader"));
      header.str("name", p.header_name);
      header.str("value", p.header_value);
      header.warn_unknown();
    }
  });
  each_item(ctx, m, "tcpSocketList", [&](MapReader& t) {
    auto& p = out.tcp_socket.emplace_back();
    t.str("taskName", p.task_name);
    t.i32("port", p.port);
  });
  m.warn_unknown();
}

FlowDependsOn read_flow_depends_on(YamlContext& ctx, const YamlNode& node,
                                   const std::string& path) {
  FlowDependsOn d;
  MapReader m(ctx, node, path);
  m.strings("targets", d.targets);
  if (auto n = m.get("probe")) read_probe(ctx, *n, m.path("probe"), d);
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
