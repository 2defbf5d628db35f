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
// At most kMaxPodAsks pods are asked for at a time (more only when the gang needs more at once),
// so that a job of many replicas costs the scheduler what its next pods cost, not all of them.
inline constexpr int32_t kMaxPodAsks = 1024;

GangRequest pod_group_request(const JobModel& m);

}  // namespace caldera
