#include "actors/scheduler/actions/backfill/backfill.hpp"

#include "actors/scheduler/actions/allocate/allocate.hpp"
#include "actors/scheduler/core/predicates.hpp"

namespace caldera::sched {

void backfill_action(Session& s) {
  if (s.cache.slot_free_queued == 0 || s.snap.nodes.empty()) return;  // no pod asks nothing
  auto next = s.snap.nodes.begin();
  for (size_t j = 0; j < s.snap.jobs.size(); ++j) {
    auto& job = s.snap.jobs[j];
    auto queued = s.cache.queue.find(job.uid);
    if (queued == s.cache.queue.end() || !job_ready(job)) continue;
    const size_t first_op = s.result.operations.size();
    Statement stmt(s.snap);
    for (size_t t = 0; t < job.tasks.size(); ++t) {
      const auto& task = job.tasks[t];
      // (A job may be in the snapshot more than once: its gang, then its turns.)
      if (task.status != TaskStatus::Pending || !task.best_effort() || s.cache.held.count(task.uid))
        continue;
      for (size_t seen = 0; seen < s.snap.nodes.size(); ++seen) {
        const auto& node = next->second;
        if (++next == s.snap.nodes.end()) next = s.snap.nodes.begin();
        if (!may_host(node, task)) continue;
        stmt.allocate(j, t, node.name);
        break;
      }
    }
    auto ops = stmt.commit();
    s.result.operations.insert(s.result.operations.end(), ops.begin(), ops.end());
    record_bound(s, queued->second, first_op);
  }
}

}  // namespace caldera::sched
