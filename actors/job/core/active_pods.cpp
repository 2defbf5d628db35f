#include "actors/job/core/active_pods.hpp"

#include <algorithm>

namespace caldera {

int32_t wanted_active(const BatchJobFields& spec, int32_t active, int32_t succeeded) {
  if (spec.suspend) return 0;
  const int32_t parallelism = std::max(spec.parallelism.value_or(1), 0);
  // A work queue that has seen a success leaves its running pods be and starts no more.
  if (!spec.completions) return succeeded > 0 ? active : parallelism;
  return std::clamp(*spec.completions - succeeded, 0, parallelism);
}

std::vector<int32_t> first_pending_indexes(int32_t completions, const std::set<int32_t>& succeeded,
                                           const std::set<int32_t>& failed,
                                           const std::set<int32_t>& active, int32_t count) {
  std::vector<int32_t> out;
  for (int32_t i = 0; i < completions && static_cast<int32_t>(out.size()) < count; ++i)
    if (!succeeded.count(i) && !failed.count(i) && !active.count(i)) out.push_back(i);
  return out;
}

}  // namespace caldera
