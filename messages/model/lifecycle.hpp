// Volcano's lifecycle vocabulary: events, actions and the policies that map one to the other.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace caldera {

enum class Event {
  Any,  // "*"
  PodPending,
  PodRunning,
  PodFailed,
  PodEvicted,
  TaskCompleted,
  TaskFailed,
  JobUnknown,
  OutOfSync,
  CommandIssued,
};

enum class Action {
  SyncJob,
  RestartJob,
  AbortJob,
  TerminateJob,
  CompleteJob,
  ResumeJob,
  RestartTask,
  RestartPod,
  RestartPartition,
};

struct LifecyclePolicy {
  std::vector<Event> events;  // Volcano's `event` and `events`, merged
  std::optional<int32_t> exit_code;
  Action action = Action::SyncJob;
  std::optional<int64_t> timeout_ms;
  bool operator==(const LifecyclePolicy&) const = default;
};

// Volcano's spelling ("PodFailed", "*", "RestartJob") <-> enum; nullopt for unknown words.
std::string_view to_string(Event e);
std::string_view to_string(Action a);
std::optional<Event> parse_event(std::string_view s);
std::optional<Action> parse_action(std::string_view s);

}  // namespace caldera
