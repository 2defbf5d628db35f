// How a pod's status follows from what happened to its containers, as a kubelet reports it. Pure:
// the node actor applies these and then writes and reports the result.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "messages/model/pod.hpp"

namespace caldera {

// Its supervisor's latest account of the containers: the phase (derive_pod_phase), the first
// start, and once it has ended, its end and why it failed when nothing of it could run
// (`create_error`: FailedCreate) or a container could not start or lost its supervisor.
void apply_containers(Pod& pod, const std::vector<ContainerStatus>& containers,
                      const std::string& create_error, int64_t now_ms);

// A pod whose containers its node stopped as its lease ran out (reason kLeaseExpired) ends
// Failed with reason NodeLost, whatever they exited with: its job hears PodEvicted, as it does
// from the coordinator when the node is lost.
void apply_lease_expiry(Pod& pod);

// A simulated pod starts now: Running, every container with it.
void start_simulated(Pod& pod, int64_t now_ms);

// A simulated pod ends now (or is stopped before or while it runs) with this exit: every
// container Terminated with it, and the phase Kubernetes derives from them.
void end_simulated(Pod& pod, int32_t exit_code, int32_t signal, const std::string& reason,
                   int64_t now_ms);

}  // namespace caldera
