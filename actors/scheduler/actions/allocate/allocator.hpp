// The allocate action's work on a snapshot (seed 004): a gang's pending pods, in task order,
// each on its best-scored fitting node through a statement committed only when the gang is then
// ready; otherwise discarded, and the gang's Unschedulable condition says why per node.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/scheduler/core/scoring.hpp"
#include "actors/scheduler/core/statement.hpp"

namespace caldera::sched {

struct SessionOptions {
  NodeScoring scoring;  // Volcano's default: nodeorder's leastrequested and balancedresource
  // Enqueue admits pod groups up to this multiple of the ready nodes' allocatable (Volcano's
  // overcommit plugin): a little more than fits, so that pods are waiting when room appears.
  double overcommit_factor = 1.2;
  // Volcano's gang plugin: a gang's statement commits only when its minimum is placed (else
  // whatever fits is bound); with its preemptable, no eviction takes a job below its minimum.
  bool gang = true;
  bool gang_protects_victims = true;
  // Nodes a pod's search stops at once this many fit it (0: Kubernetes' adaptive share, 50% of
  // the nodes less 1% per 125, at least 5% and at least 100 nodes). Each search starts where
  // the previous one stopped, so that every node gets its turn.
  int nodes_to_find = 0;
  // Where, in the nodes' name order, the first search begins: a caller that runs session after
  // session passes on Allocator::next_search(), so that no node is always looked at first.
  size_t search_start = 0;
  bool operator==(const SessionOptions&) const = default;
};

// Per task, the pods its minimum still lacks beyond those holding a node (none when the task
// check does not apply: minAvailable below the sum of the task minimums).
std::map<std::string, int32_t> missing_task_pods(const JobInfo& job);

// The job's pending pods in the order a statement tries them: the pods each task's minimum lacks
// first, so that the others cannot take their room, then by task order.
std::vector<size_t> pending_in_order(const JobInfo& job);

// The snapshot's job indices in job order (job_before).
std::vector<size_t> job_order(const Snapshot& s);

// How many fitting nodes a search looks for among `nodes`, by SessionOptions::nodes_to_find.
size_t nodes_to_find(size_t nodes, int configured);

// A pod group's condition after a session: Scheduled, or Unschedulable with why.
struct GangCondition {
  bool scheduled = false;
  std::string reason;  // "NotEnoughResources", "NotEnoughPods", "NotEnoughPodsOfTask", ...
  std::string message;
  bool operator==(const GangCondition&) const = default;
};

struct SessionResult {
  std::vector<Operation> operations;  // committed, in order
  // Every pod group allocate looked at: its condition.
  std::map<std::string, GangCondition> conditions;
};

// How Allocator::allocate_job treats one gang.
struct AllocateMode {
  // Unset: a dry run that always discards; the condition says whether the gang would fit now, and
  // why not.
  bool commit = true;
  // Unset: every ask is searched for, even one that fit nowhere earlier in the session (for a gang
  // given room that no other gang sees, e.g. what its victims freed).
  bool cached = true;
  // Set: once the gang is ready, its other pods wait for their turn (Volcano's allocate pushes
  // the job back so that others, by the drf plugin's order, go between). Not for partitions.
  bool until_ready = false;
};

// The allocate action's work on one gang (actions/allocate walks the queue in job order and
// hands each gang here).
class Allocator {
 public:
  Allocator(Snapshot& snapshot, const SessionOptions& options);
  ~Allocator();
  // Gives the pending pods of snapshot.jobs[job] nodes through a statement, committed (its
  // operations appended to out.operations) if the gang is then ready and discarded otherwise;
  // sets the gang's condition in out.conditions. Nothing for a job with no pod pending, nor for
  // one still Pending (not admitted).
  void allocate_job(size_t job, SessionResult& out, AllocateMode mode = {});
  // Where the next search would begin (for SessionOptions::search_start).
  size_t next_search() const;

 private:
  struct Search;
  Snapshot& s_;
  SessionOptions options_;
  std::unique_ptr<Search> search_;
};

}  // namespace caldera::sched
