#include "actors/scheduler/core/gang_fit.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

namespace caldera {

ResourceList gang_minimum(const GangRequest& r) {
  std::map<std::string, int32_t> required_left = r.task_min;
  std::vector<AskGroup> groups;
  groups.reserve(r.pods.size());
  for (const auto& a : r.pods) {
    auto& left = required_left[a.task];
    groups.push_back({a.requests, 1, left > 0 ? 1 : 0});
    if (left > 0) --left;
  }
  return gang_minimum(groups, r.min_count);
}

std::string capacity_hint(const GangRequest& r, const ResourceList& total) {
  const auto need = gang_minimum(r);
  std::string short_of;
  for (const auto& [name, amount] : need.values)
    if (amount > total.get(name))
      short_of +=
          fmt::format("{}{} {}, the ready nodes have {} in all", short_of.empty() ? "" : "; ", name,
                      format_quantity(amount), format_quantity(total.get(name)));
  if (short_of.empty()) return "";
  const int32_t want = r.placed + r.min_count;
  return r.placed == 0
             ? fmt::format("minAvailable {} needs {}", want, short_of)
             : fmt::format("the other {} of minAvailable {} need {}", r.min_count, want, short_of);
}

}  // namespace caldera
