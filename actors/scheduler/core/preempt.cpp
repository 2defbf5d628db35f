#include "actors/scheduler/core/preempt.hpp"

#include <algorithm>

#include "actors/scheduler/core/predicates.hpp"

namespace caldera::sched {

namespace {

struct Victim {
  size_t job, task;
};

// Running pods on `node` that `preemptor` may evict, the lowest priority first: of jobs of its
// queue (taking from other queues is reclaim's, by their shares) with a lower priority, and only
// pods that free something.
std::vector<Victim> candidates(const Snapshot& s, const std::string& node,
                               const JobInfo& preemptor) {
  std::vector<Victim> out;
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    const auto& job = s.jobs[j];
    if (job.priority >= preemptor.priority || job.queue != preemptor.queue) continue;
    for (size_t t = 0; t < job.tasks.size(); ++t) {
      const auto& task = job.tasks[t];
      if (task.node == node && task.status == TaskStatus::Running && !task.best_effort())
        out.push_back({j, t});
    }
  }
  std::stable_sort(out.begin(), out.end(), [&](const Victim& a, const Victim& b) {
    const auto &ja = s.jobs[a.job], &jb = s.jobs[b.job];
    if (ja.priority != jb.priority) return ja.priority < jb.priority;
    return ja.tasks[a.task].priority < jb.tasks[b.task].priority;
  });
  return out;
}

// Pipelines task `t` of job `j` somewhere, evicting what it must, if some node can take it.
void place(Snapshot& s, Statement& stmt, size_t j, size_t t) {
  const TaskInfo task = s.jobs[j].tasks[t];
  // A node with room once what is leaving has left: no eviction needed.
  for (const auto& [name, node] : s.nodes) {
    if (!fits(node, task, node.future_idle())) continue;
    stmt.pipeline(j, t, name);
    return;
  }
  for (const auto& [name, node] : s.nodes) {
    if (!may_host(node, task)) continue;
    ResourceList room = node.future_idle();
    std::vector<Victim> chosen;
    std::map<size_t, int32_t> taken;  // victims per job so far
    for (const auto& v : candidates(s, name, s.jobs[j])) {
      if (room.fits(task.requests)) break;
      const auto& victim_job = s.jobs[v.job];
      // Gang's preemptable: the victim's job keeps at least minAvailable ready pods.
      if (victim_job.ready_task_num() - taken[v.job] <= victim_job.min_available) continue;
      ++taken[v.job];
      chosen.push_back(v);
      room.add(victim_job.tasks[v.task].requests);
    }
    if (!room.fits(task.requests)) continue;
    for (const auto& v : chosen) stmt.evict(v.job, v.task, "Preempted");
    stmt.pipeline(j, t, name);
    return;
  }
}

}  // namespace

SessionResult preempt(Snapshot& s, const SessionOptions&) {
  SessionResult out;
  for (size_t j : job_order(s)) {
    auto& job = s.jobs[j];
    if (job.phase == PodGroupPhase::Pending || !job.may_preempt || !job_starving(job) ||
        job_valid(job))
      continue;
    // The pods each task's minimum lacks first, so that no eviction is made for a pod the
    // gang could do without.
    const auto pending = pending_in_order(job);
    if (pending.empty()) continue;
    Statement stmt(s);
    for (size_t t : pending) {
      if (job_pipelined(job)) break;
      place(s, stmt, j, t);
    }
    if (job_pipelined(job)) {
      auto ops = stmt.commit();
      out.operations.insert(out.operations.end(), ops.begin(), ops.end());
    } else {
      stmt.discard();
    }
  }
  return out;
}

}  // namespace caldera::sched
