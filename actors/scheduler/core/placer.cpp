#include "actors/scheduler/core/placer.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "actors/scheduler/core/enqueue.hpp"
#include "actors/scheduler/core/gang_fit.hpp"
#include "actors/scheduler/core/preempt.hpp"
#include "actors/scheduler/core/reclaim.hpp"
#include "actors/scheduler/core/session.hpp"

namespace caldera {

Placer::Placer(sched::Scoring scoring) : scoring_(scoring) {
  set_queues({}, {});
}

void Placer::set_queues(const std::vector<Queue>& queues,
                        const std::vector<PriorityClass>& classes) {
  queues_.clear();
  queues_[kDefaultQueue].name = kDefaultQueue;
  for (const auto& q : queues) {
    auto& info = queues_[q.spec.name];
    info.name = q.spec.name;
    info.weight = q.spec.weight;
    info.capability = q.spec.capability;
    info.reclaimable = q.spec.reclaimable;
  }
  // One queue without a cap deserves all it asks: its shares decide nothing.
  queues_bind_ = queues_.size() > 1 || queues_.begin()->second.capability.has_value();
  classes_.clear();
  for (const auto& c : classes) classes_[c.name] = c;
  // A changed class changes the place of the gangs that name it.
  for (auto& [key, g] : groups_) g.priority = priority_of(g.info);
  // Each keeps its turn among equals (the order its request came in, its seq), and its admission.
  struct Again {
    GangRequest request;
    uint64_t seq;
    Standing standing;
  };
  std::vector<Again> again;
  for (auto& [key, q] : queue_) again.push_back({std::move(q.request), q.place.seq, q.standing});
  for (const auto& a : again) dequeue(queue_.find(a.request.job_key));
  for (auto& a : again) enqueue(std::move(a.request), a.seq, a.standing);
}

int32_t Placer::priority_of(const PodGroupInfo& info) const {
  if (!info.priority_class.empty()) {
    auto c = classes_.find(info.priority_class);
    return c == classes_.end() ? 0 : c->second.value;
  }
  for (const auto& [name, c] : classes_)
    if (c.global_default) return c.value;
  return 0;
}

std::string Placer::unknown_class(const GangRequest& r) const {
  if (!r.group.priority_class.empty() && !classes_.count(r.group.priority_class))
    return r.group.priority_class;
  for (const auto& a : r.pods)
    if (!a.priority_class.empty() && !classes_.count(a.priority_class)) return a.priority_class;
  return "";
}

bool Placer::may_preempt(const PodGroupInfo& info) const {
  const PriorityClass* klass = nullptr;
  if (!info.priority_class.empty()) {
    auto c = classes_.find(info.priority_class);
    if (c != classes_.end()) klass = &c->second;
  } else {
    for (const auto& [name, c] : classes_)
      if (c.global_default) klass = &c;
  }
  return !klass || klass->preemption_policy != kPreemptNever;
}

Placer::Group& Placer::group_of(const std::string& job_key, const PodGroupInfo& info) {
  auto [it, fresh] = groups_.try_emplace(job_key);
  // A request says what the job is now; an adopted binding only what it was, if nothing did.
  if (fresh || it->second.info != info) {
    it->second.info = info;
    it->second.priority = priority_of(info);
  }
  return it->second;
}

void Placer::drop_group_if_idle(const std::string& job_key) {
  auto it = groups_.find(job_key);
  if (it != groups_.end() && it->second.held <= 0 && !it->second.queued) groups_.erase(it);
}

void Placer::upsert_node(const std::string& name, const ResourceList& capacity, bool ready,
                         const std::string& host_ip,
                         const std::map<std::string, std::string>& labels) {
  auto& n = nodes_[name];
  if (!host_ip.empty()) n.host_ip = host_ip;
  n.labels = labels;
  n.capacity = capacity;
  n.ready = ready;
  n.free = capacity;
  n.pods = 0;
  for (const auto& [uid, h] : held_)
    if (h.node == name) {
      n.free.subtract(h.requests);
      ++n.pods;
    }
}

void Placer::set_ready(const std::string& name, bool ready) {
  auto it = nodes_.find(name);
  if (it != nodes_.end()) it->second.ready = ready;
}

void Placer::reserve(const std::string& job_key, const std::string& uid, const std::string& node,
                     const ResourceList& requests, const PodGroupInfo& group) {
  if (held_.count(uid)) return;
  held_[uid] = {job_key, node, requests};
  auto it = nodes_.find(node);
  if (it != nodes_.end()) {
    it->second.free.subtract(requests);
    ++it->second.pods;
  }
  auto g = groups_.find(job_key);
  auto& grp = g != groups_.end() ? g->second : group_of(job_key, group);
  ++grp.held;
  held_[uid].queue = grp.info.queue;
  queue_allocated_[grp.info.queue].add(requests);
}

void Placer::release(const std::string& uid) {
  auto it = held_.find(uid);
  if (it == held_.end()) return;
  auto n = nodes_.find(it->second.node);
  if (n != nodes_.end()) {
    n->second.free.add(it->second.requests);
    --n->second.pods;
  }
  if (auto r = releasing_.find(uid); r != releasing_.end()) {
    // Its queue let it go when it was evicted.
    releasing_by_node_[r->second.node].subtract(it->second.requests);
    if (queue_.count(r->second.preemptor))
      promised_[r->second.preemptor].by_node[r->second.node].add(it->second.requests);
    releasing_.erase(r);
  } else {
    queue_allocated_[it->second.queue].subtract(it->second.requests);
  }
  const auto key = it->second.job_key;
  held_.erase(it);
  if (auto g = groups_.find(key); g != groups_.end()) {
    --g->second.held;
    drop_group_if_idle(key);
  }
}

void Placer::admit(Queued& q, bool in) {
  if (q.standing.admitted == in) return;
  q.standing.admitted = in;
  q.standing.exempt = false;
  if (in)
    admitted_lacks_.add(q.minimum);
  else
    admitted_lacks_.subtract(q.minimum);
}

void Placer::dequeue(std::map<std::string, Queued>::iterator it) {
  admit(it->second, false);
  if (it->second.slot_free) --slot_free_queued_;
  order_.erase(it->second.place);
  if (auto g = groups_.find(it->first); g != groups_.end()) g->second.queued = false;
  queue_.erase(it);
}

void Placer::enqueue(GangRequest r, uint64_t seq) {
  enqueue(std::move(r), seq, Standing{});
}

void Placer::enqueue(GangRequest r, uint64_t seq, Standing standing) {
  bool slot_free = false;
  for (const auto& a : r.pods) slot_free = slot_free || a.requests.get("pods") <= 0;
  if (slot_free) ++slot_free_queued_;
  if (seq == 0) seq = ++next_seq_;
  auto& group = group_of(r.job_key, r.group);
  group.queued = true;
  Place place{-group.priority, r.min_count == 0, r.created_ms, seq};
  auto key = r.job_key;
  order_[place] = key;
  // All its pods are its minimum (the common ask): their sum, without gang_minimum's choosing.
  ResourceList minimum;
  if (r.min_count > 0 && static_cast<size_t>(r.min_count) == r.pods.size())
    for (const auto& a : r.pods) minimum.add(a.requests);
  else if (r.min_count > 0)
    minimum = gang_minimum(r);
  auto& queued = queue_[key] = {std::move(r), place, slot_free, Standing{}, std::move(minimum)};
  queued.standing.exempt_lapsed = standing.exempt_lapsed;
  if (standing.admitted && queued.request.min_count > 0) {
    admit(queued, true);
    queued.standing = standing;
  }
}

void Placer::request(GangRequest r, bool admitted) {
  auto it = queue_.find(r.job_key);
  // A gang admitted stays so when it asks anew (Volcano's pod group stays Inqueue).
  Standing standing{admitted};
  if (it != queue_.end()) {
    standing = it->second.standing;
    standing.admitted = standing.admitted || admitted;
    standing.exempt_lapsed = false;  // a new request: evictions may help it again
    dequeue(it);
  }
  if (r.pods.empty()) {
    promised_.erase(r.job_key);
    drop_group_if_idle(r.job_key);
    return;
  }
  enqueue(std::move(r), 0, standing);
}

std::map<std::string, sched::QueueInfo> Placer::queue_view() const {
  auto queues = queues_;
  for (auto& [name, q] : queues) {
    auto held = queue_allocated_.find(name);
    q.allocated = held == queue_allocated_.end() ? ResourceList{} : held->second;
    q.request = q.allocated;
  }
  for (const auto& [key, queued] : queue_) {
    auto g = groups_.find(key);
    auto q = queues.find(g == groups_.end() ? kDefaultQueue : g->second.info.queue);
    if (q == queues.end()) continue;
    for (const auto& a : queued.request.pods) q->second.request.add(a.requests);
  }
  ResourceList total;
  for (const auto& [name, n] : nodes_)
    if (n.ready) total.add(n.capacity);
  sched::deal_shares(queues, total);
  return queues;
}

std::optional<Placer::Refusal> Placer::enqueue_gang(Queued& queued, const sched::Snapshot& snap,
                                                    Enqueueing& e) {
  const auto& queue = queued.request.group.queue;
  auto revoke = [&] {
    if (queued.standing.admitted) e.budget.add(queued.minimum);  // later gangs may have its budget
    admit(queued, false);
  };
  // A gang the ready nodes could not hold even empty is not admitted (nor kept so when nodes
  // leave): it would keep its minimum from the budget for as long as it waits.
  if (!e.capacity.fits(queued.minimum)) {
    revoke();
    return Refusal{"not enqueued: its minimum (" + resource_text(queued.minimum) +
                       ") is more than the ready nodes have in all",
                   true};
  }
  auto q = snap.queues.find(queue);
  if (q != snap.queues.end()) {
    // Counted with the gangs admitted before it in job order only, so that a later gang never
    // keeps an earlier one out. A queue that has come to hold its share (another queue asks now)
    // sends its waiting gangs back to Pending: admitted, they would keep from the others the
    // budget they cannot use. A gang that may preempt in its queue takes its room from the queue.
    const auto& inqueue = e.inqueue[queue];
    auto why = sched::capability_refusal(q->second, inqueue, queued.minimum);
    if (!why) {
      why = sched::share_refusal(q->second, inqueue);
      if (why && may_preempt_in_queue(queued, snap)) why.reset();
    }
    if (why) {
      revoke();
      return Refusal{std::move(*why), false};
    }
  }
  // Admitted past the budget, for evictions that could make room: once none can (and none has
  // left room for it), it goes back to the budget's rule, which may send it back to Pending.
  auto may_evict = [&] { return may_preempt_in_queue(queued, snap) || may_reclaim(queued, snap); };
  if (queued.standing.admitted && queued.standing.exempt) {
    // One at a time, and only while evictions may help: victims are leaving for it, or have
    // left room, or some could still be taken and were within the last few sessions.
    const auto& key = queued.request.job_key;
    if (promised_.count(key) || (e.awaited && e.awaited->count(key)))
      queued.standing.exempt_idle = 0;
    if (e.exempted || !may_evict() || ++queued.standing.exempt_idle > kPromiseSessions) {
      queued.standing.exempt_lapsed = queued.standing.exempt_idle > kPromiseSessions;
      revoke();
    } else {
      e.exempted = true;
    }
  }
  if (!queued.standing.admitted) {
    bool exempt = false;
    if (auto why = sched::budget_refusal(e.budget, queued.minimum)) {
      // One gang a session past the budget: one that evictions could make room for. The
      // preempt and reclaim actions serve one starving gang after another anyway.
      if (e.exempted || queued.standing.exempt_lapsed || !may_evict())
        return Refusal{std::move(*why), true};
      e.exempted = exempt = true;
    }
    admit(queued, true);
    queued.standing.exempt = exempt;
    queued.standing.exempt_idle = 0;
    e.budget.subtract(queued.minimum);
  }
  if (q != snap.queues.end()) e.inqueue[queue].add(queued.minimum);
  return std::nullopt;
}

bool Placer::may_reclaim(const Queued& queued, const sched::Snapshot& snap) const {
  if (snap.queues.size() <= 1) return false;
  for (const auto& [name, q] : snap.queues)
    if (name != queued.request.group.queue && q.reclaimable && sched::above_share(q)) return true;
  return false;
}

bool Placer::may_preempt_in_queue(const Queued& queued, const sched::Snapshot& snap) {
  const auto& group = queued.request.group;
  if (classes_.empty() || !may_preempt(group)) return false;
  // A queue above its share preempts nothing (Placer::evict).
  if (auto q = snap.queues.find(group.queue);
      q != snap.queues.end() && sched::above_share(q->second))
    return false;
  if (!lowest_held_) {
    lowest_held_.emplace();
    for (const auto& [key, g] : groups_) {
      // Preemption never takes a job below its minimum: only pods above it are victims.
      if (g.held <= std::max(0, g.info.min_available)) continue;
      auto [low, fresh] = lowest_held_->try_emplace(g.info.queue, g.priority);
      if (!fresh) low->second = std::min(low->second, g.priority);
    }
  }
  auto low = lowest_held_->find(group.queue);
  return low != lowest_held_->end() && low->second < -queued.place.neg_priority;
}

std::vector<QueueStatus> Placer::queue_status() const {
  std::map<std::string, QueueStatus> out;
  for (auto& [name, q] : queue_view()) out[name] = {name, q.allocated, q.deserved, 0, 0};
  for (const auto& [key, g] : groups_) {
    auto q = out.find(g.info.queue);
    if (q == out.end()) continue;
    auto queued = queue_.find(key);
    // Waiting for its gang, admitted or not; else in, holding nodes.
    if (queued != queue_.end() && queued->second.request.min_count > 0)
      ++(queued->second.standing.admitted ? q->second.inqueue : q->second.pending);
    else if (g.held > 0)
      ++q->second.running;
  }
  std::vector<QueueStatus> list;
  for (auto& [name, s] : out) list.push_back(std::move(s));
  return list;
}

Session Placer::session() {
  Session session;
  ResourceList capacity_sum;
  MilliValue slots = 0;
  for (const auto& [name, n] : nodes_) {
    if (!n.ready) continue;
    capacity_sum.add(n.capacity);
    slots += std::max<MilliValue>(0, n.free.get("pods"));
  }
  sched::Snapshot snap;
  for (const auto& [name, n] : nodes_) {
    auto& node = snap.nodes[name];
    node.name = name;
    node.ready = n.ready;
    node.labels = n.labels;
    node.allocatable = n.capacity;
    node.idle = n.free;
  }
  // The enqueue action's budget, before room promised to a preemptor is taken from the idle: the
  // preemptor is admitted, its minimum counted among the admitted.
  Enqueueing enqueueing;
  enqueueing.budget = sched::overcommit_budget(snap, sched::SessionOptions{}.overcommit_factor);
  enqueueing.budget.subtract(admitted_lacks_);
  enqueueing.capacity = capacity_sum;
  lowest_held_.reset();
  // A promise whose victims have all ended lapses if its preemptor is not bound soon after.
  std::set<std::string> awaited;  // preemptors with victims still leaving
  for (const auto& [uid, r] : releasing_) awaited.insert(r.preemptor);
  enqueueing.awaited = &awaited;
  for (auto it = promised_.begin(); it != promised_.end();) {
    const bool lapsed = !awaited.count(it->first) && ++it->second.idle_sessions > kPromiseSessions;
    it = lapsed ? promised_.erase(it) : std::next(it);
  }
  // Room promised to a preemptor is not idle to anyone else.
  for (const auto& [job, promise] : promised_)
    for (const auto& [name, amount] : promise.by_node)
      if (auto node = snap.nodes.find(name); node != snap.nodes.end())
        node->second.idle.subtract(amount);
  if (queues_bind_) snap.queues = queue_view();
  sched::SessionOptions options{scoring_};
  options.search_start = search_start_;
  sched::Allocator allocator(snap, options);
  sched::SessionResult result;
  std::vector<std::string> done, in;  // gangs placed whole; gangs now in, with stragglers left
  // Evictions may make room even when no pod slot is left: then the first few gangs past that
  // point still go to the preempt and reclaim actions, unallocated.
  const bool evictions = !classes_.empty() || (queues_bind_ && queues_.size() > 1);
  int slotless_candidates = 0, slotless_visits = 0;
  for (const auto& [place, key] : order_) {
    // Every waiting pod needs a slot and none is left: the rest of the queue waits as it is (a
    // long queue, long exactly when the cluster is full, costs nothing per release).
    const bool no_slot = slots <= 0 && slot_free_queued_ == 0;
    if (no_slot && (!evictions || slotless_candidates >= kSlotlessCandidates ||
                    ++slotless_visits > kSlotlessVisits))
      break;
    auto& r = queue_.at(key).request;
    if (no_slot && r.min_count == 0) continue;  // stragglers take no room by eviction
    // A pod bound already (a request that crossed its binding) is never bound twice.
    std::erase_if(r.pods, [&](const PodAsk& a) { return held_.count(a.uid) > 0; });
    r.min_count = std::min<int32_t>(r.min_count, static_cast<int32_t>(r.pods.size()));
    if (r.pods.empty()) {
      done.push_back(key);
      continue;
    }
    // A queue not known (yet: its document and the job may arrive in either order) binds
    // nothing: its gangs wait rather than take what the queues' shares would not give them.
    auto& queued = queue_.at(key);
    if (!queues_.count(r.group.queue)) {
      if (r.min_count > 0) {
        session.unplaced[key] = "queue " + r.group.queue + " does not exist (yet)";
        session.not_enqueued.insert(key);
        if (queued.standing.admitted) enqueueing.budget.add(queued.minimum);
        admit(queued, false);
      }
      continue;
    }
    // Likewise a class not known yet: its order in the queue, or among its job's pods, would be
    // wrong (admission checked that it exists; the scheduler hears of it on its own way).
    if (auto missing = unknown_class(r); !missing.empty()) {
      if (r.min_count > 0) {
        session.unplaced[key] =
            "priority class " + missing + " is not known to the scheduler (yet)";
        session.not_enqueued.insert(key);
        if (queued.standing.admitted) enqueueing.budget.add(queued.minimum);
        admit(queued, false);
      }
      continue;
    }
    // Enqueue: a gang whose minimum is not in goes on only once admitted.
    std::optional<Refusal> refused;
    if (r.min_count > 0) refused = enqueue_gang(queued, snap, enqueueing);
    if (refused && !refused->by_budget) {
      session.unplaced[key] =
          fmt::format("{}/{} tasks in gang unschedulable: {}", r.min_count,
                      r.placed + static_cast<int32_t>(r.pods.size()), refused->why);
      session.not_enqueued.insert(key);
      continue;
    }
    sched::JobInfo job;
    job.uid = key;
    job.created_ms = place.created_ms;
    job.priority = -place.neg_priority;
    job.may_preempt = may_preempt(r.group);
    job.queue = r.group.queue;
    job.phase = sched::PodGroupPhase::Inqueue;
    // The job actor has counted what is bound and applied Volcano's task rule: what is asked
    // is the rest of the gang. Its bound pods stand in as running ones (their room is taken
    // already) while the gang is not in, so that the message counts the whole gang.
    if (r.min_count > 0) {
      job.min_available = r.placed + r.min_count;
      job.tasks.resize(static_cast<size_t>(r.placed));
      for (auto& t : job.tasks) t.status = sched::TaskStatus::Running;
    }
    job.task_min_available = r.task_min;
    job.partition_min = r.partition_min;
    // Stragglers past the free pod slots cannot bind this session: a job of many replicas costs
    // a session what can start, not its whole ask. Pods keep the order asked in (no names here),
    // a task's own class first (Volcano's task priority).
    const bool slot_free = queued.slot_free;
    MilliValue slots_left = slots;
    std::set<std::pair<std::string, int32_t>> cut;  // partitions not all asked this session
    for (const auto& a : r.pods) {
      if (a.partition >= 0 && cut.count({a.task, a.partition})) continue;
      if (r.min_count == 0 && !slot_free && (slots_left -= a.requests.get("pods")) < 0) {
        if (a.partition < 0) break;
        cut.insert({a.task, a.partition});  // the rest of this one goes in no part
        continue;
      }
      const int32_t priority =
          a.priority_class.empty() ? job.priority : priority_of({"", a.priority_class, 0});
      job.tasks.push_back({a.uid, "", a.task, priority, a.requests, sched::TaskStatus::Pending, "",
                           a.node_selector, a.partition});
    }
    if (!cut.empty())
      std::erase_if(job.tasks, [&](const sched::TaskInfo& t) {
        return t.partition >= 0 && cut.count({t.task, t.partition}) > 0;
      });
    snap.jobs.push_back(std::move(job));
    if (no_slot) {
      if (!refused) {
        ++slotless_candidates;  // it waits for a slot, or for its victims
        continue;
      }
      snap.jobs.pop_back();  // a Pending pod group takes nothing by eviction
      session.unplaced[key] =
          fmt::format("{}/{} tasks in gang unschedulable: {}", r.min_count,
                      r.placed + static_cast<int32_t>(r.pods.size()), refused->why);
      session.not_enqueued.insert(key);
      continue;
    }
    if (refused) {
      // Not admitted for want of budget: a dry run says whether it would fit, and why not per
      // node (for the first few such gangs: each costs a search of the nodes, every session).
      // It stays out of the snapshot: a Pending pod group neither preempts nor reclaims.
      if (enqueueing.dry_runs++ < kDryRuns)
        allocator.allocate_job(snap.jobs.size() - 1, result, {.commit = false});
      auto cond = result.conditions.find(key);
      std::string why;
      if (cond != result.conditions.end() && !cond->second.scheduled) {
        why = cond->second.message;
        if (auto hint = capacity_hint(r, capacity_sum); !hint.empty()) why += "; " + hint;
      } else {
        why = fmt::format("{}/{} tasks in gang unschedulable: {}", r.min_count,
                          snap.jobs.back().tasks.size(), refused->why);
      }
      snap.jobs.pop_back();
      session.unplaced[key] = std::move(why);
      session.not_enqueued.insert(key);
      continue;
    }
    const size_t first_op = result.operations.size();
    // Its own promised room is idle to it, and only to it.
    auto promise = promised_.find(key);
    auto with_promise = [&](bool give) {
      if (promise == promised_.end()) return;
      for (const auto& [name, amount] : promise->second.by_node) {
        auto node = snap.nodes.find(name);
        if (node == snap.nodes.end()) continue;
        give ? node->second.idle.add(amount) : node->second.idle.subtract(amount);
      }
    };
    with_promise(true);
    allocator.allocate_job(snap.jobs.size() - 1, result, {.cached = promise == promised_.end()});
    if (result.operations.size() > first_op && promise != promised_.end())
      promised_.erase(promise);  // bound: what it was promised is its pods' now
    else
      with_promise(false);
    std::set<std::string> bound;
    ResourceList beyond;  // what it bound past its admitted minimum: not in the budget yet
    for (size_t i = first_op; i < result.operations.size(); ++i) {
      const auto& op = result.operations[i];
      reserve(op.job, op.task_uid, op.node, op.requests);
      session.bindings.push_back(
          {op.job, op.task_uid, op.node, nodes_[op.node].host_ip, op.requests});
      slots -= op.requests.get("pods");
      bound.insert(op.task_uid);
      beyond.add(op.requests);
    }
    if (!bound.empty()) {
      beyond.subtract(queued.minimum);
      for (auto& [name, amount] : beyond.values) amount = std::max<MilliValue>(0, amount);
      enqueueing.budget.subtract(beyond);
      // Its minimum is in: what it holds counts in its queue's allocated now, not as admitted.
      if (auto q = enqueueing.inqueue.find(r.group.queue); q != enqueueing.inqueue.end())
        q->second.subtract(queued.minimum);
      admit(queued, false);
      std::erase_if(r.pods, [&](const PodAsk& a) { return bound.count(a.uid) > 0; });
      (r.pods.empty() ? done : in).push_back(key);
      continue;
    }
    // Only a gang whose minimum is not in yet is reported: stragglers of a running gang wait
    // quietly.
    auto cond = result.conditions.find(key);
    if (r.min_count == 0 || cond == result.conditions.end() || cond->second.scheduled) continue;
    auto why = cond->second.message;
    if (auto hint = capacity_hint(r, capacity_sum); !hint.empty()) why += "; " + hint;
    session.unplaced[key] = std::move(why);
  }
  search_start_ = allocator.next_search();
  evict(snap, session, options);
  for (const auto& key : done) {
    promised_.erase(key);
    dequeue(queue_.find(key));
  }
  for (const auto& key : in) {
    // The gang is in: its stragglers go as they fit, after the gangs not yet in.
    auto it = queue_.find(key);
    GangRequest r = std::move(it->second.request);
    dequeue(it);
    r.min_count = 0;
    r.task_min.clear();
    r.partition_min.clear();
    enqueue(std::move(r));
  }
  return session;
}

// The preempt and reclaim actions over what the session left waiting: a gang whose minimum is
// not in takes room from running pods of lower-priority jobs of its queue (if its class may
// preempt), or, if its queue is below its share, from queues that hold more than theirs.
void Placer::evict(sched::Snapshot& snap, Session& session, const sched::SessionOptions& options) {
  // Without a class every job's priority is 0, and with one queue there are no shares to even
  // out: no one may take from anyone.
  const bool preempting = !classes_.empty(), reclaiming = queues_bind_ && snap.queues.size() > 1;
  if (!preempting && !reclaiming) return;
  // Per queue, the highest priority of a gang that could preempt there; the queues below their
  // share that have a gang waiting.
  std::map<std::string, int32_t> top;
  std::set<std::string> short_queues;
  for (const auto& job : snap.jobs) {
    if (job.min_available <= 0 || !sched::job_starving(job)) continue;
    auto q = snap.queues.find(job.queue);
    if (preempting && job.may_preempt &&
        (q == snap.queues.end() || !sched::above_share(q->second))) {
      auto [t, fresh] = top.try_emplace(job.queue, job.priority);
      if (!fresh) t->second = std::max(t->second, job.priority);
    }
    if (reclaiming && q != snap.queues.end() && !sched::overused(q->second))
      short_queues.insert(job.queue);
  }
  // Jobs they could take from: a walk over the jobs, not their pods, in the common case of none.
  auto victim_job = [&](const Group& g) {
    if (g.held <= 0) return false;
    auto t = top.find(g.info.queue);
    if (t != top.end() && g.priority < t->second) return true;
    if (short_queues.empty() || short_queues.count(g.info.queue)) return false;
    auto q = snap.queues.find(g.info.queue);
    return q != snap.queues.end() && q->second.reclaimable && sched::overused(q->second);
  };
  bool any = false;
  for (const auto& [key, g] : groups_) any = any || victim_job(g);
  if (!any) return;

  // What is leaving, and what has left for a preemptor, is room a pipelined pod may count on.
  for (auto& [name, node] : snap.nodes) {
    auto r = releasing_by_node_.find(name);
    if (r != releasing_by_node_.end()) node.releasing = r->second;
  }
  for (const auto& [job, promise] : promised_)
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
  for (const auto& [uid, h] : held_) {
    // A pod bound this session is its job's task already (Allocated: it counts as ready, and is
    // not running yet, so no victim).
    if (in_snapshot.count(uid)) continue;
    auto g = groups_.find(h.job_key);
    if (g == groups_.end() || !victim_job(g->second)) continue;
    auto at = index.find(h.job_key);
    if (at == index.end()) {
      sched::JobInfo job;
      job.uid = h.job_key;
      job.queue = g->second.info.queue;
      job.priority = g->second.priority;
      job.phase = sched::PodGroupPhase::Running;
      snap.jobs.push_back(std::move(job));
      at = index.emplace(h.job_key, snap.jobs.size() - 1).first;
    }
    auto& job = snap.jobs[at->second];
    if (cleared.insert(at->second).second) {
      // Its real pods, not the stand-ins of a queued request; and its gang's whole minimum,
      // which a victim is never taken below.
      std::erase_if(job.tasks, [](const sched::TaskInfo& t) { return t.uid.empty(); });
      job.min_available = g->second.info.min_available;
    }
    sched::TaskInfo task;
    task.uid = uid;
    task.requests = h.requests;
    task.node = h.node;
    task.status = releasing_.count(uid) ? sched::TaskStatus::Releasing : sched::TaskStatus::Running;
    job.tasks.push_back(std::move(task));
  }
  auto result = sched::preempt(snap, options);
  if (reclaiming) {
    auto reclaimed = sched::reclaim(snap, options);
    result.operations.insert(result.operations.end(), reclaimed.operations.begin(),
                             reclaimed.operations.end());
  }
  // A gang's statement records its evictions, then its pipelines: the next Pipeline names the
  // preemptor of the evictions before it.
  size_t first = session.evictions.size();
  for (const auto& op : result.operations) {
    if (op.kind == sched::OpKind::Pipeline) {
      for (size_t i = first; i < session.evictions.size(); ++i)
        session.evictions[i].preemptor = op.job;
      first = session.evictions.size();
      continue;
    }
    if (op.kind != sched::OpKind::Evict) continue;
    auto h = held_.find(op.task_uid);
    if (h == held_.end() || releasing_.count(op.task_uid)) continue;
    releasing_[op.task_uid] = {h->second.node, ""};
    releasing_by_node_[h->second.node].add(h->second.requests);
    // As Volcano's proportion deallocates at the eviction: what leaves is no longer its queue's,
    // so that a gang of the same queue can be bound into it.
    queue_allocated_[h->second.queue].subtract(h->second.requests);
    session.evictions.push_back({h->second.job_key, op.task_uid, h->second.node, "", op.reason});
  }
  for (const auto& e : session.evictions) releasing_[e.uid].preemptor = e.preemptor;
}

bool Placer::ready(const std::string& node) const {
  auto it = nodes_.find(node);
  return it != nodes_.end() && it->second.ready;
}

std::vector<NodeInfo> Placer::nodes() const {
  std::vector<NodeInfo> out;
  for (const auto& [name, n] : nodes_) {
    NodeInfo info;
    info.name = name;
    info.ready = n.ready;
    info.capacity = n.capacity;
    info.allocatable = n.free;
    info.allocated = n.capacity;
    info.allocated.subtract(n.free);
    info.pods = n.pods;
    out.push_back(std::move(info));
  }
  return out;
}

ResourceList Placer::largest_node() const {
  ResourceList out;
  for (const auto& [name, n] : nodes_)
    for (const auto& [k, v] : n.capacity.values) out.values[k] = std::max(out.get(k), v);
  return out;
}

}  // namespace caldera
