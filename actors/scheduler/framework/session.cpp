#include "actors/scheduler/framework/session.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "actors/scheduler/core/enqueue.hpp"
#include "actors/scheduler/core/gang_fit.hpp"
#include "actors/scheduler/framework/action.hpp"

namespace caldera::sched {

Session::Session(Cache& c, const Policy& p) : cache(c), policy(p) {
  for (const auto& [name, n] : cache.nodes) {
    auto& node = snap.nodes[name];
    node.name = name;
    node.ready = n.ready;
    node.labels = n.labels;
    if (policy.predicates) node.taints = n.taints;
    node.allocatable = n.capacity;
    node.idle = n.free;
    if (!n.ready) continue;
    capacity.add(n.capacity);
    slots += std::max<MilliValue>(0, n.free.get("pods"));
  }
  // The enqueue action's budget, before room promised to a preemptor is taken from the idle: the
  // preemptor is admitted, its minimum counted among the admitted.
  budget = overcommit_budget(snap, policy.options.overcommit_factor);
  budget.subtract(cache.admitted_lacks);
  // A promise whose victims have all ended lapses if its preemptor is not bound soon after.
  for (const auto& [uid, r] : cache.releasing) awaited.insert(r.preemptor);
  for (auto it = cache.promised.begin(); it != cache.promised.end();) {
    const bool lapsed =
        !awaited.count(it->first) && ++it->second.idle_sessions > Cache::kPromiseSessions;
    it = lapsed ? cache.promised.erase(it) : std::next(it);
  }
  // Room promised to a preemptor is not idle to anyone else.
  for (const auto& [job, promise] : cache.promised)
    for (const auto& [name, amount] : promise.by_node)
      if (auto node = snap.nodes.find(name); node != snap.nodes.end())
        node->second.idle.subtract(amount);
  if (cache.queues_bind && policy.proportion) snap.queues = cache.queue_view();
  SessionOptions options = policy.options;
  options.search_start = cache.search_start;
  allocator = std::make_unique<Allocator>(snap, options);
}

Session::~Session() = default;

Decisions Session::run() {
  for (const auto& name : policy.actions)
    if (auto action = find_action(name)) (*action)(*this);
  close();
  return std::move(decisions);
}

void Session::close() {
  cache.search_start = allocator->next_search();
  for (const auto& key : done) {
    cache.promised.erase(key);
    if (auto it = cache.queue.find(key); it != cache.queue.end()) cache.dequeue(it);
  }
  std::set<std::string> requeued;  // a job that took several turns is in `in` once per turn
  for (const auto& key : in) {
    auto it = cache.queue.find(key);
    if (it == cache.queue.end() || !requeued.insert(key).second) continue;
    GangRequest r = std::move(it->second.request);
    cache.dequeue(it);
    if (r.pods.empty()) {
      cache.promised.erase(key);  // a later action bound the rest
      continue;
    }
    // The gang is in: its stragglers go as they fit, after the gangs not yet in.
    r.min_count = 0;
    r.task_min.clear();
    r.partition_min.clear();
    cache.enqueue(std::move(r));
  }
}

bool Session::prune(Cache::Queued& queued) {
  auto& r = queued.request;
  std::erase_if(r.pods, [&](const PodAsk& a) { return cache.held.count(a.uid) > 0; });
  r.min_count = std::min<int32_t>(r.min_count, static_cast<int32_t>(r.pods.size()));
  return !r.pods.empty();
}

bool Session::blocked(Cache::Queued& queued) {
  const auto& r = queued.request;
  std::string why;
  // A queue not known (yet: its document and the job may arrive in either order) binds nothing:
  // its gangs wait rather than take what the queues' shares would not give them. Likewise a
  // class not known yet: its order in the queue, or among its job's pods, would be wrong
  // (admission checked that it exists; the scheduler hears of it on its own way).
  if (!cache.queues.count(r.group.queue))
    why = "queue " + r.group.queue + " does not exist (yet)";
  else if (auto missing = cache.unknown_class(r); !missing.empty())
    why = "priority class " + missing + " is not known to the scheduler (yet)";
  else
    return false;
  if (r.min_count > 0) {
    decisions.unplaced[r.job_key] = std::move(why);
    decisions.not_enqueued.insert(r.job_key);
    if (queued.standing.admitted) budget.add(queued.minimum);
    cache.admit(queued, false);
  }
  return true;
}

std::string Session::gang_message(const GangRequest& r, size_t tasks, const std::string& why) {
  return fmt::format("{}/{} tasks in gang unschedulable: {}", r.min_count, tasks, why);
}

std::string Session::hint(const GangRequest& r) const {
  return capacity_hint(r, capacity);
}

bool Session::preempts() const {
  return policy.has("preempt") && policy.priority_preempts && !cache.classes.empty();
}

bool Session::reclaims() const {
  return policy.has("reclaim") && snap.queues.size() > 1;  // set only when shares bind
}

bool Session::may_reclaim(const Cache::Queued& queued) const {
  if (!reclaims()) return false;
  for (const auto& [name, q] : snap.queues)
    if (name != queued.request.group.queue && q.reclaimable && above_share(q)) return true;
  return false;
}

bool Session::may_preempt_in_queue(const Cache::Queued& queued) {
  const auto& group = queued.request.group;
  if (!preempts() || !cache.may_preempt(group)) return false;
  // A queue above its share preempts nothing.
  if (auto q = snap.queues.find(group.queue); q != snap.queues.end() && above_share(q->second))
    return false;
  if (!lowest_held) {
    lowest_held.emplace();
    for (const auto& [key, g] : cache.groups) {
      // With gang's preemptable, preemption never takes a job below its minimum: only pods
      // above it are victims.
      const int32_t kept = policy.options.gang_protects_victims ? g.info.min_available : 0;
      if (g.held <= std::max(0, kept)) continue;
      if (policy.conformance && is_critical(key, g.info.priority_class))
        continue;  // never a victim
      auto [low, fresh] = lowest_held->try_emplace(g.info.queue, g.priority);
      if (!fresh) low->second = std::min(low->second, g.priority);
    }
  }
  auto low = lowest_held->find(group.queue);
  return low != lowest_held->end() && low->second < -queued.place.neg_priority;
}

}  // namespace caldera::sched
