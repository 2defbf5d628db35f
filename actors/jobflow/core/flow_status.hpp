// How a flow records what its jobs went through (seed 002's jobStatusList and conditions): pure,
// so that histories read the same after a restart as before it.
#pragma once

#include <cstdint>
#include <string>

#include "messages/model/job_flow.hpp"
#include "messages/model/job_status.hpp"

namespace caldera {

// The entry's line in jobStatusList, made when the flow first hears of the job `uid`. A job
// created again by `retry` (another uid) starts a new line's histories and counts a restart.
FlowJobStatus& job_status_line(JobFlowStatus& status, const std::string& job_name,
                               const std::string& uid, int64_t created_ms);

// The job is in `phase` as of `now_ms`: a new phase closes the running history and opens one;
// a finished job gets its end time. Returns whether anything changed.
bool observe_phase(FlowJobStatus& line, JobPhase phase, int64_t now_ms);

// The job's condition from its own status (phase, counts per task, running duration).
FlowJobCondition condition_of(const JobStatus& job, int64_t created_ms);

}  // namespace caldera
