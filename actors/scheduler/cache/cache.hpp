// The scheduler's cache between sessions (Volcano's SchedulerCache): the nodes, the pods that hold
// them, the queued gangs in job order with their standing, and the room evictions are freeing.
// A session opens on it, and what the session commits is written back into it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/scheduler/core/queue_share.hpp"
#include "messages/model/gang_request.hpp"
#include "messages/model/node_info.hpp"
#include "messages/model/priority_class.hpp"
#include "messages/model/queue.hpp"
#include "messages/model/resources.hpp"

namespace caldera::sched {

struct Cache {
  struct Node {
    ResourceList capacity;
    ResourceList free;
    bool ready = false;
    int32_t pods = 0;
    std::string host_ip;
    std::map<std::string, std::string> labels;  // for nodeSelector
    std::vector<Taint> taints;
  };
  struct Held {
    std::string job_key;
    std::string node;
    ResourceList requests;
    std::string queue = {};  // whose allocated it counts in
  };
  // A job known by its queued request or its held pods.
  struct Group {
    PodGroupInfo info;
    int32_t priority = 0;    // resolved from info.priority_class
    int32_t held = 0;        // pods that hold a node
    ResourceList allocated;  // what they hold
    bool queued = false;
  };
  struct Releasing {
    std::string node;
    std::string preemptor;  // the job key the eviction made room for
  };
  // What evicted pods have freed, per preemptor and node: kept for the preemptor until it is
  // bound (or gives up), so that a lower-priority job cannot take it meanwhile (a gang whose
  // victims end one by one would otherwise lose each freed piece to the next small pod).
  struct Promise {
    std::map<std::string, ResourceList> by_node;
    int idle_sessions = 0;  // sessions since its last victim ended in which it was not bound
  };
  // A queued gang's place, in job order: higher priority first, a gang not yet in before the
  // stragglers of one that is, then the older job, then the order of the requests.
  struct Place {
    int32_t neg_priority = 0;
    bool in = false;
    int64_t created_ms = 0;
    uint64_t seq = 0;
    auto operator<=>(const Place&) const = default;
  };
  // A gang's standing with the enqueue action, kept when it asks anew.
  struct Standing {
    // The enqueue action let its gang in (its pod group is Inqueue): what its minimum asks is
    // counted against the cluster's budget and its queue's share until it is in.
    bool admitted = false;
    bool exempt = false;         // admitted past the budget, for evictions that could make room
    int exempt_idle = 0;         // sessions it has been exempt with no victim leaving for it
    bool exempt_lapsed = false;  // its exemption lapsed so: none again until it asks anew
  };
  struct Queued {
    GangRequest request;
    Place place;             // its key in order
    bool slot_free = false;  // some pod asks for no pod slot (the job controller's never do)
    Standing standing;
    ResourceList minimum;  // gang_minimum of the request, while its minimum is not in
  };
  // A preemptor not bound this many sessions after its last victim has ended gives its room
  // back (its queue came to hold its share meanwhile, a node went away, ...).
  static constexpr int kPromiseSessions = 3;

  Cache();

  // A node joined or changed; its free amount is capacity minus what its bindings hold.
  void upsert_node(const std::string& name, const ResourceList& capacity, bool ready,
                   const std::string& host_ip, const std::map<std::string, std::string>& labels);
  void set_ready(const std::string& name, bool ready);
  // Takes over a binding (made by a session, or before a coordinator restart). Idempotent.
  void reserve(const std::string& job_key, const std::string& uid, const std::string& node,
               const ResourceList& requests, const PodGroupInfo& group = {});
  // The pod ended or was never started: give its resources back. Unknown uids are ignored.
  void release(const std::string& uid);
  // Replaces the job's earlier request; an empty request cancels it. A gang admitted stays so;
  // `admitted`: it was admitted before (its binding fell through), and is again.
  void request(GangRequest r, bool admitted);
  void set_queues(const std::vector<Queue>& queues, const std::vector<PriorityClass>& classes);

  // Per queue: what its pods hold, its deserved share now, and its pod groups waiting and in.
  std::vector<QueueStatus> queue_status() const;
  // The queues with their allocated and the request of every waiting ask; shares dealt.
  std::map<std::string, QueueInfo> queue_view() const;
  std::vector<NodeInfo> node_list() const;
  ResourceList largest_node() const;

  int32_t priority_of(const PodGroupInfo& info) const;
  bool may_preempt(const PodGroupInfo& info) const;
  // The PriorityClass the gang (or one of its pods) names that classes lacks; "" when none.
  std::string unknown_class(const GangRequest& r) const;

  void admit(Queued& q, bool in);  // counts its minimum as admitted, or no longer
  void dequeue(std::map<std::string, Queued>::iterator it);
  // seq 0: after every request so far; `standing`: what it had before it asked anew.
  void enqueue(GangRequest r, uint64_t seq, Standing standing);
  void enqueue(GangRequest r) { enqueue(std::move(r), 0, Standing{}); }
  void drop_group_if_idle(const std::string& job_key);

  std::map<std::string, Node> nodes;
  std::map<std::string, Held> held;                       // by pod uid
  std::map<std::string, Group> groups;                    // by job key
  std::map<std::string, ResourceList> queue_allocated;    // what each queue's pods hold
  std::map<std::string, ResourceList> releasing_by_node;  // held by pods being evicted
  std::map<std::string, Releasing> releasing;             // evicted pods, by uid, until released
  std::map<std::string, Promise> promised;                // by preemptor job key
  std::map<std::string, QueueInfo> queues;                // by name; `default` always there
  std::map<std::string, PriorityClass> classes;
  std::map<std::string, std::vector<Taint>> node_taints;  // by node name: the cluster config's
  bool queues_bind = false;     // some queue has a weight or capability that matters
  bool use_priority = true;     // the priority plugin: classes order jobs and tasks (else all 0)
  ResourceList admitted_lacks;  // all admitted gangs' minimums
  std::map<std::string, Queued> queue;  // by job key
  std::map<Place, std::string> order;   // job keys in job order
  uint64_t next_seq = 0;
  size_t slot_free_queued = 0;  // queued requests with slot_free set
  size_t search_start = 0;      // where the next session's node search begins

 private:
  Group& group_of(const std::string& job_key, const PodGroupInfo& info);
};

}  // namespace caldera::sched
