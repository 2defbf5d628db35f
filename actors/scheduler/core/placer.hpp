// The scheduler's queue and node accounting between sessions: each session hands the waiting
// gangs and the nodes to the gang scheduler's session (sched::allocate), and keeps what it bound.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/scheduler/core/queue_share.hpp"
#include "actors/scheduler/core/scoring.hpp"
#include "actors/scheduler/core/session.hpp"
#include "messages/model/gang_request.hpp"
#include "messages/model/node_info.hpp"
#include "messages/model/priority_class.hpp"
#include "messages/model/queue.hpp"
#include "messages/model/resources.hpp"

namespace caldera {

// A running pod the session evicts to make room for a higher-priority gang (preempt), or for a
// gang of a queue below its share (reclaim).
struct Eviction {
  std::string job_key;
  std::string uid;
  std::string node;
  std::string preemptor;  // the job key of the gang it makes room for
  std::string reason;     // "Preempted" or "Reclaimed": the pod's reason once it has ended
};

// What one scheduling session did: the new bindings, the evictions, and for each queued gang it
// could not place (one whose minimum is not in yet) why not.
struct Session {
  std::vector<Binding> bindings;
  std::vector<Eviction> evictions;
  std::map<std::string, std::string> unplaced;  // job key -> unplaced_message
  // Those of them the enqueue action has not admitted: their pod groups are Pending, the
  // others' Inqueue.
  std::set<std::string> not_enqueued;
};

class Placer {
 public:
  explicit Placer(sched::Scoring scoring = sched::Scoring::LeastAllocated);
  // A node joined or changed; its free amount is capacity minus what its bindings hold.
  void upsert_node(const std::string& name, const ResourceList& capacity, bool ready,
                   const std::string& host_ip = {},
                   const std::map<std::string, std::string>& labels = {});
  void set_ready(const std::string& name, bool ready);
  // Takes over a binding made before (after a coordinator restart). Idempotent.
  void reserve(const std::string& job_key, const std::string& uid, const std::string& node,
               const ResourceList& requests, const PodGroupInfo& group = {});
  // The Queues and PriorityClasses as the coordinator stores them (`default` among the queues).
  void set_queues(const std::vector<Queue>& queues, const std::vector<PriorityClass>& classes);
  // Per queue: what its pods hold, its deserved share now, and its pod groups waiting and in.
  std::vector<QueueStatus> queue_status() const;
  // The pod ended or was never started: give its resources back. Unknown uids are ignored.
  void release(const std::string& uid);
  // Replaces the job's earlier request; an empty request cancels it. A gang admitted stays so;
  // `admitted`: it was admitted before (its binding fell through), and is again.
  void request(GangRequest r, bool admitted = false);
  // Places what fits now, in job order (sched::job_before), and returns the new bindings.
  std::vector<Binding> schedule() { return session().bindings; }
  Session session();

  std::vector<NodeInfo> nodes() const;
  bool ready(const std::string& node) const;
  ResourceList largest_node() const;
  size_t waiting() const { return queue_.size(); }

 private:
  struct Node {
    ResourceList capacity;
    ResourceList free;
    bool ready = false;
    int32_t pods = 0;
    std::string host_ip;
    std::map<std::string, std::string> labels;  // for nodeSelector
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
    int32_t priority = 0;  // resolved from info.priority_class
    int32_t held = 0;      // pods that hold a node
    bool queued = false;
  };
  std::map<std::string, Node> nodes_;
  std::map<std::string, Held> held_;                       // by pod uid
  std::map<std::string, Group> groups_;                    // by job key
  std::map<std::string, ResourceList> queue_allocated_;    // what each queue's pods hold
  std::map<std::string, ResourceList> releasing_by_node_;  // held by pods being evicted
  struct Releasing {
    std::string node;
    std::string preemptor;  // the job key the eviction made room for
  };
  std::map<std::string, Releasing> releasing_;  // evicted pods, by uid, until released
  // What evicted pods have freed, per preemptor and node: kept for the preemptor until it is
  // bound (or gives up), so that a lower-priority job cannot take it meanwhile (a gang whose
  // victims end one by one would otherwise lose each freed piece to the next small pod).
  struct Promise {
    std::map<std::string, ResourceList> by_node;
    int idle_sessions = 0;  // sessions since its last victim ended in which it was not bound
  };
  std::map<std::string, Promise> promised_;
  // A preemptor not bound this many sessions after its last victim has ended gives its room
  // back (its queue came to hold its share meanwhile, a node went away, ...).
  static constexpr int kPromiseSessions = 3;
  // Gangs refused for want of budget that a session dry-runs to say why they would not fit.
  static constexpr int kDryRuns = 16;
  // Queued requests a session still looks at once no pod slot is left, for the preempt and
  // reclaim actions (the highest priority first).
  static constexpr int kSlotlessCandidates = 8;
  // ... and how many entries it passes over for them (stragglers, refused gangs) at most.
  static constexpr int kSlotlessVisits = 256;
  std::map<std::string, sched::QueueInfo> queues_;  // by name; `default` always there
  std::map<std::string, PriorityClass> classes_;
  // The PriorityClass the gang (or one of its pods) names that classes_ lacks; "" when none.
  std::string unknown_class(const GangRequest& r) const;
  bool queues_bind_ = false;  // some queue has a weight or capability that matters

