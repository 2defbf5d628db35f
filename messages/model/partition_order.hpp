// Puts each task's partitioned pods in partition order (pods come in name order, where w-10 is
// before w-2), in the places that task's partitioned pods hold: a task's first pods are then its
// first partitions, each one after another.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace caldera {

// `task_of(item)` names an item's task, `partition_of(item)` its partition (-1: none). Stable.
template <class T, class TaskOf, class PartitionOf>
void order_partitions(std::vector<T>& items, TaskOf&& task_of, PartitionOf&& partition_of) {
  std::map<std::string, std::vector<size_t>> places;  // task -> positions of its partitioned pods
  for (size_t at = 0; at < items.size(); ++at)
    if (partition_of(items[at]) >= 0) places[task_of(items[at])].push_back(at);
  for (const auto& [task, at] : places) {
    std::vector<T> pods;
    pods.reserve(at.size());
    for (size_t i : at) pods.push_back(std::move(items[i]));
    std::stable_sort(pods.begin(), pods.end(),
                     [&](const T& a, const T& b) { return partition_of(a) < partition_of(b); });
    for (size_t i = 0; i < at.size(); ++i) items[at[i]] = std::move(pods[i]);
  }
}

}  // namespace caldera
