// Volcano's nodeorder plugin: Kubernetes' node scores, each with its weight in the scheduler
// configuration (leastrequested.weight, mostrequested.weight, balancedresource.weight).
#pragma once

#include "actors/scheduler/core/node_state.hpp"
#include "actors/scheduler/core/task_info.hpp"

namespace caldera::sched {

struct NodeOrderWeights {
  double least_requested = 1;  // spreads pods
  double most_requested = 0;   // fills nodes up
  double balanced = 1;         // keeps a node's cpu and memory equally used
  bool operator==(const NodeOrderWeights&) const = default;
};

// Each in [0, 1], higher is better, over the resources the pod asks (a pod slot aside) that the
// node has; a pod that asks nothing is scored by the node's cpu and memory.
// The mean share of the node left free once the pod is on it.
double least_requested(const NodeState& node, const TaskInfo& task);
// The mean share of the node in use once the pod is on it.
double most_requested(const NodeState& node, const TaskInfo& task);
// 1 less half the gap between the node's cpu and memory shares in use once the pod is on it
// (Kubernetes' BalancedAllocation for two resources); 0 past either's allocatable, 1 without
// both.
double balanced_allocation(const NodeState& node, const TaskInfo& task);

// The weighted sum of the three, from one walk over the node's and the pod's resources (the
// search scores every node it looks at).
double nodeorder_score(const NodeOrderWeights& weights, const NodeState& node,
                       const TaskInfo& task);

}  // namespace caldera::sched
