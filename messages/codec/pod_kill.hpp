// The coordinator's order to a node to stop one of its pods (cluster.capnp PodKill), as bytes.
#pragma once

#include <cstdint>
#include <string>

namespace caldera {

// `reason` is said in the node's log and, with `evict_reason` set ("Preempted", "Reclaimed"),
// becomes the pod's message as it ends Failed with that reason; the pod has `grace_ms` between
// SIGTERM and SIGKILL.
std::string pod_kill_bytes(const std::string& uid, int64_t grace_ms, const std::string& reason,
                           const std::string& evict_reason = {});

}  // namespace caldera
