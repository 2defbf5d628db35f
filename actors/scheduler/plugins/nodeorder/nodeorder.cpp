#include "actors/scheduler/plugins/nodeorder/nodeorder.hpp"

#include <cmath>

namespace caldera::sched {

namespace {

// The mean over the asked resources of the share of the node left free once the pod is on it.
double mean_free_after(const NodeState& node, const TaskInfo& task) {
  double sum = 0;
  int counted = 0;
  auto add = [&](const std::string& name, MilliValue asked) {
    const MilliValue total = node.allocatable.get(name);
    if (total <= 0) return;
    sum += static_cast<double>(node.idle.get(name) - asked) / static_cast<double>(total);
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

}  // namespace

double least_requested(const NodeState& node, const TaskInfo& task) {
  return mean_free_after(node, task);
}

double most_requested(const NodeState& node, const TaskInfo& task) {
  return 1.0 - mean_free_after(node, task);
}

double balanced_allocation(const NodeState& node, const TaskInfo& task) {
  auto used_after = [&](const char* name) {
    const MilliValue total = node.allocatable.get(name);
    if (total <= 0) return -1.0;
    return static_cast<double>(total - node.idle.get(name) + task.requests.get(name)) /
           static_cast<double>(total);
  };
  const double cpu = used_after("cpu"), memory = used_after("memory");
  if (cpu < 0 || memory < 0) return 1;
  if (cpu > 1 || memory > 1) return 0;
  return 1.0 - std::abs(cpu - memory) / 2;
}

}  // namespace caldera::sched
