#include "actors/scheduler/core/placer.hpp"

#include <algorithm>
#include <set>

#include "actors/scheduler/core/gang_fit.hpp"
#include "actors/scheduler/core/session.hpp"

namespace caldera {

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
                     const ResourceList& requests) {
  if (held_.count(uid)) return;
  held_[uid] = {job_key, node, requests};
  auto it = nodes_.find(node);
  if (it != nodes_.end()) {
    it->second.free.subtract(requests);
    ++it->second.pods;
  }
}

void Placer::release(const std::string& uid) {
  auto it = held_.find(uid);
  if (it == held_.end()) return;
  auto n = nodes_.find(it->second.node);
  if (n != nodes_.end()) {
    n->second.free.add(it->second.requests);
    --n->second.pods;
  }
  held_.erase(it);
}

void Placer::dequeue(std::map<std::string, Queued>::iterator it) {
  if (it->second.slot_free) --slot_free_queued_;
  order_.erase(it->second.place);
  queue_.erase(it);
}

void Placer::enqueue(GangRequest r) {
  bool slot_free = false;
  for (const auto& a : r.pods) slot_free = slot_free || a.requests.get("pods") <= 0;
  if (slot_free) ++slot_free_queued_;
  const auto seq = ++next_seq_;
  Place place{-r.priority, r.min_count == 0, r.created_ms, seq};
  auto key = r.job_key;
  order_[place] = key;
  queue_[key] = {std::move(r), place, slot_free};
}

void Placer::request(GangRequest r) {
  auto it = queue_.find(r.job_key);
  if (it != queue_.end()) dequeue(it);
  if (r.pods.empty()) return;
  enqueue(std::move(r));
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
  sched::SessionOptions options{scoring_};
  options.search_start = search_start_;
  sched::Allocator allocator(snap, options);
  sched::SessionResult result;
  std::vector<std::string> done, in;  // gangs placed whole; gangs now in, with stragglers left
  for (const auto& [place, key] : order_) {
    // Every waiting pod needs a slot and none is left: the rest of the queue waits as it is (a
    // long queue, long exactly when the cluster is full, costs nothing per release).
    if (slots <= 0 && slot_free_queued_ == 0) break;
    auto& r = queue_.at(key).request;
    // A pod bound already (a request that crossed its binding) is never bound twice.
    std::erase_if(r.pods, [&](const PodAsk& a) { return held_.count(a.uid) > 0; });
    r.min_count = std::min<int32_t>(r.min_count, static_cast<int32_t>(r.pods.size()));
    if (r.pods.empty()) {
      done.push_back(key);
      continue;
    }
    sched::JobInfo job;
    job.uid = key;
    job.created_ms = place.created_ms;
    job.priority = r.priority;
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
    // Stragglers past the free pod slots cannot bind this session: a job of many replicas costs
    // a session what can start, not its whole ask. Pods keep the order asked in (no names here).
    const bool slot_free = queue_.at(key).slot_free;
    MilliValue slots_left = slots;
    for (const auto& a : r.pods) {
      if (r.min_count == 0 && !slot_free && (slots_left -= a.requests.get("pods")) < 0) break;
      job.tasks.push_back(
          {a.uid, "", a.task, 0, a.requests, sched::TaskStatus::Pending, "", a.node_selector});
    }
    snap.jobs.push_back(std::move(job));
    const size_t first_op = result.operations.size();
    allocator.allocate_job(snap.jobs.size() - 1, result);
    std::set<std::string> bound;
    for (size_t i = first_op; i < result.operations.size(); ++i) {
      const auto& op = result.operations[i];
      reserve(op.job, op.task_uid, op.node, op.requests);
      session.bindings.push_back(
          {op.job, op.task_uid, op.node, nodes_[op.node].host_ip, op.requests});
      slots -= op.requests.get("pods");
      bound.insert(op.task_uid);
    }
    if (!bound.empty()) {
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
  for (const auto& key : done) dequeue(queue_.find(key));
  for (const auto& key : in) {
    // The gang is in: its stragglers go as they fit, after the gangs not yet in.
    auto it = queue_.find(key);
    GangRequest r = std::move(it->second.request);
    dequeue(it);
    r.min_count = 0;
    r.task_min.clear();
    enqueue(std::move(r));
  }
  return session;
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
