#include "actors/scheduler/plugins/drf/drf.hpp"

#include <algorithm>

namespace caldera::sched {

double dominant_share(const ResourceList& allocated, const ResourceList& total) {
  double share = 0;
  for (const auto& [name, amount] : total.values) {
    if (name == "pods" || amount <= 0) continue;
    share = std::max(share, static_cast<double>(allocated.get(name)) / static_cast<double>(amount));
  }
  return share;
}

}  // namespace caldera::sched
