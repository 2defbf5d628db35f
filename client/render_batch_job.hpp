// What the caldera CLI prints for a Kubernetes Job (batch/v1): kubectl's JSON, table and describe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "messages/model/job.hpp"
#include "messages/model/pod.hpp"

namespace caldera {

// batch/v1 Job as `kubectl get job -o json` shows it, with the API server's defaults filled in.
nlohmann::json batch_job_to_json(const Job& job);

// kubectl's `get jobs` table: NAME STATUS COMPLETIONS DURATION AGE (wide: CONTAINERS IMAGES
// SELECTOR), NAMESPACE first with `namespaces`; "No resources found." when empty.
std::string batch_jobs_table(const std::vector<Job>& jobs, bool wide, int64_t now_ms,
                             bool namespaces = false);

// `kubectl describe job` text, followed by the job's conditions, pods and events.
std::string describe_batch_job(const Job& job, const std::vector<Pod>& pods, int64_t now_ms);

}  // namespace caldera
