#include "messages/yaml/yaml_policy.hpp"

#include "messages/yaml/yaml_duration.hpp"

namespace caldera {
namespace {

// The words a user policy may name; the controller's internal events and ResumeJob are left out
// on purpose (admission explains why when they are used anyway).
constexpr const char* kPolicyEvents =
    "*, PodPending, PodRunning, PodFailed, PodEvicted, TaskCompleted, TaskFailed, Unknown";
constexpr const char* kPolicyActions =
    "AbortJob, RestartJob, RestartTask, RestartPod, RestartPartition, TerminateJob, CompleteJob, "
    "SyncJob";

void add_event(YamlContext& ctx, const YamlNode& node, const std::string& path,
               LifecyclePolicy& out) {
  auto word = read_string(ctx, node, path);
  if (!word) return;
  if (auto e = parse_event(*word)) {
    out.events.push_back(*e);
  } else {
    ctx.error(path, "unknown event \"" + *word + "\"; valid events: " + kPolicyEvents);
  }
}

LifecyclePolicy read_policy(YamlContext& ctx, const YamlNode& node, const std::string& path) {
  LifecyclePolicy p;
  MapReader m(ctx, node, path);
  if (!m.valid()) return p;
  if (auto n = m.get("event")) add_event(ctx, *n, m.path("event"), p);
  if (auto n = m.get("events")) {
    if (auto items = read_sequence(ctx, *n, m.path("events")))
      for (size_t i = 0; i < items->size(); ++i)
        add_event(ctx, (*items)[i], index_path(m.path("events"), i), p);
  }
  m.i32("exitCode", p.exit_code);
  if (auto n = m.get("action")) {
    if (auto word = read_string(ctx, *n, m.path("action"))) {
      if (auto a = parse_action(*word)) {
        p.action = *a;
      } else {
        ctx.error(m.path("action"),
                  "unknown action \"" + *word + "\"; valid actions: " + kPolicyActions);
      }
    }
  } else {
    ctx.error(m.path("action"), std::string("action is required; one of: ") + kPolicyActions);
  }
  if (auto n = m.get("timeout")) {
    if (auto text = read_string(ctx, *n, m.path("timeout"))) {
      if (auto ms = parse_go_duration_ms(*text)) {
        p.timeout_ms = *ms;
      } else {
        ctx.error(m.path("timeout"), "invalid duration \"" + *text +
                                         "\": expected a Go duration such as 300s, 5m or 1h30m");
      }
    }
  }
  m.warn_unknown();
  return p;
}

}  // namespace

std::vector<LifecyclePolicy> read_policies(YamlContext& ctx, const YamlNode& node,
                                           const std::string& path) {
  std::vector<LifecyclePolicy> out;
  if (auto items = read_sequence(ctx, node, path))
    for (size_t i = 0; i < items->size(); ++i)
      out.push_back(read_policy(ctx, (*items)[i], index_path(path, i)));
  return out;
}

}  // namespace caldera
