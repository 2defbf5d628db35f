#include "actors/scheduler/core/predicates.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace caldera::sched {

std::vector<std::string> refusals(const NodeState& node, const TaskInfo& task,
                                  const ResourceList& room) {
  std::vector<std::string> out;
  if (!node.ready) out.emplace_back("NotReady");
  for (const auto& [key, value] : task.node_selector) {
    auto it = node.labels.find(key);
    if (it == node.labels.end() || it->second != value) {
      out.emplace_back("node selector does not match");
      break;
    }
  }
  if (auto taint = untolerated(node.taints, task.tolerations))
    out.push_back("untolerated taint " + taint_text(*taint));
  for (const auto& [name, amount] : task.requests.values) {
    if (amount <= room.get(name)) continue;
    out.push_back(name == "pods" ? "too many pods" : "insufficient " + name);
  }
  return out;
}

std::vector<std::string> refusals(const NodeState& node, const TaskInfo& task) {
  return refusals(node, task, node.idle);
}

bool may_host(const NodeState& node, const TaskInfo& task) {
  if (!node.ready) return false;
  for (const auto& [key, value] : task.node_selector) {
    auto it = node.labels.find(key);
    if (it == node.labels.end() || it->second != value) return false;
  }
  return node.taints.empty() || !untolerated(node.taints, task.tolerations);
}

bool fits(const NodeState& node, const TaskInfo& task, const ResourceList& room) {
  return room.fits(task.requests) && may_host(node, task);
}

bool fits(const NodeState& node, const TaskInfo& task) {
  return fits(node, task, node.idle);
}

void FitErrors::add(const std::vector<std::string>& reasons) {
  ++nodes_;
  for (const auto& r : reasons) ++count_[r];
}

std::string FitErrors::message() const {
  std::vector<std::pair<std::string, int>> sorted(count_.begin(), count_.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [reason, n] : sorted)
    out += fmt::format("{}{} node{}: {}", out.empty() ? "" : "; ", n, n == 1 ? "" : "s", reason);
  return out;
}

}  // namespace caldera::sched
