// What the Kubernetes API server refuses in a batch/v1 Job, each refusal with its field path.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "messages/model/batch_job.hpp"
#include "messages/model/diagnostic.hpp"
#include "messages/model/result.hpp"

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

// Kubernetes' interval form of a set of completion indexes, "0-3,5,7-9": closed intervals in
// increasing order, none overlapping the one before, each below `completions`. The intervals, or
// why the text is not one.
Result<std::vector<std::pair<int32_t, int32_t>>> parse_index_intervals(std::string_view text,
                                                                       int32_t completions);

}  // namespace caldera
