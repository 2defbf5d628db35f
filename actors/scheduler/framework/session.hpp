// One scheduling session (seed 004): opened on the cache (a snapshot of the nodes and queues, the
// gangs reached in job order as the actions walk them), run by the configured actions in order,
// and closed into what the scheduler actor carries out.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/scheduler/actions/allocate/allocator.hpp"
#include "actors/scheduler/cache/cache.hpp"
#include "actors/scheduler/framework/policy.hpp"
#include "messages/model/gang_request.hpp"

namespace caldera::sched {

// A running pod the session evicts to make room for a higher-priority gang (preempt), or for a
// gang of a queue below its share (reclaim).
struct Eviction {
  std::string job_key;
  std::string uid;
  std::string node;
  std::string preemptor;  // the job key of the gang it makes room for
  std::string reason;     // "Preempted" or "Reclaimed": the pod's reason once it has ended
};

// What one session decided: the new bindings, the evictions, and for each queued gang it could
// not place (one whose minimum is not in yet) why not.
struct Decisions {
  std::vector<Binding> bindings;
  std::vector<Eviction> evictions;
  std::map<std::string, std::string> unplaced;  // job key -> unplaced_message
  // Those of them the enqueue action has not admitted: their pod groups are Pending, the
  // others' Inqueue.
  std::set<std::string> not_enqueued;
};

// Why the enqueue action left a gang Pending.
struct Refusal {
  std::string why;
  bool by_budget = false;  // the cluster's budget, not the queue, kept it out
};

class Session {
 public:
  // Opens a session: the ready nodes with what is free on them (room promised to a preemptor
  // taken out), the queues' shares, and the enqueue action's budget.
  Session(Cache& cache, const Policy& policy);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Runs the policy's actions in order, then closes: gangs placed whole leave the queue, and the
  // stragglers of gangs now in go behind the gangs not yet in.
  Decisions run();

  Cache& cache;
  const Policy& policy;
  Snapshot snap;
  SessionResult result;  // the statements' operations, and the gangs' conditions
  Decisions decisions;

  ResourceList capacity;  // the ready nodes' in all
  MilliValue slots = 0;   // free pod slots on the ready nodes, less what this session bound

  // The enqueue action's accounting.
  ResourceList budget;                          // what the cluster has left to admit
  std::map<std::string, ResourceList> inqueue;  // per queue: the minimums of the gangs admitted
  bool exempted = false;                   // a gang is admitted past the budget (one at a time)
  std::set<std::string> awaited;           // gangs whose victims are leaving
  std::map<std::string, Refusal> refused;  // gangs it left Pending for want of budget
  // Per queue, the lowest priority of a job holding pods above its minimum (a victim for
  // preemption); computed when first asked.
  std::optional<std::map<std::string, int32_t>> lowest_held;

  std::unique_ptr<Allocator> allocator;
  std::vector<std::string> done, in;  // gangs placed whole; gangs now in, with stragglers left
  bool victims_added = false;         // running pods that preempt or reclaim may take, in snap

  // A queued gang the session can do nothing with yet: its queue or a PriorityClass it names is
  // not known to the scheduler (yet). A gang whose minimum is not in is told so and kept out.
  bool blocked(Cache::Queued& queued);
  // Drops the request's pods that hold a node already (a request that crossed its binding is
  // never bound twice); false when none is left.
  bool prune(Cache::Queued& queued);
  // Why the gang is unschedulable in Volcano's words, "2/3 tasks in gang unschedulable: ...".
  static std::string gang_message(const GangRequest& r, size_t tasks, const std::string& why);
  // What a gang the cluster could not hold even empty needs beyond it; "" when it could.
  std::string hint(const GangRequest& r) const;
  // Whether evicting pods could make room for the gang: its class may preempt a lower-priority
  // job of its queue holding more pods than its minAvailable, or another queue that may be
  // reclaimed from holds more than its share.
  bool may_preempt_in_queue(const Cache::Queued& queued);
  // Whether this session may evict at all: by preemption (the preempt action, the priority
  // plugin's preemptable and some PriorityClass to rank by), or by reclaim (the reclaim action
  // and queues whose shares bind, which the proportion plugin deals).
  bool preempts() const;
  bool reclaims() const;
  bool may_reclaim(const Cache::Queued& queued) const;

 private:
  void close();
};

}  // namespace caldera::sched
