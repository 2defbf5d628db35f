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

double score(Scoring policy, const NodeState& node, const TaskInfo& task) {
  double sum = 0;
  int counted = 0;
  auto add = [&](const std::string& name, MilliValue asked) {
    const MilliValue total = node.allocatable.get(name);
    if (total <= 0) return;
    const double free_after = static_cast<double>(node.idle.get(name) - asked) / total;
    sum += policy == Scoring::Binpack ? 1.0 - free_after : free_after;
    ++counted;
  };
  for (const auto& [name, amount] : task.requests.values)
    if (name != "pods" && amount > 0) add(name, amount);
  if (counted == 0) {
    add("cpu", 0);
    add("memory", 0);
  }
  return counted == 0 ? 0 : sum / counted;
}

}  // namespace caldera::sched
