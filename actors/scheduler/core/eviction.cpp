#include "actors/scheduler/core/eviction.hpp"

#include <map>

#include "actors/scheduler/actions/allocate/allocator.hpp"
#include "actors/scheduler/core/predicates.hpp"

namespace caldera::sched {

bool pipeline_with_evictions(Snapshot& s, Statement& stmt, size_t j, size_t t,
                             const EvictionRule& rule) {
  const TaskInfo task = s.jobs[j].tasks[t];
  // A node with room once what is leaving has left: no eviction needed.
  for (const auto& [name, node] : s.nodes) {
    if (!fits(node, task, node.future_idle())) continue;
    stmt.pipeline(j, t, name);
    return true;
  }
  for (const auto& [name, node] : s.nodes) {
    if (!may_host(node, task)) continue;
    ResourceList room = node.future_idle();
    std::vector<Victim> chosen;
    std::map<size_t, int32_t> taken;  // victims per job so far
    for (const auto& v : rule.candidates(s, name, s.jobs[j])) {
      if (room.fits(task.requests)) break;
      const auto& victim_job = s.jobs[v.job];
      // Gang's preemptable: the victim's job keeps at least minAvailable ready pods.
      if (rule.keep_minimum &&
          victim_job.ready_task_num() - taken[v.job] <= victim_job.min_available)
        continue;
      if (rule.allow && !rule.allow(s, v, chosen)) continue;
      ++taken[v.job];
      chosen.push_back(v);
      room.add(victim_job.tasks[v.task].requests);
    }
    if (!room.fits(task.requests)) continue;
    for (const auto& v : chosen) stmt.evict(v.job, v.task, rule.reason);
    stmt.pipeline(j, t, name);
    return true;
  }
  return false;
}

void evict_for_starving(
    Snapshot& s, const EvictionRule& rule,
    const std::function<bool(const Snapshot&, const JobInfo&)>& wants, std::vector<Operation>& out,
    const std::function<void(Snapshot&, const std::vector<Operation>&)>& committed) {
  for (size_t j : job_order(s)) {
    auto& job = s.jobs[j];
    if (job.phase == PodGroupPhase::Pending || !job_starving(job) || job_valid(job)) continue;
    if (!wants(s, job)) continue;
    // The pods each task's minimum lacks first, so that no eviction is made for a pod the
    // gang could do without.
    const auto pending = pending_in_order(job);
    if (pending.empty()) continue;
    Statement stmt(s);
    for (size_t t : pending) {
      if (job_pipelined(job)) break;
      pipeline_with_evictions(s, stmt, j, t, rule);
    }
    if (job_pipelined(job)) {
      auto ops = stmt.commit();
      if (committed) committed(s, ops);
      out.insert(out.end(), ops.begin(), ops.end());
    } else {
      stmt.discard();
    }
  }
}

}  // namespace caldera::sched
