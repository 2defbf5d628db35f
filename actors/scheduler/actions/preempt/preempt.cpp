#include "actors/scheduler/actions/preempt/preempt.hpp"

#include <algorithm>

#include "actors/scheduler/core/eviction.hpp"
#include "actors/scheduler/framework/victims.hpp"

namespace caldera::sched {

namespace {

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

}  // namespace

SessionResult preempt(Snapshot& s, const SessionOptions& options) {
  SessionResult out;
  evict_for_starving(
      s, EvictionRule{candidates, {}, "Preempted", options.gang_protects_victims},
      [](const Snapshot& snap, const JobInfo& job) {
        auto q = snap.queues.find(job.queue);
        return job.may_preempt && (q == snap.queues.end() || !above_share(q->second));
      },
      out.operations);
  return out;
}

void preempt_action(Session& s) {
  if (!s.preempts() || !add_victims(s)) return;
  record_evictions(s, preempt(s.snap, s.policy.options));
}

}  // namespace caldera::sched
