#include "actors/scheduler/cache/cache.hpp"

#include <algorithm>

#include "actors/scheduler/core/gang_fit.hpp"

namespace caldera::sched {

Cache::Cache() {
  set_queues({}, {});
}

void Cache::set_queues(const std::vector<Queue>& list,
                       const std::vector<PriorityClass>& class_list) {
  queues.clear();
  queues[kDefaultQueue].name = kDefaultQueue;
  for (const auto& q : list) {
    auto& info = queues[q.spec.name];
    info.name = q.spec.name;
    info.weight = q.spec.weight;
    info.capability = q.spec.capability;
    info.reclaimable = q.spec.reclaimable;
  }
  // One queue without a cap deserves all it asks: its shares decide nothing.
  queues_bind = queues.size() > 1 || queues.begin()->second.capability.has_value();
  classes.clear();
  for (const auto& c : class_list) classes[c.name] = c;
  // A changed class changes the place of the gangs that name it.
  for (auto& [key, g] : groups) g.priority = priority_of(g.info);
  // Each keeps its turn among equals (the order its request came in, its seq), and its admission.
  struct Again {
    GangRequest request;
    uint64_t seq;
    Standing standing;
  };
  std::vector<Again> again;
  for (auto& [key, q] : queue) again.push_back({std::move(q.request), q.place.seq, q.standing});
  for (const auto& a : again) dequeue(queue.find(a.request.job_key));
  for (auto& a : again) enqueue(std::move(a.request), a.seq, a.standing);
}

int32_t Cache::priority_of(const PodGroupInfo& info) const {
  if (!use_priority) return 0;
  if (!info.priority_class.empty()) {
    auto c = classes.find(info.priority_class);
    return c == classes.end() ? 0 : c->second.value;
  }
  for (const auto& [name, c] : classes)
    if (c.global_default) return c.value;
  return 0;
}

std::string Cache::unknown_class(const GangRequest& r) const {
  if (!use_priority) return "";
  if (!r.group.priority_class.empty() && !classes.count(r.group.priority_class))
    return r.group.priority_class;
  for (const auto& a : r.pods)
    if (!a.priority_class.empty() && !classes.count(a.priority_class)) return a.priority_class;
  return "";
}

bool Cache::may_preempt(const PodGroupInfo& info) const {
  const PriorityClass* klass = nullptr;
  if (!info.priority_class.empty()) {
    auto c = classes.find(info.priority_class);
    if (c != classes.end()) klass = &c->second;
  } else {
    for (const auto& [name, c] : classes)
      if (c.global_default) klass = &c;
  }
  return !klass || klass->preemption_policy != kPreemptNever;
}

Cache::Group& Cache::group_of(const std::string& job_key, const PodGroupInfo& info) {
  auto [it, fresh] = groups.try_emplace(job_key);
  // A request says what the job is now; an adopted binding only what it was, if nothing did.
  if (fresh || it->second.info != info) {
    it->second.info = info;
    it->second.priority = priority_of(info);
  }
  return it->second;
}

void Cache::drop_group_if_idle(const std::string& job_key) {
  auto it = groups.find(job_key);
  if (it != groups.end() && it->second.held <= 0 && !it->second.queued) groups.erase(it);
}

void Cache::upsert_node(const std::string& name, const ResourceList& capacity, bool ready,
                        const std::string& host_ip,
                        const std::map<std::string, std::string>& labels) {
  auto& n = nodes[name];
  if (!host_ip.empty()) n.host_ip = host_ip;
  n.labels = labels;
  if (auto t = node_taints.find(name); t != node_taints.end()) n.taints = t->second;
  n.capacity = capacity;
  n.ready = ready;
  n.free = capacity;
  n.pods = 0;
  for (const auto& [uid, h] : held)
    if (h.node == name) {
      n.free.subtract(h.requests);
      ++n.pods;
    }
}

void Cache::set_ready(const std::string& name, bool ready) {
  auto it = nodes.find(name);
  if (it != nodes.end()) it->second.ready = ready;
}

void Cache::reserve(const std::string& job_key, const std::string& uid, const std::string& node,
                    const ResourceList& requests, const PodGroupInfo& group) {
  if (held.count(uid)) return;
  held[uid] = {job_key, node, requests};
  auto it = nodes.find(node);
  if (it != nodes.end()) {
    it->second.free.subtract(requests);
    ++it->second.pods;
  }
  auto g = groups.find(job_key);
  auto& grp = g != groups.end() ? g->second : group_of(job_key, group);
  ++grp.held;
  grp.allocated.add(requests);
  held[uid].queue = grp.info.queue;
  queue_allocated[grp.info.queue].add(requests);
}

void Cache::release(const std::string& uid) {
  auto it = held.find(uid);
  if (it == held.end()) return;
  auto n = nodes.find(it->second.node);
  if (n != nodes.end()) {
    n->second.free.add(it->second.requests);
    --n->second.pods;
  }
  if (auto r = releasing.find(uid); r != releasing.end()) {
    // Its queue let it go when it was evicted.
    releasing_by_node[r->second.node].subtract(it->second.requests);
    if (queue.count(r->second.preemptor))
      promised[r->second.preemptor].by_node[r->second.node].add(it->second.requests);
    releasing.erase(r);
  } else {
    queue_allocated[it->second.queue].subtract(it->second.requests);
  }
  const auto key = it->second.job_key;
  const auto requests = it->second.requests;
  held.erase(it);
  if (auto g = groups.find(key); g != groups.end()) {
    --g->second.held;
    g->second.allocated.subtract(requests);
    drop_group_if_idle(key);
  }
}

void Cache::admit(Queued& q, bool in) {
  if (q.standing.admitted == in) return;
  q.standing.admitted = in;
  q.standing.exempt = false;
  if (in)
    admitted_lacks.add(q.minimum);
  else
    admitted_lacks.subtract(q.minimum);
}

void Cache::dequeue(std::map<std::string, Queued>::iterator it) {
  admit(it->second, false);
  if (it->second.slot_free) --slot_free_queued;
  order.erase(it->second.place);
  if (auto g = groups.find(it->first); g != groups.end()) g->second.queued = false;
  queue.erase(it);
}

void Cache::enqueue(GangRequest r, uint64_t seq, Standing standing) {
  bool slot_free = false;
  for (const auto& a : r.pods) slot_free = slot_free || a.requests.get("pods") <= 0;
  if (slot_free) ++slot_free_queued;
  if (seq == 0) seq = ++next_seq;
  auto& group = group_of(r.job_key, r.group);
  group.queued = true;
  Place place{-group.priority, r.min_count == 0, r.created_ms, seq};
  auto key = r.job_key;
  order[place] = key;
  // All its pods are its minimum (the common ask): their sum, without gang_minimum's choosing.
  ResourceList minimum;
  if (r.min_count > 0 && static_cast<size_t>(r.min_count) == r.pods.size())
    for (const auto& a : r.pods) minimum.add(a.requests);
  else if (r.min_count > 0)
    minimum = gang_minimum(r);
  auto& queued = queue[key] = {std::move(r), place, slot_free, Standing{}, std::move(minimum)};
  queued.standing.exempt_lapsed = standing.exempt_lapsed;
  if (standing.admitted && queued.request.min_count > 0) {
    admit(queued, true);
    queued.standing = standing;
  }
}

void Cache::request(GangRequest r, bool admitted) {
  auto it = queue.find(r.job_key);
  // A gang admitted stays so when it asks anew (Volcano's pod group stays Inqueue).
  Standing standing{admitted};
  if (it != queue.end()) {
    standing = it->second.standing;
    standing.admitted = standing.admitted || admitted;
    standing.exempt_lapsed = false;  // a new request: evictions may help it again
    dequeue(it);
  }
  if (r.pods.empty()) {
    promised.erase(r.job_key);
    drop_group_if_idle(r.job_key);
    return;
  }
  enqueue(std::move(r), 0, standing);
}

std::map<std::string, QueueInfo> Cache::queue_view() const {
  auto view = queues;
  for (auto& [name, q] : view) {
    auto h = queue_allocated.find(name);
    q.allocated = h == queue_allocated.end() ? ResourceList{} : h->second;
    q.request = q.allocated;
  }
  for (const auto& [key, queued] : queue) {
    auto g = groups.find(key);
    auto q = view.find(g == groups.end() ? kDefaultQueue : g->second.info.queue);
    if (q == view.end()) continue;
    for (const auto& a : queued.request.pods) q->second.request.add(a.requests);
  }
  ResourceList total;
  for (const auto& [name, n] : nodes)
    if (n.ready) total.add(n.capacity);
  deal_shares(view, total);
  return view;
}

std::vector<QueueStatus> Cache::queue_status() const {
  std::map<std::string, QueueStatus> out;
  for (auto& [name, q] : queue_view()) out[name] = {name, q.allocated, q.deserved, 0, 0};
  for (const auto& [key, g] : groups) {
    auto q = out.find(g.info.queue);
    if (q == out.end()) continue;
    auto queued = queue.find(key);
    // Waiting for its gang, admitted or not; else in, holding nodes.
    if (queued != queue.end() && queued->second.request.min_count > 0)
      ++(queued->second.standing.admitted ? q->second.inqueue : q->second.pending);
    else if (g.held > 0)
      ++q->second.running;
  }
  std::vector<QueueStatus> list;
  for (auto& [name, s] : out) list.push_back(std::move(s));
  return list;
}

std::vector<NodeInfo> Cache::node_list() const {
  std::vector<NodeInfo> out;
  for (const auto& [name, n] : nodes) {
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

ResourceList Cache::largest_node() const {
  ResourceList out;
  for (const auto& [name, n] : nodes)
    for (const auto& [k, v] : n.capacity.values) out.values[k] = std::max(out.get(k), v);
  return out;
}

}  // namespace caldera::sched
