#include "actors/scheduler/actions/allocate/allocate.hpp"

#include <algorithm>
#include <set>

#include "actors/scheduler/plugins/drf/drf.hpp"

namespace caldera::sched {

namespace {

using NodeSelector = std::map<std::string, std::string>;

// Gangs refused for want of budget that a session dry-runs to say why they would not fit.
constexpr int kDryRuns = 16;
// Queued requests a session still looks at once no pod slot is left, for the preempt and
// reclaim actions (the highest priority first).
constexpr int kSlotlessCandidates = 8;
// ... and how many entries it passes over for them (stragglers, refused gangs) at most.
constexpr int kSlotlessVisits = 256;

// A pod asked as a session's pending task: its task's own class first (Volcano's task
// priority), its node selector and tolerations only with the predicates plugin.
TaskInfo pending_task(const Session& s, const PodAsk& a, int32_t job_priority) {
  const int32_t priority =
      a.priority_class.empty() ? job_priority : s.cache.priority_of({"", a.priority_class, 0});
  return {a.uid,       "",
          a.task,      priority,
          a.requests,  TaskStatus::Pending,
          "",          s.policy.predicates ? a.node_selector : NodeSelector{},
          a.partition, s.policy.predicates ? a.tolerations : std::vector<Toleration>{}};
}

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
    job.tasks.push_back(pending_task(s, a, job.priority));
  }
  if (!cut.empty())
    std::erase_if(job.tasks, [&](const TaskInfo& t) {
      return t.partition >= 0 && cut.count({t.task, t.partition}) > 0;
    });
  return job;
}

// One pod of the job, or all of one partition of it: what a turn places together.
std::vector<PodAsk> next_unit(const GangRequest& r, size_t& from) {
  std::vector<PodAsk> unit{r.pods[from]};
  const auto& first = r.pods[from++];
  if (first.partition < 0) return unit;
  for (size_t i = from; i < r.pods.size(); ++i)
    if (r.pods[i].task == first.task && r.pods[i].partition == first.partition)
      unit.push_back(r.pods[i]);
  return unit;
}

// A session's job for the pods of `r` from `units` on: they go one by one, in the order asked.
JobInfo straggler_job(Session& s, const GangRequest& r, const std::vector<PodAsk>& pods) {
  JobInfo job;
  job.uid = r.job_key;
  job.queue = r.group.queue;
  job.priority = s.cache.priority_of(r.group);
  job.phase = PodGroupPhase::Inqueue;
  for (const auto& a : pods) {
    job.tasks.push_back(pending_task(s, a, job.priority));
  }
  return job;
}

// Volcano's allocate with the drf plugin's job order: of the running jobs with pods waiting (and
// the gangs that came in this session), the one whose pods hold the least dominant share places
// its next pod (or partition), then the order is looked at again. A job that finds no room for
// its next pod has had its turns this session.
void take_turns(Session& s, const std::vector<std::string>& keys) {
  struct Turn {
    std::string key;
    size_t next = 0;  // its next pod, in its request
    ResourceList allocated;
    double share = 0;
    std::set<std::pair<std::string, int32_t>> partitions;  // tried whole already
  };
  std::vector<Turn> turns;
  for (const auto& key : keys) {
    auto& queued = s.cache.queue.at(key);
    if (!s.prune(queued)) {
      s.done.push_back(key);
      continue;
    }
    if (s.blocked(queued)) continue;
    Turn t{key, 0, {}, 0, {}};
    if (auto g = s.cache.groups.find(key); g != s.cache.groups.end())
      t.allocated = g->second.allocated;
    t.share = dominant_share(t.allocated, s.capacity);
    turns.push_back(std::move(t));
  }
  const size_t first_op = s.result.operations.size();
  std::vector<std::string> took;  // the jobs that placed something, to record once
  if (turns.size() == 1) {
    // Alone, it takes what fits, in one go (its pods past the free slots left out).
    auto rest = s.cache.queue.at(turns[0].key);
    rest.request.min_count = 0;
    rest.request.task_min.clear();
    rest.request.partition_min.clear();
    s.snap.jobs.push_back(job_of(s, rest, rest.place));
    s.allocator->allocate_job(s.snap.jobs.size() - 1, s.result);
    took.push_back(turns[0].key);
    turns.clear();
  }
  MilliValue slots = s.slots;
  while (!turns.empty() && (slots > 0 || s.cache.slot_free_queued > 0)) {
    auto turn = std::min_element(turns.begin(), turns.end(),
                                 [](const Turn& a, const Turn& b) { return a.share < b.share; });
    const auto& r = s.cache.queue.at(turn->key).request;
    if (turn->next >= r.pods.size()) {
      turns.erase(turn);
      continue;
    }
    if (const auto& a = r.pods[turn->next];
        a.partition >= 0 && !turn->partitions.insert({a.task, a.partition}).second) {
      ++turn->next;  // a member of a partition tried whole before
      continue;
    }
    const auto unit = next_unit(r, turn->next);
    s.snap.jobs.push_back(straggler_job(s, r, unit));
    const size_t before = s.result.operations.size();
    s.allocator->allocate_job(s.snap.jobs.size() - 1, s.result);
    if (s.result.operations.size() == before) {
      // A pod that asks for nothing is backfill's (its job in the snapshot shows it there);
      // anything else that fits nowhere now ends the job's turns this session.
      const bool best_effort = std::all_of(unit.begin(), unit.end(), [](const PodAsk& a) {
        return std::all_of(a.requests.values.begin(), a.requests.values.end(),
                           [](const auto& kv) { return kv.second <= 0; });
      });
      if (!best_effort) turns.erase(turn);
      continue;
    }
    took.push_back(turn->key);
    for (const auto& a : unit) {
      turn->allocated.add(a.requests);
      slots -= a.requests.get("pods");
    }
    turn->share = dominant_share(turn->allocated, s.capacity);
  }
  // Each job's bindings once: its request loses them all at once.
  std::set<std::string> recorded;
  for (const auto& key : took)
    if (recorded.insert(key).second) record_bound(s, s.cache.queue.at(key), first_op);
}

}  // namespace