  Group& group_of(const std::string& job_key, const PodGroupInfo& info);
  void drop_group_if_idle(const std::string& job_key);
  int32_t priority_of(const PodGroupInfo& info) const;
  bool may_preempt(const PodGroupInfo& info) const;
  // The queues with their allocated and the request of every waiting ask; shares dealt.
  std::map<std::string, sched::QueueInfo> queue_view() const;
  void evict(sched::Snapshot& snap, Session& session, const sched::SessionOptions& options);
  // A queued gang's place, in sched::job_before's order: higher priority first, a gang not yet
  // in before the stragglers of one that is (unready first), then the older job, then the order
  // of the requests.
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
    Place place;             // its key in order_
    bool slot_free = false;  // some pod asks for no pod slot (the job controller's never do)
    Standing standing;
    ResourceList minimum;  // gang_minimum of the request, while its minimum is not in
  };
  void dequeue(std::map<std::string, Queued>::iterator it);
  // seq 0: after every request so far; `standing`: what it had before it asked anew.
  void enqueue(GangRequest r, uint64_t seq, Standing standing);
  void enqueue(GangRequest r, uint64_t seq = 0);
  void admit(Queued& q, bool in);  // counts its minimum as admitted, or no longer
  struct Refusal {
    std::string why;
    bool by_budget = false;  // the cluster's budget, not the queue, kept it out
  };
  // A session's enqueue action so far, in job order.
  struct Enqueueing {
    ResourceList budget;                          // what the cluster has left to admit
    ResourceList capacity;                        // the ready nodes' in all
    std::map<std::string, ResourceList> inqueue;  // per queue: the minimums of the gangs admitted
    bool exempted = false;  // a gang is admitted past the budget (one at a time)
    const std::set<std::string>* awaited = nullptr;  // gangs whose victims are leaving
    int dry_runs = 0;                                // of gangs refused for want of budget
  };
  // The enqueue action for a gang whose minimum is not in: nullopt when it is admitted (or was),
  // else why not.
  std::optional<Refusal> enqueue_gang(Queued& q, const sched::Snapshot& snap, Enqueueing& e);
  // Whether evicting pods could make room for the gang, which the enqueue action then admits
  // beyond the overcommit budget (and, for preemption, its queue's share: the room comes from
  // its own queue): its class may preempt a lower-priority job of its queue holding more pods
  // than its minAvailable, or another queue that may be reclaimed from holds more than its share.
  bool may_preempt_in_queue(const Queued& q, const sched::Snapshot& snap);
  bool may_reclaim(const Queued& q, const sched::Snapshot& snap) const;
  ResourceList admitted_lacks_;                                // all admitted gangs' minimums
  std::optional<std::map<std::string, int32_t>> lowest_held_;  // per queue; a session's cache

  std::map<std::string, Queued> queue_;  // by job key
  std::map<Place, std::string> order_;   // job keys in job order
  uint64_t next_seq_ = 0;
  size_t slot_free_queued_ = 0;  // queued requests with slot_free set
  sched::Scoring scoring_;
  size_t search_start_ = 0;  // where the next session's node search begins
};

}  // namespace caldera
