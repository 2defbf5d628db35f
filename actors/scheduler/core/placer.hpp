// The scheduler actor's placement state: the cache of nodes, held pods and queued gangs between
// sessions, and the configuration each session runs (sched::Session: its actions in order).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "actors/scheduler/cache/cache.hpp"
#include "actors/scheduler/framework/policy.hpp"
#include "actors/scheduler/framework/session.hpp"

namespace caldera {

using sched::Decisions;
using sched::Eviction;

class Placer {
 public:
  explicit Placer(sched::Policy policy = {});
  explicit Placer(sched::Scoring scoring);
  // A node joined or changed; its free amount is capacity minus what its bindings hold.
  void upsert_node(const std::string& name, const ResourceList& capacity, bool ready,
                   const std::string& host_ip = {},
                   const std::map<std::string, std::string>& labels = {}) {
    cache_.upsert_node(name, capacity, ready, host_ip, labels);
  }
  void set_ready(const std::string& name, bool ready) { cache_.set_ready(name, ready); }
  // Each node's taints (the cluster config's), for the nodes as they join.
  void set_node_taints(std::map<std::string, std::vector<Taint>> taints) {
    cache_.node_taints = std::move(taints);
  }
  // Takes over a binding made before (after a coordinator restart). Idempotent.
  void reserve(const std::string& job_key, const std::string& uid, const std::string& node,
               const ResourceList& requests, const PodGroupInfo& group = {}) {
    cache_.reserve(job_key, uid, node, requests, group);
  }
  // The Queues and PriorityClasses as the coordinator stores them (`default` among the queues).
  void set_queues(const std::vector<Queue>& queues, const std::vector<PriorityClass>& classes) {
    cache_.set_queues(queues, classes);
  }
  // Per queue: what its pods hold, its deserved share now, and its pod groups waiting and in.
  std::vector<QueueStatus> queue_status() const { return cache_.queue_status(); }
  // The pod ended or was never started: give its resources back. Unknown uids are ignored.
  void release(const std::string& uid) { cache_.release(uid); }
  // Replaces the job's earlier request; an empty request cancels it. A gang admitted stays so;
  // `admitted`: it was admitted before (its binding fell through), and is again.
  void request(GangRequest r, bool admitted = false);
  // One session: the configured actions over the cache; what fits now is bound.
  std::vector<Binding> schedule() { return session().bindings; }
  Decisions session();

  std::vector<NodeInfo> nodes() const { return cache_.node_list(); }
  bool ready(const std::string& node) const;
  ResourceList largest_node() const { return cache_.largest_node(); }
  size_t waiting() const { return cache_.queue.size(); }
  const sched::Policy& policy() const { return policy_; }

 private:
  sched::Cache cache_;
  sched::Policy policy_;
};

}  // namespace caldera
