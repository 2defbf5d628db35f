// How a session ranks the nodes a pod fits on: the sum of the enabled scoring plugins' scores
// (nodeorder's and binpack's), each times its weight from the scheduler configuration.
#pragma once

#include <optional>
#include <string_view>

#include "actors/scheduler/core/node_state.hpp"
#include "actors/scheduler/core/task_info.hpp"
#include "actors/scheduler/plugins/binpack/binpack.hpp"
#include "actors/scheduler/plugins/nodeorder/nodeorder.hpp"

namespace caldera::sched {

// The cluster config's older `scoring`: binpack (fill nodes up) or least-allocated (spread).
enum class Scoring { Binpack, LeastAllocated };

// "binpack" or "least-allocated"; nullopt for anything else.
std::optional<Scoring> parse_scoring(std::string_view text);
std::string_view to_string(Scoring s);

struct NodeScoring {
  std::optional<NodeOrderWeights> nodeorder = NodeOrderWeights{};  // unset: the plugin is off
  std::optional<BinpackWeights> binpack;
  bool operator==(const NodeScoring&) const = default;
};

// The older scoring as plugins: least-allocated is nodeorder's leastrequested alone, binpack is
// binpack's alone.
NodeScoring node_scoring(Scoring s);

// Higher is better.
double score(const NodeScoring& scoring, const NodeState& node, const TaskInfo& task);

}  // namespace caldera::sched
