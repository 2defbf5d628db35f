// Volcano's JobStatus and JobPhase, as plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "messages/model/batch_job_status.hpp"
#include "messages/model/pod.hpp"

namespace caldera {

enum class JobPhase {
  Pending,
  Aborting,
  Aborted,
  Running,
  Restarting,
  Completing,
  Completed,
  Terminating,
  Terminated,
  Failed,
};

std::string_view to_string(JobPhase p);
std::optional<JobPhase> parse_job_phase(std::string_view s);
// Completed, Terminated, Failed: nothing more happens. Aborted can still be resumed.
bool is_finished(JobPhase p);
// Pending, Running: the job wants its pods (it creates, places and launches them).
inline bool is_active(JobPhase p) {
  return p == JobPhase::Pending || p == JobPhase::Running;
}

struct JobState {
  JobPhase phase = JobPhase::Pending;
  std::string reason;
  std::string message;
  int64_t last_transition_ms = 0;
  bool operator==(const JobState&) const = default;
};

struct JobCondition {
  JobPhase status = JobPhase::Pending;
  int64_t last_transition_ms = 0;
  bool operator==(const JobCondition&) const = default;
};

struct TaskStatusCount {
  int32_t pending = 0;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  int32_t unknown = 0;
  bool operator==(const TaskStatusCount&) const = default;
};

struct JobStatus {
  JobState state;
  int32_t min_available = 0;
  int32_t pending = 0;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  int32_t terminating = 0;
  int32_t unknown = 0;
  int32_t version = 0;
  int32_t retry_count = 0;
  std::map<std::string, TaskStatusCount> task_status_count;
  std::vector<JobCondition> conditions;
  int64_t running_duration_ms = 0;
  int64_t observed_generation = 0;  // the spec generation the controller last acted on
  // The scheduler's verdict while the gang waits: "Pending" (its pod group is not admitted) or
  // "Inqueue" (admitted, not placed); "" before one.
  std::string pod_group_phase;
  // A batch/v1 Job's own status (JobSpec::batch is set); the fields above are Volcano's.
  std::optional<BatchJobStatus> batch;
  bool operator==(const JobStatus&) const = default;
};

}  // namespace caldera
