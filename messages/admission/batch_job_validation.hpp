// What the Kubernetes API server refuses in a batch/v1 Job, each refusal with its field path.
#pragma once

#include <cstdint>
#include <string>

#include "messages/model/batch_job.hpp"
#include "messages/model/diagnostic.hpp"

namespace caldera {

// The API server's limits on Indexed jobs.
inline constexpr int32_t kMaxIndexedParallelism = 100'000;
inline constexpr int32_t kMaxFailedIndexes = 100'000;
inline constexpr size_t kMaxPodFailurePolicyRules = 20;
inline constexpr size_t kMaxPodConditionPatterns = 20;
inline constexpr size_t kMaxExitCodeValues = 255;
inline constexpr size_t kMaxSuccessPolicyRules = 20;

// Every violation of `job` lands in diags, under `prefix` (a document's "documents[N].").
void validate_batch_job(const BatchJobSpec& job, Diagnostics& diags,
                        const std::string& prefix = "");

}  // namespace caldera
