// Volcano's binpack plugin: a node scores by how full it is once the pod is on it, per resource
// weighted (binpack.cpu, binpack.memory, binpack.resources), so that nodes fill up and others stay
// empty for large gangs.
#pragma once

#include <map>
#include <string>

#include "actors/scheduler/core/node_state.hpp"
#include "actors/scheduler/core/task_info.hpp"

namespace caldera::sched {

struct BinpackWeights {
  double weight = 1;  // binpack.weight: of the whole score among the other plugins'
  std::map<std::string, double> resources{{"cpu", 1}, {"memory", 1}};
  bool operator==(const BinpackWeights&) const = default;
};

// In [0, 1]: the weighted mean, over the asked resources that have a weight and that the node
// has, of the share of the node in use once the pod is on it; a pod that asks none of them is
// scored by the node's cpu and memory.
double binpack_score(const BinpackWeights& weights, const NodeState& node, const TaskInfo& task);

}  // namespace caldera::sched
