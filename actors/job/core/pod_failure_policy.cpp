#include "actors/job/core/pod_failure_policy.hpp"

#include <algorithm>

namespace caldera {
namespace {

bool disrupted(const Pod& pod) {
  for (std::string_view reason : {kNodeLost, kPreempted, kReclaimed})
    if (pod.reason == reason) return true;
  return std::any_of(pod.containers.begin(), pod.containers.end(),
                     [](const ContainerStatus& c) { return c.reason == kLeaseExpired; });
}

// The first ended container the requirement names whose non-zero exit code it matches.
const ContainerStatus* matching_container(const ExitCodeRequirement& r, const Pod& pod) {
  for (const auto& c : pod.containers) {
    if (c.state != ContainerState::Terminated || c.exit_code == 0) continue;
    if (!r.container_name.empty() && r.container_name != c.name) continue;
    const bool listed = std::find(r.values.begin(), r.values.end(), c.exit_code) != r.values.end();
    if (listed == (r.op == "In")) return &c;
  }
  return nullptr;
}

std::string pod_ref(const Pod& pod, const std::string& job_key) {
  auto slash = job_key.find('/');
  return (slash == std::string::npos ? pod.namespace_ : job_key.substr(0, slash)) + "/" + pod.name;
}

}  // namespace

std::vector<PodConditionPattern> pod_conditions(const Pod& pod) {
  if (disrupted(pod)) return {{kDisruptionTarget, "True"}};
  return {};
}

std::optional<FailurePolicyMatch> match_pod_failure_policy(
    const std::vector<PodFailurePolicyRule>& rules, const Pod& pod, const std::string& job_key) {
  if (pod.phase != PodPhase::Failed) return std::nullopt;
  const auto conditions = pod_conditions(pod);
  for (size_t i = 0; i < rules.size(); ++i) {
    const auto& rule = rules[i];
    const auto at = " matching " + rule.action + " rule at index " + std::to_string(i);
    if (rule.on_exit_codes) {
      if (const auto* c = matching_container(*rule.on_exit_codes, pod))
        return FailurePolicyMatch{i, rule.action,
                                  "Container " + c->name + " for pod " + pod_ref(pod, job_key) +
                                      " failed with exit code " + std::to_string(c->exit_code) +
                                      at};
      continue;
    }
    for (const auto& want : rule.on_pod_conditions)
      for (const auto& has : conditions)
        if (has.type == want.type && has.status == want.status)
          return FailurePolicyMatch{
              i, rule.action, "Pod " + pod_ref(pod, job_key) + " has condition " + has.type + at};
  }
  return std::nullopt;
}

}  // namespace caldera
