#include "actors/scheduler/framework/victims.hpp"

#include <map>
#include <set>

namespace caldera::sched {

bool add_victims(Session& s) {
  if (s.victims_added) return true;
  auto& cache = s.cache;
  auto& snap = s.snap;
  // Without a class every job's priority is 0, and with one queue there are no shares to even
  // out: no one may take from anyone.
  const bool preempting = s.preempts(), reclaiming = s.reclaims();
  if (!preempting && !reclaiming) return false;
  // Per queue, the highest priority of a gang that could preempt there; the queues below their
  // share that have a gang waiting.
  std::map<std::string, int32_t> top;
  std::set<std::string> short_queues;
  for (const auto& job : snap.jobs) {
    if (job.min_available <= 0 || !job_starving(job)) continue;
    auto q = snap.queues.find(job.queue);
    if (preempting && job.may_preempt && (q == snap.queues.end() || !above_share(q->second))) {
      auto [t, fresh] = top.try_emplace(job.queue, job.priority);
      if (!fresh) t->second = std::max(t->second, job.priority);
    }
    if (reclaiming && q != snap.queues.end() && !overused(q->second))
      short_queues.insert(job.queue);
  }
  // Jobs they could take from: a walk over the jobs, not their pods, in the common case of none.
  auto victim_job = [&](const std::string& key, const Cache::Group& g) {
    if (g.held <= 0) return false;
    if (s.policy.conformance && is_critical(key, g.info.priority_class)) return false;
    auto t = top.find(g.info.queue);
    if (t != top.end() && g.priority < t->second) return true;
    if (short_queues.empty() || short_queues.count(g.info.queue)) return false;
    auto q = snap.queues.find(g.info.queue);
    return q != snap.queues.end() && q->second.reclaimable && overused(q->second);
  };
  bool any = false;
  for (const auto& [key, g] : cache.groups) any = any || victim_job(key, g);
  if (!any) return false;
  s.victims_added = true;

  // What is leaving, and what has left for a preemptor, is room a pipelined pod may count on.
  for (auto& [name, node] : snap.nodes) {
    auto r = cache.releasing_by_node.find(name);
    if (r != cache.releasing_by_node.end()) node.releasing = r->second;
  }
  for (const auto& [job, promise] : cache.promised)
    for (const auto& [name, amount] : promise.by_node)
      if (auto node = snap.nodes.find(name); node != snap.nodes.end())
        node->second.releasing.add(amount);
  std::map<std::string, size_t> index;  // job key -> its place in snap.jobs
  std::set<std::string> in_snapshot;    // pods the session has as tasks already
  for (size_t i = 0; i < snap.jobs.size(); ++i) {
    index[snap.jobs[i].uid] = i;
    for (const auto& t : snap.jobs[i].tasks)
      if (!t.uid.empty()) in_snapshot.insert(t.uid);
  }
  std::set<size_t> cleared;  // queued jobs whose stand-ins for bound pods were replaced
  for (const auto& [uid, h] : cache.held) {
    // A pod bound this session is its job's task already (Allocated: it counts as ready, and is
    // not running yet, so no victim).
    if (in_snapshot.count(uid)) continue;
    auto g = cache.groups.find(h.job_key);
    if (g == cache.groups.end() || !victim_job(g->first, g->second)) continue;
    auto at = index.find(h.job_key);
    if (at == index.end()) {
      JobInfo job;
      job.uid = h.job_key;
      job.queue = g->second.info.queue;
      job.priority = g->second.priority;
      job.phase = PodGroupPhase::Running;
      snap.jobs.push_back(std::move(job));
      at = index.emplace(h.job_key, snap.jobs.size() - 1).first;
    }
    auto& job = snap.jobs[at->second];
    if (cleared.insert(at->second).second) {
      // Its real pods, not the stand-ins of a queued request; and its gang's whole minimum,
      // which a victim is never taken below.
      std::erase_if(job.tasks, [](const TaskInfo& t) { return t.uid.empty(); });
      job.min_available = g->second.info.min_available;
    }
    TaskInfo task;
    task.uid = uid;
    task.requests = h.requests;
    task.node = h.node;
    task.status = cache.releasing.count(uid) ? TaskStatus::Releasing : TaskStatus::Running;
    job.tasks.push_back(std::move(task));
  }
  return true;
}

void record_evictions(Session& s, const SessionResult& result) {
  auto& cache = s.cache;
  auto& evictions = s.decisions.evictions;
  // A gang's statement records its evictions, then its pipelines: the next Pipeline names the
  // preemptor of the evictions before it.
  const size_t start = evictions.size();
  size_t first = start;
  for (const auto& op : result.operations) {
    if (op.kind == OpKind::Pipeline) {
      for (size_t i = first; i < evictions.size(); ++i) evictions[i].preemptor = op.job;
      first = evictions.size();
      continue;
    }
    if (op.kind != OpKind::Evict) continue;
    auto h = cache.held.find(op.task_uid);
    if (h == cache.held.end() || cache.releasing.count(op.task_uid)) continue;
    cache.releasing[op.task_uid] = {h->second.node, ""};
    cache.releasing_by_node[h->second.node].add(h->second.requests);
    // As Volcano's proportion deallocates at the eviction: what leaves is no longer its queue's,
    // so that a gang of the same queue can be bound into it.
    cache.queue_allocated[h->second.queue].subtract(h->second.requests);
    evictions.push_back({h->second.job_key, op.task_uid, h->second.node, "", op.reason});
  }
  for (size_t i = start; i < evictions.size(); ++i)
    cache.releasing[evictions[i].uid].preemptor = evictions[i].preemptor;
}

}  // namespace caldera::sched