void record_bound(Session& s, Cache::Queued& queued, size_t first_op) {
  auto& r = queued.request;
  std::set<std::string> bound;
  ResourceList beyond;  // what it bound past its admitted minimum: not in the budget yet
  for (size_t i = first_op; i < s.result.operations.size(); ++i) {
    const auto& op = s.result.operations[i];
    if (op.kind != OpKind::Allocate || op.job != r.job_key) continue;
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
  const bool evictions = s.preempts() || s.reclaims();
  const bool enqueue = s.policy.has("enqueue");
  int slotless_candidates = 0, slotless_visits = 0, dry_runs = 0;
  // With drf, a gang placed to its minimum this session waits for its turn with the running jobs
  // of its priority for the rest of its pods.
  std::vector<std::string> pool;
  int32_t pool_priority = 0;
  auto take_pool_turns = [&] {
    if (!pool.empty()) take_turns(s, pool);
    pool.clear();
  };
  for (auto at = cache.order.begin(); at != cache.order.end(); ++at) {
    const auto& [place, key] = *at;
    // Every waiting pod needs a slot and none is left: the rest of the queue waits as it is (a
    // long queue, long exactly when the cluster is full, costs nothing per release).
    const bool no_slot = s.slots <= 0 && cache.slot_free_queued == 0;
    if (no_slot && (!evictions || slotless_candidates >= kSlotlessCandidates ||
                    ++slotless_visits > kSlotlessVisits))
      break;
    auto& queued = cache.queue.at(key);
    auto& r = queued.request;
    if (no_slot && r.min_count == 0) continue;  // stragglers take no room by eviction
    if (!pool.empty() && place.neg_priority != pool_priority) take_pool_turns();
    if (place.in && s.policy.drf) {
      // The stragglers of the running jobs of this priority take turns by dominant share.
      std::vector<std::string> run = std::move(pool);
      pool.clear();
      auto last = at;
      for (auto it = at;
           it != cache.order.end() && it->first.in && it->first.neg_priority == place.neg_priority;
           ++it) {
        run.push_back(it->second);
        last = it;
      }
      take_turns(s, run);
      at = last;
      continue;
    }
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
    s.allocator->allocate_job(j, s.result,
                              {.cached = promise == cache.promised.end(),
                               .until_ready = s.policy.drf && r.min_count > 0});
    if (s.result.operations.size() > first_op && promise != cache.promised.end())
      cache.promised.erase(promise);  // bound: what it was promised is its pods' now
    else
      with_promise(false);
    if (s.result.operations.size() > first_op) {
      record_bound(s, queued, first_op);
      if (s.policy.drf && !r.pods.empty()) {
        pool.push_back(key);
        pool_priority = place.neg_priority;
      }
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
  take_pool_turns();
}

}  // namespace caldera::sched
