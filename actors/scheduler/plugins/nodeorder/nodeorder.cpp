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
  // One pass over each (small) list, without a lookup by name: this runs for every node a pod's
  // search scores.
  struct CpuMemory {
    MilliValue cpu = 0, memory = 0;
  };
  auto read = [](const ResourceList& r) {
    CpuMemory out;
    for (const auto& [name, amount] : r.values) {
      if (name == "cpu")
        out.cpu = amount;
      else if (name == "memory")
        out.memory = amount;
    }
    return out;
  };
  const auto total = read(node.allocatable), idle = read(node.idle), asked = read(task.requests);
  if (total.cpu <= 0 || total.memory <= 0) return 1;
  const double cpu = static_cast<double>(total.cpu - idle.cpu + asked.cpu) / total.cpu;
  const double memory =
      static_cast<double>(total.memory - idle.memory + asked.memory) / total.memory;
  if (cpu > 1 || memory > 1) return 0;
  return 1.0 - std::abs(cpu - memory) / 2;
}

double nodeorder_score(const NodeOrderWeights& w, const NodeState& node, const TaskInfo& task) {
  // Lookups by the pod's own keys (a few), and four for balance's cpu and memory, by keys made
  // once: a map walk compares names at every step, and this runs for every node a search scores.
  static const std::string kCpu = "cpu", kMemory = "memory";
  double least = 0;
  if (w.least_requested != 0 || w.most_requested != 0) {
    least = least_requested(node, task);
  }
  double balanced = 1;
  if (w.balanced != 0) {
    const MilliValue cpu_total = node.allocatable.get(kCpu),
                     memory_total = node.allocatable.get(kMemory);
    if (cpu_total > 0 && memory_total > 0) {
      const double cpu =
          static_cast<double>(cpu_total - node.idle.get(kCpu) + task.requests.get(kCpu)) /
          static_cast<double>(cpu_total);
      const double memory =
          static_cast<double>(memory_total - node.idle.get(kMemory) + task.requests.get(kMemory)) /
          static_cast<double>(memory_total);
      balanced = cpu > 1 || memory > 1 ? 0 : 1.0 - std::abs(cpu - memory) / 2;
    }
  }
  return w.least_requested * least + w.most_requested * (1.0 - least) + w.balanced * balanced;
}

}  // namespace caldera::sched
