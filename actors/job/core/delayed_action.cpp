#include "actors/job/core/delayed_action.hpp"

#include <algorithm>

namespace caldera {

ActionLevel level_of(Action a) {
  switch (a) {
    case Action::RestartTask:
      return ActionLevel::Task;
    case Action::RestartPod:
      return ActionLevel::Pod;
    case Action::RestartPartition:
      return ActionLevel::Partition;
    default:
      return ActionLevel::Job;
  }
}

std::vector<DelayedAction> cancel_on_event(std::vector<DelayedAction>& delayed, Event event,
                                           const std::string& pod_name,
                                           const std::string& pod_uid) {
  std::vector<DelayedAction> cancelled;
  auto moot = [&](const DelayedAction& d) {
    if (event != Event::PodPending && d.event == Event::PodPending && d.pod_uid == pod_uid)
      return true;
    return event == Event::PodRunning && d.pod_name == pod_name &&
           (d.event == Event::PodFailed || d.event == Event::PodEvicted);
  };
  auto it = std::stable_partition(delayed.begin(), delayed.end(),
                                  [&](const DelayedAction& d) { return !moot(d); });
  cancelled.assign(it, delayed.end());
  delayed.erase(it, delayed.end());
  return cancelled;
}

void cancel_same_level(std::vector<DelayedAction>& delayed, const DelayedAction& fired) {
  auto same = [&](const DelayedAction& d) {
    switch (level_of(fired.action)) {
      case ActionLevel::Job:
        return true;
      case ActionLevel::Task:
        return d.task == fired.task;
      case ActionLevel::Pod:
        return d.pod_name == fired.pod_name;
      case ActionLevel::Partition:
        return d.task == fired.task && d.partition == fired.partition;
    }
    return false;
  };
  delayed.erase(std::remove_if(delayed.begin(), delayed.end(), same), delayed.end());
}

}  // namespace caldera
