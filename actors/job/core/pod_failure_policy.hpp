// Which rule of a Kubernetes Job's podFailurePolicy a failed pod matches, as its controller reads
// the policy: the first rule, in order, whose exit codes or pod conditions the pod meets.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "messages/model/batch_job.hpp"
#include "messages/model/pod.hpp"

namespace caldera {

// Kubernetes' condition for a pod that ended because of a disruption rather than of itself.
inline constexpr const char* kDisruptionTarget = "DisruptionTarget";

// The conditions of an ended pod as Kubernetes would show them (type -> "True"): ours has
// DisruptionTarget when it was evicted by a lost node, a lease that ran out, a preemption or a
// reclaim.
std::vector<PodConditionPattern> pod_conditions(const Pod& pod);

struct FailurePolicyMatch {
  size_t rule = 0;      // its index in the policy's rules
  std::string action;   // FailJob, FailIndex, Ignore or Count
  std::string message;  // as Kubernetes words it, for the job's condition
};

// The first rule `pod` (a Failed pod of job `job_key`) matches; none: the failure counts as
// usual. An exit code of 0 matches no rule.
std::optional<FailurePolicyMatch> match_pod_failure_policy(
    const std::vector<PodFailurePolicyRule>& rules, const Pod& pod, const std::string& job_key);

}  // namespace caldera
