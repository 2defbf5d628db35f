// Whether and how a Kubernetes Job ends, in the order its controller checks (syncJob): a pod that
// fails the job by its podFailurePolicy, the backoff limit, the active deadline, the failed
// indexes, the success policy, then the completions.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/job/core/pod_failure_policy.hpp"
#include "messages/model/batch_job.hpp"

namespace caldera {

// What the job's pods have done so far, counted once per pod.
struct BatchJobProgress {
  int32_t active = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;  // counted failures: a pod its podFailurePolicy ignores is not one
  std::set<int32_t> succeeded_indexes;  // Indexed
  std::set<int32_t> failed_indexes;     // Indexed with backoffLimitPerIndex: failed for good
  int64_t start_ms = 0;                 // when it started (or was last resumed); 0: not yet
  // A failed pod whose podFailurePolicy rule says FailJob.
  std::optional<FailurePolicyMatch> fail_job;
};

struct BatchJobEnd {
  bool complete = false;  // Complete, else Failed
  std::string reason;     // Kubernetes' reason: BackoffLimitExceeded, DeadlineExceeded, ...
  std::string message;
};

// Kubernetes' default backoffLimit (none with backoffLimitPerIndex).
inline constexpr int32_t kDefaultBackoffLimit = 6;

// The index of the first success policy rule the succeeded indexes meet.
std::optional<size_t> matching_success_rule(const std::vector<SuccessPolicyRule>& rules,
                                            const std::set<int32_t>& succeeded_indexes,
                                            int32_t completions);

// How the job ends now, or nullopt while it runs on.
std::optional<BatchJobEnd> batch_job_end(const BatchJobFields& spec,
                                         std::optional<int64_t> active_deadline_seconds,
                                         const BatchJobProgress& p, int64_t now_ms);
inline std::optional<BatchJobEnd> batch_job_end(const BatchJobSpec& spec, const BatchJobProgress& p,
                                                int64_t now_ms) {
  return batch_job_end(spec, spec.active_deadline_seconds, p, now_ms);
}

}  // namespace caldera
