// A Kubernetes Job's controller (batch/v1; seed 003's syncJob and manageJob) as pure steps on the
// job's model, beside Volcano's: the job actor hosts the two alike, and job_controller's entry
// points hand a batch/v1 Job's events to these.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "actors/job/core/effects.hpp"
#include "actors/job/core/job_controller.hpp"
#include "actors/job/core/job_model.hpp"

namespace caldera {

// Kubernetes' cap on the pods one sync creates or deletes.
inline constexpr int32_t kMaxPodCreateDeletePerSync = 500;

// A new batch/v1 Job (spec.batch set): no condition, no pod yet; the first sync starts it.
JobModel new_batch_job(JobSpec spec, std::string uid, const Clock& clock);

// syncJob. `ended`: the pods whose end this step brought (a node's report, a lost node, a pod
// deleted before it was launched): each is counted here, once, in the same write as its end,
// as Kubernetes' finalizers make it count each once. Then the job ends, or its pods are
// managed: created up to the active pods it wants (after the failure back-off), deleted past
// them or while suspended.
Effects sync_batch_job(JobModel& m, const std::vector<std::string>& ended, const Clock& clock);

// Time passed: the active deadline, the end of a failure back-off, the TTL after it finished.
Effects on_batch_tick(JobModel& m, const Clock& clock);

// When on_batch_tick next has something to do; nullopt when nothing waits on time.
std::optional<int64_t> batch_next_due_ms(const JobModel& m);

// Finished: its Complete or Failed condition is there (FailureTarget or SuccessCriteriaMet
// alone say it is ending, its pods still terminating).
bool batch_job_finished(const JobModel& m);

// The pod name Kubernetes would generate: {job}-{index}-{suffix} (Indexed) or {job}-{suffix},
// the suffix five characters of Kubernetes' alphabet taken from the pod's uid.
std::string batch_pod_name(const std::string& job, int32_t index, const std::string& uid);

}  // namespace caldera
