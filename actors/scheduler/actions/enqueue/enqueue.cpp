#include "actors/scheduler/actions/enqueue/enqueue.hpp"

#include "actors/scheduler/core/enqueue.hpp"

namespace caldera::sched {

void enqueue_action(Session& s) {
  for (const auto& [place, key] : s.cache.order) {
    auto& queued = s.cache.queue.at(key);
    auto& r = queued.request;
    if (r.min_count <= 0) continue;  // in already: its stragglers are allocate's
    if (!s.prune(queued) || s.blocked(queued)) continue;
    auto refusal = enqueue_gang(s, queued);
    if (!refusal) continue;
    if (refusal->by_budget) {
      s.refused[key] = std::move(*refusal);  // allocate says why, from a dry run
      continue;
    }
    s.decisions.unplaced[key] =
        Session::gang_message(r, static_cast<size_t>(r.placed) + r.pods.size(), refusal->why);
    s.decisions.not_enqueued.insert(key);
  }
}

std::optional<Refusal> enqueue_gang(Session& s, Cache::Queued& queued) {
  const auto& queue = queued.request.group.queue;
  auto revoke = [&] {
    if (queued.standing.admitted) s.budget.add(queued.minimum);  // later gangs may have its budget
    s.cache.admit(queued, false);
  };
  // A gang the ready nodes could not hold even empty is not admitted (nor kept so when nodes
  // leave): it would keep its minimum from the budget for as long as it waits.
  if (s.policy.overcommit && !s.capacity.fits(queued.minimum)) {
    revoke();
    return Refusal{"not enqueued: its minimum (" + resource_text(queued.minimum) +
                       ") is more than the ready nodes have in all",
                   true};
  }
  auto q = s.snap.queues.find(queue);
  if (q != s.snap.queues.end()) {
    // Counted with the gangs admitted before it in job order only, so that a later gang never
    // keeps an earlier one out. A queue that has come to hold its share (another queue asks now)
    // sends its waiting gangs back to Pending: admitted, they would keep from the others the
    // budget they cannot use. A gang that may preempt in its queue takes its room from the queue.
    const auto& inqueue = s.inqueue[queue];
    auto why = capability_refusal(q->second, inqueue, queued.minimum);
    if (!why) {
      why = share_refusal(q->second, inqueue);
      if (why && s.may_preempt_in_queue(queued)) why.reset();
    }
    if (why) {
      revoke();
      return Refusal{std::move(*why), false};
    }
  }
  // Admitted past the budget, for evictions that could make room: once none can (and none has
  // left room for it), it goes back to the budget's rule, which may send it back to Pending.
  auto may_evict = [&] { return s.may_preempt_in_queue(queued) || s.may_reclaim(queued); };
  if (queued.standing.admitted && queued.standing.exempt) {
    // One at a time, and only while evictions may help: victims are leaving for it, or have
    // left room, or some could still be taken and were within the last few sessions.
    const auto& key = queued.request.job_key;
    if (s.cache.promised.count(key) || s.awaited.count(key)) queued.standing.exempt_idle = 0;
    if (s.exempted || !may_evict() || ++queued.standing.exempt_idle > Cache::kPromiseSessions) {
      queued.standing.exempt_lapsed = queued.standing.exempt_idle > Cache::kPromiseSessions;
      revoke();
    } else {
      s.exempted = true;
    }
  }
  if (!queued.standing.admitted) {
    bool exempt = false;
    if (auto why = s.policy.overcommit ? budget_refusal(s.budget, queued.minimum) : std::nullopt) {
      // One gang a session past the budget: one that evictions could make room for. The
      // preempt and reclaim actions serve one starving gang after another anyway.
      if (s.exempted || queued.standing.exempt_lapsed || !may_evict())
        return Refusal{std::move(*why), true};
      s.exempted = exempt = true;
    }
    s.cache.admit(queued, true);
    queued.standing.exempt = exempt;
    queued.standing.exempt_idle = 0;
    s.budget.subtract(queued.minimum);
  }
  if (q != s.snap.queues.end()) s.inqueue[queue].add(queued.minimum);
  return std::nullopt;
}

}  // namespace caldera::sched
