#include "messages/admission/gang_minimum.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "messages/admission/admission.hpp"

namespace caldera {

ResourceList gang_minimum(const std::vector<AskGroup>& groups, int32_t min_count) {
  std::set<std::string> names;
  int32_t required = 0;
  for (const auto& g : groups) {
    required += std::clamp(g.required, 0, g.count);
    for (const auto& [k, v] : g.requests.values) names.insert(k);
  }
  ResourceList out;
  for (const auto& name : names) {
    // Each resource on its own, cheapest pods first: a bound that holds whichever pods are chosen.
    std::vector<std::pair<MilliValue, int32_t>> optional;  // (amount, pods)
    MilliValue sum = 0;
    for (const auto& g : groups) {
      const auto must = std::clamp(g.required, 0, g.count);
      sum += g.requests.get(name) * must;
      if (g.count > must) optional.emplace_back(g.requests.get(name), g.count - must);
    }
    std::sort(optional.begin(), optional.end());
    int32_t left = std::max(0, min_count - required);
    for (const auto& [amount, pods] : optional) {
      if (left == 0) break;
      const auto take = std::min(left, pods);
      sum += amount * take;
      left -= take;
    }
    if (sum > 0) out.values[name] = sum;
  }
  return out;
}

ResourceList first_gang_minimum(const JobSpec& spec) {
  // A task that depends on others starts after them, so it is not in the first gang.
  std::vector<const TaskSpec*> first;
  int32_t replicas = 0, task_min_total = 0;
  for (const auto& t : spec.tasks) {
    task_min_total += t.min_available.value_or(t.replicas);
    if (t.depends_on && !t.depends_on->names.empty()) continue;
    first.push_back(&t);
    replicas += t.replicas;
  }
  // As pod_group_request: the task minimums count only when minAvailable covers their sum.
  const bool task_mins = spec.effective_min_available() >= task_min_total;
  std::vector<AskGroup> groups;
  for (const auto* t : first)
    groups.push_back({pod_resource_request(*t), t->replicas,
                      task_mins ? t->min_available.value_or(t->replicas) : 0});
  return gang_minimum(groups, std::min(spec.effective_min_available(), replicas));
}

}  // namespace caldera
