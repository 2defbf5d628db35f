// What `caldera apply` may change in a job that exists, and the spec it leaves.
#pragma once

#include <optional>

#include "messages/model/diagnostic.hpp"
#include "messages/model/job_spec.hpp"
#include "messages/model/job_status.hpp"

namespace caldera {

// A Volcano Job: what Volcano's webhook lets change (minAvailable, priorityClassName, and each
// task's replicas and minAvailable: elastic scaling, refused once the job has finished), and
// maxRetry and ttlSecondsAfterFinished, which caldera lets change too. A Kubernetes Job: what
// `caldera patch` may change (suspend, parallelism, backoffLimit, maxFailedIndexes,
// activeDeadlineSeconds, ttlSecondsAfterFinished), checked as a patch is. Both: labels and
// annotations (caldera's own annotations stay). `applied` is admitted as a new job would be.
// Returns the new spec, its generation one more; nullopt when nothing changed or when something
// is refused (then diags names each field and why).
std::optional<JobSpec> update_job_spec(const JobSpec& stored, JobPhase phase, JobSpec applied,
                                       Diagnostics& diags);

}  // namespace caldera
