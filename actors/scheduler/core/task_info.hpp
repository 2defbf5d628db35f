// A pod as a scheduling session sees it (Volcano's TaskInfo): its task, its ask and its status.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "messages/model/resources.hpp"
#include "messages/model/taint.hpp"

namespace caldera::sched {

// Volcano's task statuses. Allocated and Pipelined exist only inside a session: a statement
// records them, and the scheduler binds (Binding, then Bound) what a committed one allocated.
enum class TaskStatus {
  Pending,    // waits for a node
  Allocated,  // given a node in this session, not yet bound
  Pipelined,  // will take a node once its victims have left (preempt)
  Binding,    // its node is reserving it (the cross-node prepare)
  Bound,      // reserved on its node, not yet running
  Running,
  Releasing,  // being evicted: still holds its node until it ends
  Succeeded,
  Failed,
  Unknown,
};

std::string_view to_string(TaskStatus s);

// Bound, Binding, Running or Allocated: the statuses that hold a node (Volcano's AllocatedStatus,
// counted by ReadyTaskNum).
bool allocated_status(TaskStatus s);

struct TaskInfo {
  std::string uid;
  std::string name;      // the pod's name, {job}-{task}-{index}
  std::string task;      // the task (Volcano's role) the pod belongs to
  int32_t priority = 0;  // the task's priority: higher goes first within its job
  ResourceList requests;
  TaskStatus status = TaskStatus::Pending;
  std::string node;  // where it is allocated, pipelined or bound; "" while pending
  std::map<std::string, std::string> node_selector;  // labels its node must have
  int32_t partition = -1;  // its task's partition: allocated with the rest of it, or not at all
  std::vector<Toleration> tolerations = {};  // the node taints it may go past

  // A pod that asks for nothing, not even a pod slot, fits anywhere: Volcano's best effort.
  bool best_effort() const;
  bool operator==(const TaskInfo&) const = default;
};

}  // namespace caldera::sched
