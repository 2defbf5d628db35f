// A Kubernetes Job's status (batch/v1), as the API shows it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace caldera {

// Kubernetes' Job condition types.
inline constexpr const char* kJobSuspended = "Suspended";
inline constexpr const char* kJobFailureTarget = "FailureTarget";
inline constexpr const char* kJobSuccessCriteriaMet = "SuccessCriteriaMet";
inline constexpr const char* kJobFailed = "Failed";
inline constexpr const char* kJobComplete = "Complete";

struct BatchJobCondition {
  std::string type;  // Suspended, FailureTarget, SuccessCriteriaMet, Failed, Complete
  std::string status = "True";
  std::string reason;
  std::string message;
  int64_t last_probe_ms = 0;
  int64_t last_transition_ms = 0;
  bool operator==(const BatchJobCondition&) const = default;
};

struct BatchJobStatus {
  int32_t active = 0;             // live pods not being deleted
  int32_t ready = 0;              // of those, running ones
  int32_t succeeded = 0;          // counted once per pod as it ends (Indexed: once per index)
  int32_t failed = 0;             // likewise; a failure its podFailurePolicy ignores is not counted
  int32_t terminating = 0;        // pods the controller deletes that have not ended yet
  int64_t start_ms = 0;           // startTime: first synced while not suspended (again on resume)
  int64_t completion_ms = 0;      // completionTime: when it became Complete
  std::string completed_indexes;  // Indexed: interval form, "0-3,5"
  std::string failed_indexes;     // Indexed with backoffLimitPerIndex: failed for good
  std::vector<BatchJobCondition> conditions;
  bool operator==(const BatchJobStatus&) const = default;
};

// The condition of this type, or nullptr.
const BatchJobCondition* find_condition(const BatchJobStatus& s, const std::string& type);
// Whether the condition of this type is there with status True.
bool has_true_condition(const BatchJobStatus& s, const std::string& type);

}  // namespace caldera
