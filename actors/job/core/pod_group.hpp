// The job's pod group as the gang scheduler sees it (seed 000's PodGroup, seed 004's gang
// checks): which pods wait for a node, and how many of them, per job and per task, must start
// together.
#pragma once

#include "actors/job/core/job_model.hpp"
#include "actors/scheduler/core/placer.hpp"

namespace caldera {

// MinMember is the job's minAvailable and MinTaskMember each task's minAvailable (or replicas);
// both count what is bound already. As in Volcano, the task minimums apply only when the job's
// minAvailable is at least their sum.
GangRequest pod_group_request(const JobModel& m);

}  // namespace caldera
