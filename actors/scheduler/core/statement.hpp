// A session's snapshot and its statement (seed 004 section 6): Allocate, Pipeline and Evict are
// recorded against the snapshot; Commit hands them to the actor to carry out, Discard undoes
// them in reverse so that the snapshot is exactly as it was.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "actors/scheduler/core/job_info.hpp"
#include "actors/scheduler/core/node_state.hpp"
#include "actors/scheduler/core/queue_share.hpp"

namespace caldera::sched {

// What a session decides on: its own copy of the nodes and of the pod groups.
struct Snapshot {
  std::map<std::string, NodeState> nodes;
  std::vector<JobInfo> jobs;
  // The queues whose shares and capability bind their jobs (a job of a queue not here is bound
  // by neither).
  std::map<std::string, QueueInfo> queues;
  bool operator==(const Snapshot&) const = default;
};

enum class OpKind { Allocate, Pipeline, Evict };

// A committed operation, for the actor: bind (Allocate), hold a place for after the evictions
// (Pipeline) or evict (Evict) the pod `task_uid` of `job`.
struct Operation {
  OpKind kind = OpKind::Allocate;
  std::string job;
  std::string task_uid;
  std::string node;
  std::string reason;  // for Evict: why (e.g. "Preempted")
  ResourceList requests;
};

class Statement {
 public:
  explicit Statement(Snapshot& snapshot) : s_(snapshot) {}
  // Each takes the index of the job in the snapshot and of the task in the job. Allocate and
  // Pipeline take a Pending task; Evict a task that holds a node.
  void allocate(size_t job, size_t task, const std::string& node);
  void pipeline(size_t job, size_t task, const std::string& node);
  void evict(size_t job, size_t task, const std::string& reason);

  // The operations in the order they were recorded; the snapshot keeps their effects.
  std::vector<Operation> commit();
  // Undoes every operation, last first.
  void discard();
  // Undoes the operations recorded since size() was `mark`, last first.
  void discard_from(size_t mark);
  size_t size() const { return ops_.size(); }

 private:
  struct Recorded {
    OpKind kind;
    size_t job, task;
    std::string reason;
    TaskStatus status_before;
    std::string node_before;
    std::string node;
    ResourceList idle_before, releasing_before, pipelined_before;
  };
  Recorded& record(OpKind kind, size_t job, size_t task, const std::string& node);

  Snapshot& s_;
  std::vector<Recorded> ops_;
};

}  // namespace caldera::sched
