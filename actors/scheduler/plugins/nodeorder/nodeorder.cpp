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
  // The lists are maps in name order: walk the node's allocatable once, with the idle amounts and
  // the pod's asks alongside.
  auto idle = node.idle.values.begin();
  const auto idle_end = node.idle.values.end();
  auto ask = task.requests.values.begin();
  const auto ask_end = task.requests.values.end();
  double free_sum = 0, cpu_free = 0, memory_free = 0, cpu_used = -1, memory_used = -1;
  int counted = 0, fallback = 0;
  for (const auto& [name, total] : node.allocatable.values) {
    while (idle != idle_end && idle->first < name) ++idle;
    while (ask != ask_end && ask->first < name) ++ask;
    if (total <= 0 || name == "pods") continue;
    const MilliValue free = idle != idle_end && idle->first == name ? idle->second : 0;
    const MilliValue asked = ask != ask_end && ask->first == name ? ask->second : 0;
    const double t = static_cast<double>(total);
    if (asked > 0) {
      free_sum += static_cast<double>(free - asked) / t;
      ++counted;
    }
    if (name == "cpu") {
      cpu_free = static_cast<double>(free) / t;
      cpu_used = static_cast<double>(total - free + asked) / t;
      ++fallback;
    } else if (name == "memory") {
      memory_free = static_cast<double>(free) / t;
      memory_used = static_cast<double>(total - free + asked) / t;
      ++fallback;
    }
  }
  // A pod that asks nothing the node has is scored by the node's cpu and memory.
  const double least =
      counted > 0 ? free_sum / counted : (fallback > 0 ? (cpu_free + memory_free) / fallback : 0);
  const double most = counted > 0 || fallback > 0 ? 1.0 - least : 0;
  double balanced = 1;
  if (cpu_used >= 0 && memory_used >= 0)
    balanced = cpu_used > 1 || memory_used > 1 ? 0 : 1.0 - std::abs(cpu_used - memory_used) / 2;
  return w.least_requested * least + w.most_requested * most + w.balanced * balanced;
}

}  // namespace caldera::sched
