// Whether a pod may go on a node, and why not: the session's predicates, and the reasons of a
// gang that fits nowhere counted per node ("3 nodes: insufficient cpu; 1 node: NotReady").
#pragma once

#include <map>
#include <string>
#include <vector>

#include "actors/scheduler/core/node_state.hpp"
#include "actors/scheduler/core/task_info.hpp"

namespace caldera::sched {

// Every reason `node` refuses `task` against `room` (the node's idle resources, or its future
// idle ones for a pipelined pod): "NotReady", "node selector does not match", "untolerated taint
// {dedicated: gpu}", "insufficient cpu"
// (one per resource short; a pod slot short is "too many pods"). Empty: it fits.
std::vector<std::string> refusals(const NodeState& node, const TaskInfo& task,
                                  const ResourceList& room);

// The same against the node's idle resources.
std::vector<std::string> refusals(const NodeState& node, const TaskInfo& task);

// Whether refusals(node, task) would be empty, without the words.
bool fits(const NodeState& node, const TaskInfo& task);
// The same against `room` (a node's future idle resources, for a pipelined pod).
bool fits(const NodeState& node, const TaskInfo& task, const ResourceList& room);
// Whatever its room: the node is Ready, matches the pod's node selector and has no taint the pod
// does not tolerate.
bool may_host(const NodeState& node, const TaskInfo& task);

// Reasons counted over nodes, for the Unschedulable condition.
class FitErrors {
 public:
  void add(const std::vector<std::string>& reasons);
  bool empty() const { return nodes_ == 0; }
  // "3 nodes: insufficient cpu; 1 node: NotReady": most nodes first, then by reason.
  std::string message() const;

 private:
  std::map<std::string, int> count_;
  int nodes_ = 0;
};

}  // namespace caldera::sched
