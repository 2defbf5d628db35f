#include "actors/scheduler/core/statement.hpp"

namespace caldera::sched {

Statement::Recorded& Statement::record(OpKind kind, size_t job, size_t task,
                                       const std::string& node) {
  const TaskInfo& t = s_.jobs.at(job).tasks.at(task);
  const NodeState& n = s_.nodes.at(node);
  // The node's sums as they were: undoing by arithmetic could leave a zero entry that was absent
  // before, and a discarded session must leave no trace.
  ops_.push_back({kind, job, task, {}, t.status, t.node, node, n.idle, n.releasing, n.pipelined});
  return ops_.back();
}

void Statement::allocate(size_t job, size_t task, const std::string& node) {
  record(OpKind::Allocate, job, task, node);
  TaskInfo& t = s_.jobs[job].tasks[task];
  s_.nodes[node].idle.subtract(t.requests);
  t.status = TaskStatus::Allocated;
  t.node = node;
}

void Statement::pipeline(size_t job, size_t task, const std::string& node) {
  record(OpKind::Pipeline, job, task, node);
  TaskInfo& t = s_.jobs[job].tasks[task];
  s_.nodes[node].pipelined.add(t.requests);
  t.status = TaskStatus::Pipelined;
  t.node = node;
}

void Statement::evict(size_t job, size_t task, const std::string& reason) {
  TaskInfo& t = s_.jobs.at(job).tasks.at(task);
  record(OpKind::Evict, job, task, t.node).reason = reason;
  // It holds its node until it has ended: its resources are releasing, not idle.
  s_.nodes[t.node].releasing.add(t.requests);
  t.status = TaskStatus::Releasing;
}

std::vector<Operation> Statement::commit() {
  std::vector<Operation> out;
  out.reserve(ops_.size());
  for (const auto& op : ops_) {
    const JobInfo& j = s_.jobs[op.job];
    const TaskInfo& t = j.tasks[op.task];
    out.push_back({op.kind, j.uid, t.uid, op.node, op.reason, t.requests});
  }
  ops_.clear();
  return out;
}

void Statement::discard() {
  discard_from(0);
}

void Statement::discard_from(size_t mark) {
  if (mark >= ops_.size()) return;
  for (auto op = ops_.rbegin(); op != ops_.rend() - static_cast<std::ptrdiff_t>(mark); ++op) {
    TaskInfo& t = s_.jobs[op->job].tasks[op->task];
    NodeState& n = s_.nodes[op->node];
    t.status = op->status_before;
    t.node = op->node_before;
    n.idle = std::move(op->idle_before);
    n.releasing = std::move(op->releasing_before);
    n.pipelined = std::move(op->pipelined_before);
  }
  ops_.erase(ops_.begin() + static_cast<std::ptrdiff_t>(mark), ops_.end());
}

}  // namespace caldera::sched
