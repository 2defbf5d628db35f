#include "actors/scheduler/plugins/binpack/binpack.hpp"

namespace caldera::sched {

double binpack_score(const BinpackWeights& weights, const NodeState& node, const TaskInfo& task) {
  double sum = 0, total_weight = 0;
  auto add = [&](const std::string& name, MilliValue asked, double weight) {
    const MilliValue total = node.allocatable.get(name);
    if (total <= 0 || weight <= 0) return;
    sum += weight * static_cast<double>(total - node.idle.get(name) + asked) /
           static_cast<double>(total);
    total_weight += weight;
  };
  for (const auto& [name, amount] : task.requests.values) {
    if (name == "pods" || amount <= 0) continue;
    auto w = weights.resources.find(name);
    if (w != weights.resources.end()) add(name, amount, w->second);
  }
  if (total_weight == 0) {
    add("cpu", 0, 1);
    add("memory", 0, 1);
  }
  return total_weight == 0 ? 0 : sum / total_weight;
}

}  // namespace caldera::sched
