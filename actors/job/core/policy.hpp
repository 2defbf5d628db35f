// Lifecycle policy matching (seed 000 section 5.4): which action an event asks for, and when.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "messages/model/job_spec.hpp"
#include "messages/model/lifecycle.hpp"

namespace caldera {

// One thing that happened to a job, as the controller's work queue would carry it.
struct EventRequest {
  Event event = Event::OutOfSync;
  std::optional<Action> action;  // set by a command: it wins over every policy
  std::string task;              // empty: a job-level event
  std::string pod_name;
  std::string pod_uid;
  int32_t partition = -1;
  std::optional<int32_t> exit_code;  // PodFailed: the first non-zero container exit code
  std::string job_uid;               // of the job that raised it; another uid is stale
  int32_t job_version = 0;           // of the pod that raised it; an older one is stale
};

struct PolicyDecision {
  Action action = Action::SyncJob;
  std::optional<int64_t> delay_ms;  // the matched policy's timeout: the action waits that long
  bool matched = false;             // a policy (or a command) chose the action
};

// The request's action if it has one; SyncJob for internal events (OutOfSync, CommandIssued,
// PodRunning) and for stale requests; else the first matching policy of the pod's task, then of
// the job (by event, `*`, or exit code). A PodPending match without a timeout falls through: a
// pod being pending is normal until it lasts too long.
PolicyDecision apply_policies(const JobSpec& spec, const std::string& job_uid, int32_t job_version,
                              const EventRequest& req);

}  // namespace caldera
