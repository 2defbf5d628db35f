// How a session ranks the nodes a pod fits on: binpack (fill nodes up, keep others empty for big
// gangs) or least-allocated (spread), chosen in the cluster config.
#pragma once

#include <optional>
#include <string_view>

#include "actors/scheduler/core/node_state.hpp"
#include "actors/scheduler/core/task_info.hpp"

namespace caldera::sched {

enum class Scoring { Binpack, LeastAllocated };

// "binpack" or "least-allocated"; nullopt for anything else.
std::optional<Scoring> parse_scoring(std::string_view text);
std::string_view to_string(Scoring s);

// Higher is better: the mean, over the resources the pod asks (a pod slot aside) and the node
// has, of the share of the node in use once the pod is on it (binpack) or left free (least
// allocated). A pod that asks nothing scores the node by its cpu and memory.
double score(Scoring policy, const NodeState& node, const TaskInfo& task);

}  // namespace caldera::sched
