// One scheduling session over a snapshot (seed 004): enqueue admits pod groups whose minimum
// resources the cluster can hold, allocate gives each admitted gang its nodes through a statement
// committed only when the gang is ready, and at close each pod group gets its phase and its
// Scheduled or Unschedulable condition.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/scheduler/core/scoring.hpp"
#include "actors/scheduler/core/statement.hpp"

namespace caldera::sched {

struct SessionOptions {
  Scoring scoring = Scoring::LeastAllocated;
  // Enqueue admits pod groups up to this multiple of the ready nodes' allocatable (Volcano's
  // overcommit plugin): a little more than fits, so that pods are waiting when room appears.
  double overcommit_factor = 1.2;
  // Nodes a pod's search stops at once this many fit it (0: Kubernetes' adaptive share, 50% of
  // the nodes less 1% per 125, at least 5% and at least 100 nodes). Each search starts where
  // the previous one stopped, so that every node gets its turn.
  int nodes_to_find = 0;
  // Where, in the nodes' name order, the first search begins: a caller that runs session after
  // session passes on Allocator::next_search(), so that no node is always looked at first.
  size_t search_start = 0;
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
  // Every pod group that has pods waiting or that changed phase: its condition and phase.
  std::map<std::string, GangCondition> conditions;
  std::map<std::string, PodGroupPhase> phases;
};

// Enqueue: each Pending pod group, in job order, becomes Inqueue when its minimum resources fit
// into the cluster's allocatable times the overcommit factor, less what is in use and what the
// pod groups admitted before it (and not yet running) reserve.
void enqueue(Snapshot& snapshot, const SessionOptions& options);

// How Allocator::allocate_job treats one gang.
struct AllocateMode {
  // Unset: a dry run that always discards; the condition says whether the gang would fit now, and
  // why not.
  bool commit = true;
  // Unset: every ask is searched for, even one that fit nowhere earlier in the session (for a gang
  // given room that no other gang sees, e.g. what its victims freed).
  bool cached = true;
};

// The allocate action one gang at a time, for a caller that keeps its queue in job order and
// stops when nothing more can fit (the scheduler's Placer); allocate() below is its loop.
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

// Allocate: each admitted pod group with pods waiting, in job order, gets nodes for as many of
// them as fit, best-scored node first; the statement commits if the gang is then ready and is
// discarded otherwise.
SessionResult allocate(Snapshot& snapshot, const SessionOptions& options);

// Enqueue, allocate, then preempt (preempt.hpp) and reclaim (reclaim.hpp), then each pod
// group's phase (seed 004 section 9). There is no backfill: Volcano's places the best-effort pods
// its allocate skips, and here every pod asks a pod slot, so allocate places them with their gang.
SessionResult run_session(Snapshot& snapshot, const SessionOptions& options = {});

}  // namespace caldera::sched
