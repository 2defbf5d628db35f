#include "actors/scheduler/actions/allocate/allocate.hpp"

#include <algorithm>
#include <set>

namespace caldera::sched {

namespace {

// Gangs refused for want of budget that a session dry-runs to say why they would not fit.
constexpr int kDryRuns = 16;
// Queued requests a session still looks at once no pod slot is left, for the preempt and
// reclaim actions (the highest priority first).
constexpr int kSlotlessCandidates = 8;
// ... and how many entries it passes over for them (stragglers, refused gangs) at most.
constexpr int kSlotlessVisits = 256;

// The gang's pods as a session's job: the pods asked, those bound standing in as running ones.
JobInfo job_of(Session& s, const Cache::Queued& queued, const Cache::Place& place) {
  const auto& r = queued.request;
  JobInfo job;
  job.uid = r.job_key;
  job.created_ms = place.created_ms;
  job.priority = -place.neg_priority;
  job.may_preempt = s.cache.may_preempt(r.group);
  job.queue = r.group.queue;
  job.phase = PodGroupPhase::Inqueue;
  // The job actor has counted what is bound and applied Volcano's task rule: what is asked is
  // the rest of the gang. Its bound pods stand in as running ones (their room is taken already)
  // while the gang is not in, so that the message counts the whole gang.
  if (r.min_count > 0) {
    job.min_available = r.placed + r.min_count;
    job.tasks.resize(static_cast<size_t>(r.placed));
    for (auto& t : job.tasks) t.status = TaskStatus::Running;
  }
  job.task_min_available = r.task_min;
  job.partition_min = r.partition_min;
  // Stragglers past the free pod slots cannot bind this session: a job of many replicas costs a
  // session what can start, not its whole ask. Pods keep the order asked in (no names here), a
  // task's own class first (Volcano's task priority).
  MilliValue slots_left = s.slots;
  std::set<std::pair<std::string, int32_t>> cut;  // partitions not all asked this session
  for (const auto& a : r.pods) {
    if (a.partition >= 0 && cut.count({a.task, a.partition})) continue;
    if (r.min_count == 0 && !queued.slot_free && (slots_left -= a.requests.get("pods")) < 0) {
      if (a.partition < 0) break;
      cut.insert({a.task, a.partition});  // the rest of this one goes in no part
      continue;
    }
    const int32_t priority =
        a.priority_class.empty() ? job.priority : s.cache.priority_of({"", a.priority_class, 0});
    job.tasks.push_back({a.uid, "", a.task, priority, a.requests, TaskStatus::Pending, "",
                         a.node_selector, a.partition});
  }
  if (!cut.empty())
    std::erase_if(job.tasks, [&](const TaskInfo& t) {
      return t.partition >= 0 && cut.count({t.task, t.partition}) > 0;
    });
  return job;
}

}  // namespace

void record_bound(Session& s, Cache::Queued& queued, size_t first_op) {
  auto& r = queued.request;
  std::set<std::string> bound;
  ResourceList beyond;  // what it bound past its admitted minimum: not in the budget yet
  for (size_t i = first_op; i < s.result.operations.size(); ++i) {
    const auto& op = s.result.operations[i];
    if (op.kind != OpKind::Allocate) continue;
    s.cache.reserve(op.job, op.task_uid, op.node, op.requests);
    s.decisions.bindings.push_back(
        {op.job, op.task_uid, op.node, s.cache.nodes[op.node].host_ip, op.requests});
    s.slots -= op.requests.get("pods");
    bound.insert(op.task_uid);
    beyond.add(op.requests);
  }
  if (bound.empty()) return;
  beyond.subtract(queued.minimum);
  for (auto& [name, amount] : beyond.values) amount = std::max<MilliValue>(0, amount);
  s.budget.subtract(beyond);
  // Its minimum is in: what it holds counts in its queue's allocated now, not as admitted.
  if (auto q = s.inqueue.find(r.group.queue); q != s.inqueue.end())
    q->second.subtract(queued.minimum);
  s.cache.admit(queued, false);
  std::erase_if(r.pods, [&](const PodAsk& a) { return bound.count(a.uid) > 0; });
  (r.pods.empty() ? s.done : s.in).push_back(r.job_key);
}

void allocate_action(Session& s) {
  auto& cache = s.cache;
  // Evictions may make room even when no pod slot is left: then the first few gangs past that
  // point still go to the preempt and reclaim actions, unallocated.
  const bool evictions = (s.policy.has("preempt") && !cache.classes.empty()) ||
                         (s.policy.has("reclaim") && cache.queues_bind && cache.queues.size() > 1);
  const bool enqueue = s.policy.has("enqueue");
  int slotless_candidates = 0, slotless_visits = 0, dry_runs = 0;
  for (const auto& [place, key] : cache.order) {
    // Every waiting pod needs a slot and none is left: the rest of the queue waits as it is (a
    // long queue, long exactly when the cluster is full, costs nothing per release).
    const bool no_slot = s.slots <= 0 && cache.slot_free_queued == 0;
    if (no_slot && (!evictions || slotless_candidates >= kSlotlessCandidates ||
                    ++slotless_visits > kSlotlessVisits))
      break;
    auto& queued = cache.queue.at(key);
    auto& r = queued.request;
    if (no_slot && r.min_count == 0) continue;  // stragglers take no room by eviction
    if (!s.prune(queued)) {
      s.done.push_back(key);
      continue;
    }
    if (s.blocked(queued)) continue;
    // Only a gang the enqueue action admitted gets nodes; without that action every gang is
    // admitted here (as Volcano's allocate does when enqueue is not configured).
    const Refusal* refused = nullptr;
    if (r.min_count > 0 && !queued.standing.admitted) {
      if (auto it = s.refused.find(key); it != s.refused.end())
        refused = &it->second;
      else if (!enqueue)
        cache.admit(queued, true);
      else
        continue;  // its queue keeps it out: told so already
    }
    s.snap.jobs.push_back(job_of(s, queued, place));
    const size_t j = s.snap.jobs.size() - 1;
    if (no_slot) {
      if (!refused) {
        ++slotless_candidates;  // it waits for a slot, or for its victims
        continue;
      }
      s.snap.jobs.pop_back();  // a Pending pod group takes nothing by eviction
      s.decisions.unplaced[key] =
          Session::gang_message(r, static_cast<size_t>(r.placed) + r.pods.size(), refused->why);
      s.decisions.not_enqueued.insert(key);
      continue;
    }
    if (refused) {
      // Not admitted for want of budget: a dry run says whether it would fit, and why not per
      // node (for the first few such gangs: each costs a search of the nodes, every session).
      // It stays out of the snapshot: a Pending pod group neither preempts nor reclaims.
      if (dry_runs++ < kDryRuns) s.allocator->allocate_job(j, s.result, {.commit = false});
      auto cond = s.result.conditions.find(key);
      std::string why;
      if (cond != s.result.conditions.end() && !cond->second.scheduled) {
        why = cond->second.message;
        if (auto hint = s.hint(r); !hint.empty()) why += "; " + hint;
      } else {
        why = Session::gang_message(r, s.snap.jobs.back().tasks.size(), refused->why);
      }
      s.snap.jobs.pop_back();
      s.decisions.unplaced[key] = std::move(why);
      s.decisions.not_enqueued.insert(key);
      continue;
    }
    const size_t first_op = s.result.operations.size();
    // Its own promised room is idle to it, and only to it.
    auto promise = cache.promised.find(key);
    auto with_promise = [&](bool give) {
      if (promise == cache.promised.end()) return;
      for (const auto& [name, amount] : promise->second.by_node) {
        auto node = s.snap.nodes.find(name);
        if (node == s.snap.nodes.end()) continue;
        give ? node->second.idle.add(amount) : node->second.idle.subtract(amount);
      }
    };
    with_promise(true);
    s.allocator->allocate_job(j, s.result, {.cached = promise == cache.promised.end()});
    if (s.result.operations.size() > first_op && promise != cache.promised.end())
      cache.promised.erase(promise);  // bound: what it was promised is its pods' now
    else
      with_promise(false);
    if (s.result.operations.size() > first_op) {
      record_bound(s, queued, first_op);
      continue;
    }
    // Only a gang whose minimum is not in yet is reported: stragglers of a running gang wait
    // quietly.
    auto cond = s.result.conditions.find(key);
    if (r.min_count == 0 || cond == s.result.conditions.end() || cond->second.scheduled) continue;
    auto why = cond->second.message;
    if (auto hint = s.hint(r); !hint.empty()) why += "; " + hint;
    s.decisions.unplaced[key] = std::move(why);
  }
}

}  // namespace caldera::sched
