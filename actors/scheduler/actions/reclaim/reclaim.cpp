#include "actors/scheduler/actions/reclaim/reclaim.hpp"

#include <algorithm>
#include <map>

#include "actors/scheduler/core/eviction.hpp"
#include "actors/scheduler/framework/victims.hpp"

namespace caldera::sched {

namespace {

const QueueInfo* queue_of(const Snapshot& s, const JobInfo& job) {
  auto q = s.queues.find(job.queue);
  return q == s.queues.end() ? nullptr : &q->second;
}

// Whether `held`, less `freed`, is still at least `q`'s deserved share of every resource `freed`
// gives back (a pod slot is no share).
bool keeps_share(const QueueInfo& q, const ResourceList& held, const ResourceList& freed) {
  for (const auto& [name, amount] : freed.values) {
    if (amount <= 0 || name == "pods") continue;
    if (held.get(name) - amount < q.deserved.get(name)) return false;
  }
  return true;
}

// Running pods on `node` of other queues that are reclaimable and hold more than their share,
// the lowest priority first.
std::vector<Victim> candidates(const Snapshot& s, const std::string& node,
                               const JobInfo& reclaimer) {
  std::vector<Victim> out;
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    const auto& job = s.jobs[j];
    if (job.queue == reclaimer.queue) continue;
    const QueueInfo* q = queue_of(s, job);
    if (!q || !q->reclaimable || !overused(*q)) continue;
    for (size_t t = 0; t < job.tasks.size(); ++t) {
      const auto& task = job.tasks[t];
      if (task.node == node && task.status == TaskStatus::Running && !task.best_effort())
        out.push_back({j, t});
    }
  }
  std::stable_sort(out.begin(), out.end(), [&](const Victim& a, const Victim& b) {
    return s.jobs[a.job].priority < s.jobs[b.job].priority;
  });
  return out;
}

// A victim may go if its queue keeps its share with it gone, and with it those chosen before it
// on this node. What the queue holds is counted from its pods as they are now: those already
// leaving (evicted by this statement, an earlier one or an earlier session) hold nothing of it.
// The snapshot has every pod of a queue whose pods may be taken (the scheduler adds them all).
bool allow(const Snapshot& s, const Victim& v, const std::vector<Victim>& chosen) {
  const auto& job = s.jobs[v.job];
  const QueueInfo* q = queue_of(s, job);
  if (!q) return false;
  ResourceList held;
  for (const auto& other : s.jobs) {
    if (other.queue != job.queue) continue;
    for (const auto& t : other.tasks)
      if (allocated_status(t.status)) held.add(t.requests);
  }
  ResourceList freed = job.tasks[v.task].requests;
  for (const auto& c : chosen)
    if (s.jobs[c.job].queue == job.queue) freed.add(s.jobs[c.job].tasks[c.task].requests);
  return keeps_share(*q, held, freed);
}

}  // namespace

SessionResult reclaim(Snapshot& s, const SessionOptions& options) {
  SessionResult out;
  if (s.queues.size() < 2) return out;
  evict_for_starving(
      s, EvictionRule{candidates, allow, "Reclaimed", options.gang_protects_victims},
      [](const Snapshot& snap, const JobInfo& job) {
        const QueueInfo* q = queue_of(snap, job);
        return q && !overused(*q);
      },
      out.operations,
      // What a gang pipelines counts as its queue's: its next gang may find it at its share.
      // (What it evicts is Releasing, which allow() counts as gone.)
      [](Snapshot& snap, const std::vector<Operation>& ops) {
        std::map<std::string, const JobInfo*> by_uid;
        for (const auto& job : snap.jobs) by_uid[job.uid] = &job;
        for (const auto& op : ops) {
          auto job = by_uid.find(op.job);
          if (op.kind != OpKind::Pipeline || job == by_uid.end()) continue;
          auto q = snap.queues.find(job->second->queue);
          if (q != snap.queues.end()) q->second.allocated.add(op.requests);
        }
      });
  return out;
}

void reclaim_action(Session& s) {
  if (!s.reclaims() || !add_victims(s)) return;
  record_evictions(s, reclaim(s.snap, s.policy.options));
}

}  // namespace caldera::sched
