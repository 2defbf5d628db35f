#include "actors/scheduler/core/scoring.hpp"

namespace caldera::sched {

std::optional<Scoring> parse_scoring(std::string_view text) {
  if (text == "binpack") return Scoring::Binpack;
  if (text == "least-allocated") return Scoring::LeastAllocated;
  return std::nullopt;
}

std::string_view to_string(Scoring s) {
  return s == Scoring::Binpack ? "binpack" : "least-allocated";
}

NodeScoring node_scoring(Scoring s) {
  NodeScoring out;
  if (s == Scoring::Binpack) {
    out.nodeorder.reset();
    out.binpack = BinpackWeights{};
  } else {
    out.nodeorder = NodeOrderWeights{1, 0, 0};
  }
  return out;
}

double score(const NodeScoring& scoring, const NodeState& node, const TaskInfo& task) {
  double sum = 0;
  if (const auto& w = scoring.nodeorder) sum += nodeorder_score(*w, node, task);
  if (const auto& b = scoring.binpack; b && b->weight != 0)
    sum += b->weight * binpack_score(*b, node, task);
  return sum;
}

}  // namespace caldera::sched
