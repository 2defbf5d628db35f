#include "actors/scheduler/core/placer.hpp"

#include <algorithm>

#include "actors/scheduler/core/gang_fit.hpp"

namespace caldera {

void Placer::upsert_node(const std::string& name, const ResourceList& capacity, bool ready,
                         const std::string& host_ip) {
  auto& n = nodes_[name];
  if (!host_ip.empty()) n.host_ip = host_ip;
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
  order_.erase(it->second.seq);
  queue_.erase(it);
}

void Placer::request(GangRequest r) {
  auto it = queue_.find(r.job_key);
  if (it != queue_.end()) dequeue(it);
  if (r.pods.empty()) return;
  bool slot_free = false;
  for (const auto& a : r.pods) slot_free = slot_free || a.requests.get("pods") <= 0;
  if (slot_free) ++slot_free_queued_;
  auto seq = ++next_seq_;
  order_[seq] = r.job_key;
  auto key = r.job_key;
  queue_[key] = {std::move(r), seq, slot_free};
}

std::string Placer::pick(const std::map<std::string, ResourceList>& free,
                         const ResourceList& req) const {
  std::string best;
  MilliValue best_cpu = -1;
  for (const auto& [name, f] : free) {
    auto n = nodes_.find(name);
    if (n == nodes_.end() || !n->second.ready || !f.fits(req)) continue;
    if (f.get("cpu") > best_cpu) {
      best = name;
      best_cpu = f.get("cpu");
    }
  }
  return best;
}

Session Placer::session() {
  Session session;
  auto& out = session.bindings;
  std::vector<uint64_t> done;
  // What the ready nodes have free at most, per resource, and their free pod slots in all: a pod
  // that does not fit `most` fits nowhere. These cheap checks keep a long queue (long exactly when
  // the cluster is full) from costing a statement per job on every release.
  ResourceList most, free_sum, capacity_sum;
  MilliValue slots = 0;
  auto survey = [&] {
    most = {};
    free_sum = {};
    capacity_sum = {};
    slots = 0;
    for (const auto& [name, n] : nodes_) {
      if (!n.ready) continue;
      for (const auto& [k, v] : n.free.values) most.values[k] = std::max(most.get(k), v);
      free_sum.add(n.free);
      capacity_sum.add(n.capacity);
      slots += std::max<MilliValue>(0, n.free.get("pods"));
    }
  };
  // Only a gang whose minimum is not in yet is reported: stragglers of a running gang wait quietly.
  auto unplaced = [&](const std::string& key, const GangRequest& r) {
    if (r.min_count > 0) session.unplaced[key] = unplaced_message(r, free_sum, capacity_sum);
  };
  survey();
  for (const auto& [seq, key] : order_) {
    if (slots <= 0 && slot_free_queued_ == 0)
      break;  // every waiting pod needs a slot: none is left
    auto& r = queue_.at(key).request;
    // A pod bound already (a request that crossed its binding) is never bound twice.
    std::erase_if(r.pods, [&](const PodAsk& a) { return held_.count(a.uid) > 0; });
    r.min_count = std::min<int32_t>(r.min_count, static_cast<int32_t>(r.pods.size()));
    if (r.pods.empty()) {
      done.push_back(seq);
      continue;
    }
    int32_t could_fit = 0;
    MilliValue least_slot = -1;
    for (const auto& a : r.pods) {
      if (most.fits(a.requests)) ++could_fit;
      auto slot = a.requests.get("pods");
      if (least_slot < 0 || slot < least_slot) least_slot = slot;
    }
    if (could_fit == 0 || could_fit < r.min_count || r.min_count * least_slot > slots) {
      unplaced(key, r);
      continue;
    }

    // A statement: tentative allocations on a copy, committed only when the gang is whole. The
    // pods each task needs go first, so that the others cannot take their room.
    std::map<std::string, ResourceList> free;
    for (const auto& [name, n] : nodes_) free[name] = n.free;
    std::vector<size_t> order;
    std::vector<bool> first(r.pods.size(), false);
    std::map<std::string, int32_t> counted;
    for (size_t i = 0; i < r.pods.size(); ++i) {
      auto need = r.task_min.find(r.pods[i].task);
      if (need != r.task_min.end() && counted[need->first]++ < need->second) {
        first[i] = true;
        order.push_back(i);
      }
    }
    for (size_t i = 0; i < r.pods.size(); ++i)
      if (!first[i]) order.push_back(i);
    std::vector<std::pair<size_t, std::string>> tentative;
    std::map<std::string, int32_t> of_task;
    for (auto i : order) {
      auto node = pick(free, r.pods[i].requests);
      if (node.empty()) continue;
      free[node].subtract(r.pods[i].requests);
      tentative.emplace_back(i, node);
      ++of_task[r.pods[i].task];
    }
    bool tasks_met = true;
    for (const auto& [task, need] : r.task_min) tasks_met = tasks_met && of_task[task] >= need;
    if (tentative.empty() || static_cast<int32_t>(tentative.size()) < r.min_count || !tasks_met) {
      unplaced(key, r);  // discard
      continue;
    }
    std::vector<PodAsk> rest;
    std::vector<bool> placed(r.pods.size(), false);
    for (const auto& [i, node] : tentative) {
      reserve(key, r.pods[i].uid, node, r.pods[i].requests);
      out.push_back({key, r.pods[i].uid, node, nodes_[node].host_ip, r.pods[i].requests});
      placed[i] = true;
    }
    for (size_t i = 0; i < r.pods.size(); ++i)
      if (!placed[i]) rest.push_back(std::move(r.pods[i]));
    if (rest.empty()) {
      done.push_back(seq);
    } else {
      r.pods = std::move(rest);
      r.min_count = 0;  // the gang is in; stragglers go one by one
      r.task_min.clear();
    }
    survey();
  }
  for (auto seq : done) dequeue(queue_.find(order_.at(seq)));
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
