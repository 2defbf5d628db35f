// A Job as the cluster keeps it: identity, the user's spec, the controller's status and its
// recent events.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "messages/model/job_spec.hpp"
#include "messages/model/job_status.hpp"

namespace caldera {

// One line of what happened to the job (`caldera describe job` shows them), like a Kubernetes
// Event: a phase entered, a policy fired, a delayed action scheduled or cancelled, a pod failed.
struct JobEvent {
  int64_t time_ms = 0;
  std::string type = "Normal";  // "Normal" | "Warning"
  std::string reason;
  std::string message;
  bool operator==(const JobEvent&) const = default;
};

struct Job {
  std::string uid;
  int64_t created_ms = 0;
  JobSpec spec;
  JobStatus status;
  std::vector<JobEvent> events;  // oldest first, the most recent kMaxJobEvents
  bool operator==(const Job&) const = default;
};

inline constexpr size_t kMaxJobEvents = 64;

}  // namespace caldera
