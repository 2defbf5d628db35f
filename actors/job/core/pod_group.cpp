#include "actors/job/core/pod_group.hpp"

#include <algorithm>

#include "actors/job/core/pod_template.hpp"

namespace caldera {

GangRequest pod_group_request(const JobModel& m) {
  const auto& spec = m.job.spec;
  GangRequest r;
  r.job_key = m.key();
  int32_t bound = 0;
  std::map<std::string, int32_t> bound_of, waiting_of;
  for (const auto& [name, p] : m.pods) {
    if (is_discarded(p)) continue;
    if (!p.node.empty()) {
      ++bound;
      ++bound_of[p.task_name];
      continue;
    }
    if (p.phase != PodPhase::Pending || p.out_of_sync) continue;
    for (const auto& t : spec.tasks)
      if (t.name == p.task_name) {
        r.pods.push_back({p.uid, pod_resource_request(t), t.name});
        ++waiting_of[t.name];
      }
  }
  const auto waiting = static_cast<int32_t>(r.pods.size());
  r.min_count = std::clamp(spec.effective_min_available() - bound, 0, waiting);

  int32_t task_min_total = 0;
  for (const auto& t : spec.tasks) task_min_total += t.min_available.value_or(t.replicas);
  if (spec.effective_min_available() < task_min_total) return r;
  for (const auto& t : spec.tasks) {
    auto need =
        std::clamp(t.min_available.value_or(t.replicas) - bound_of[t.name], 0, waiting_of[t.name]);
    if (need > 0) r.task_min[t.name] = need;
  }
  return r;
}

}  // namespace caldera
