#include "actors/scheduler/core/task_info.hpp"

namespace caldera::sched {

std::string_view to_string(TaskStatus s) {
  switch (s) {
    case TaskStatus::Pending:
      return "Pending";
    case TaskStatus::Allocated:
      return "Allocated";
    case TaskStatus::Pipelined:
      return "Pipelined";
    case TaskStatus::Binding:
      return "Binding";
    case TaskStatus::Bound:
      return "Bound";
    case TaskStatus::Running:
      return "Running";
    case TaskStatus::Releasing:
      return "Releasing";
    case TaskStatus::Succeeded:
      return "Succeeded";
    case TaskStatus::Failed:
      return "Failed";
    case TaskStatus::Unknown:
      return "Unknown";
  }
  return "Unknown";
}

bool allocated_status(TaskStatus s) {
  return s == TaskStatus::Bound || s == TaskStatus::Binding || s == TaskStatus::Running ||
         s == TaskStatus::Allocated;
}

bool TaskInfo::best_effort() const {
  // A pod slot counts: a pod that needs one cannot go just anywhere, and the gang checks must
  // not count it ready before it has one.
  for (const auto& [name, amount] : requests.values)
    if (amount > 0) return false;
  return true;
}

}  // namespace caldera::sched
