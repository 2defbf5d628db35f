#include "actors/job/core/pod_group.hpp"

#include <algorithm>
#include <utility>

#include "actors/job/core/pod_template.hpp"

namespace caldera {

GangRequest pod_group_request(const JobModel& m) {
  const auto& spec = m.job.spec;
  GangRequest r;
  r.job_key = m.key();
  int32_t bound = 0, waiting = 0;
  std::map<std::string, int32_t> bound_of, waiting_of;
  std::map<std::string, ResourceList> request_of;
  for (const auto& t : spec.tasks) request_of[t.name] = pod_resource_request(t);
  auto is_waiting = [](const Pod& p) {
    return p.node.empty() && p.phase == PodPhase::Pending && !p.out_of_sync;
  };
  for (const auto& [name, p] : std::as_const(m.pods)) {
    if (is_discarded(p)) continue;
    if (!p.node.empty()) {
      ++bound;
      ++bound_of[p.task_name];
    } else if (is_waiting(p) && request_of.count(p.task_name)) {
      ++waiting;
      ++waiting_of[p.task_name];
    }
  }
  r.min_count = std::clamp(spec.effective_min_available() - bound, 0, waiting);

  int32_t task_min_total = 0;
  for (const auto& t : spec.tasks) task_min_total += t.min_available.value_or(t.replicas);
  if (spec.effective_min_available() >= task_min_total) {
    for (const auto& t : spec.tasks) {
      auto need = std::clamp(t.min_available.value_or(t.replicas) - bound_of[t.name], 0,
                             waiting_of[t.name]);
      if (need > 0) r.task_min[t.name] = need;
    }
  }

  // The asks: every pod the gang needs at once, then more up to the cap; the rest are asked for
  // once these are bound.
  int32_t quota_total = 0;
  for (const auto& [task, need] : r.task_min) quota_total += need;
  const int32_t cap = std::max(kMaxPodAsks, r.min_count);
  int32_t extras = std::max(0, cap - quota_total);
  std::map<std::string, int32_t> taken_of;
  for (const auto& [name, p] : std::as_const(m.pods)) {
    if (is_discarded(p) || !is_waiting(p)) continue;
    auto req = request_of.find(p.task_name);
    if (req == request_of.end()) continue;
    auto quota = r.task_min.find(p.task_name);
    auto& taken = taken_of[p.task_name];
    if (quota != r.task_min.end() && taken < quota->second) {
      ++taken;
    } else if (extras > 0) {
      --extras;
    } else {
      continue;
    }
    r.pods.push_back({p.uid, req->second, p.task_name});
  }
  return r;
}

}  // namespace caldera
