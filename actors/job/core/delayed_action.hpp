// A policy action with a timeout, waiting to fire (seed 000 section 6): what it is for, and the
// rules that cancel it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "messages/model/lifecycle.hpp"

namespace caldera {

// Which pods an action touches, and so which other delayed actions it supersedes (section 6.4).
enum class ActionLevel { Job, Task, Pod, Partition };
ActionLevel level_of(Action a);

struct DelayedAction {
  std::string pod_name;
  std::string pod_uid;  // the pod that raised the event; a new pod of the same name is another
  std::string task;
  int32_t partition = -1;
  Event event = Event::Any;
  Action action = Action::SyncJob;
  int64_t due_ms = 0;
  bool operator==(const DelayedAction&) const = default;
};

// Section 6.3: the pod (by uid) left Pending, so its PodPending actions are moot; the pod (by
// name) runs again, so its PodFailed / PodEvicted actions are moot. Returns what was cancelled.
std::vector<DelayedAction> cancel_on_event(std::vector<DelayedAction>& delayed, Event event,
                                           const std::string& pod_name, const std::string& pod_uid);

// Section 6.4: `fired` ran, so the others of its level go: every one for a job-level action, the
// same task's, pod's or partition's otherwise.
void cancel_same_level(std::vector<DelayedAction>& delayed, const DelayedAction& fired);

}  // namespace caldera
