// The job's pod group as the gang scheduler sees it (seed 000's PodGroup, seed 004's gang
// checks): which pods wait for a node, and how many of them, per job and per task, must start
// together.
#pragma once

#include <optional>
#include <string>

#include "actors/job/core/job_model.hpp"
#include "actors/scheduler/core/placer.hpp"
#include "messages/admission/gang_minimum.hpp"

namespace caldera {

// MinMember is the job's minAvailable and MinTaskMember each task's minAvailable (or replicas);
// both count what is bound already. As in Volcano, the task minimums apply only when the job's
// minAvailable is at least their sum.
// At most kMaxPodAsks pods are asked for at a time (more only when the gang needs more at once),
// so that a job of many replicas costs the scheduler what its next pods cost, not all of them.
inline constexpr int32_t kMaxPodAsks = 1024;

GangRequest pod_group_request(const JobModel& m);

// Its queue, priority class and minMember: what the scheduler keeps of a job while it holds
// nodes (queue shares, and a preemption never takes it below its minimum).
PodGroupInfo pod_group_info(const JobModel& m);

// A warning for a job whose first gang needs more than `cluster` (the ready nodes' capacity in
// all) has, e.g. "job big needs 3 cpu for its minAvailable 3 pods; the cluster has 2 cpu in all".
// The job is accepted all the same: nodes may join.
std::optional<std::string> cluster_fit_warning(const JobSpec& spec, const ResourceList& cluster);

}  // namespace caldera
