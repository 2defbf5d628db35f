#include "actors/node/core/pod_status.hpp"

#include <algorithm>

namespace caldera {

void apply_containers(Pod& pod, const std::vector<ContainerStatus>& containers,
                      const std::string& create_error, int64_t now_ms) {
  pod.containers = containers;
  pod.phase = derive_pod_phase(containers);
  int64_t first_start = 0, last_end = 0;
  for (const auto& c : containers) {
    if (c.started_ms && (!first_start || c.started_ms < first_start)) first_start = c.started_ms;
    last_end = std::max(last_end, c.finished_ms);
  }
  if (first_start) pod.started_ms = first_start;
  if (!is_terminal(pod.phase)) return;
  pod.finished_ms = last_end ? last_end : now_ms;
  for (const auto& c : containers)
    if (c.reason.rfind("StartError", 0) == 0 || c.reason == "SupervisorLost") {
      pod.reason = c.reason;
      pod.message = "container " + c.name + ": " + c.reason;
    }
  if (!create_error.empty()) {
    pod.reason = std::string(kFailedCreate);
    pod.message = create_error;
  }
  apply_lease_expiry(pod);
}

void apply_lease_expiry(Pod& pod) {
  if (!is_terminal(pod.phase)) return;
  for (const auto& c : pod.containers)
    if (c.reason == kLeaseExpired) {
      pod.phase = PodPhase::Failed;
      pod.reason = std::string(kNodeLost);
      pod.message = "node " + pod.node +
                    " stopped the pod: its lease ran out (cut off from the coordinator for "
                    "longer than cluster.leaseTimeout)";
      return;
    }
}

void start_simulated(Pod& pod, int64_t now_ms) {
  pod.started_ms = now_ms;
  for (auto& c : pod.containers) {
    c.state = ContainerState::Running;
    c.started_ms = now_ms;
  }
  pod.phase = PodPhase::Running;
}

void end_simulated(Pod& pod, int32_t exit_code, int32_t signal, const std::string& reason,
                   int64_t now_ms) {
  for (auto& c : pod.containers) {
    c.state = ContainerState::Terminated;
    c.exit_code = exit_code;
    c.signal = signal;
    c.reason = reason;
    c.finished_ms = now_ms;
  }
  pod.phase = derive_pod_phase(pod.containers);
  pod.finished_ms = now_ms;
  apply_lease_expiry(pod);
}

}  // namespace caldera
