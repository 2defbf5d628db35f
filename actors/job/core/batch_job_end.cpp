#include "actors/job/core/batch_job_end.hpp"

#include "messages/model/completion_indexes.hpp"

namespace caldera {
namespace {

BatchJobEnd failed(std::string reason, std::string message) {
  return {false, std::move(reason), std::move(message)};
}

int32_t backoff_limit(const BatchJobFields& spec) {
  if (spec.backoff_limit) return *spec.backoff_limit;
  return spec.backoff_limit_per_index ? INT32_MAX : kDefaultBackoffLimit;
}

}  // namespace

std::optional<size_t> matching_success_rule(const std::vector<SuccessPolicyRule>& rules,
                                            const std::set<int32_t>& succeeded_indexes,
                                            int32_t completions) {
  for (size_t i = 0; i < rules.size(); ++i) {
    const auto& rule = rules[i];
    int64_t met = static_cast<int64_t>(succeeded_indexes.size());
    if (rule.succeeded_indexes) {
      auto intervals = parse_index_intervals(*rule.succeeded_indexes, completions);
      if (!intervals) continue;  // admission refuses it; a rule that cannot be read never holds
      int64_t named = 0;
      met = 0;
      for (const auto& [lo, hi] : *intervals) {
        named += int64_t{hi} - lo + 1;
        for (auto it = succeeded_indexes.lower_bound(lo);
             it != succeeded_indexes.end() && *it <= hi; ++it)
          ++met;
      }
      if (!rule.succeeded_count && met == named) return i;
    }
    if (rule.succeeded_count && met >= *rule.succeeded_count) return i;
  }
  return std::nullopt;
}

std::optional<BatchJobEnd> batch_job_end(const BatchJobFields& spec,
                                         std::optional<int64_t> active_deadline_seconds,
                                         const BatchJobProgress& p, int64_t now_ms) {
  if (p.fail_job) return failed("PodFailurePolicy", p.fail_job->message);
  if (p.failed > backoff_limit(spec))
    return failed("BackoffLimitExceeded", "Job has reached the specified backoff limit");
  if (active_deadline_seconds && p.start_ms > 0 && !spec.suspend &&
      now_ms - p.start_ms >= *active_deadline_seconds * 1000)
    return failed("DeadlineExceeded", "Job was active longer than specified deadline");
  const int32_t completions = spec.completions.value_or(0);
  if (spec.indexed() && spec.backoff_limit_per_index) {
    const auto failed_indexes = static_cast<int32_t>(p.failed_indexes.size());
    if (spec.max_failed_indexes && failed_indexes > *spec.max_failed_indexes)
      return failed("MaxFailedIndexesExceeded",
                    "Job has exceeded the specified maximal number of failed indexes");
    const auto done = static_cast<int32_t>(p.succeeded_indexes.size()) + failed_indexes;
    if (failed_indexes > 0 && done >= completions && p.active == 0)
      return failed("FailedIndexes", "Job has failed indexes");
  }
  if (spec.indexed() && spec.success_policy) {
    if (auto rule = matching_success_rule(*spec.success_policy, p.succeeded_indexes, completions))
      return BatchJobEnd{true, "SuccessPolicy", "Matched rules at index " + std::to_string(*rule)};
  }
  const int32_t succeeded =
      spec.indexed() ? static_cast<int32_t>(p.succeeded_indexes.size()) : p.succeeded;
  // Pods still running (a work queue's, or a stale copy of an index) end before the job does.
  if ((spec.completions ? succeeded >= completions : succeeded > 0) && p.active == 0)
    return BatchJobEnd{true, "CompletionsReached", "Reached expected number of succeeded pods"};
  return std::nullopt;
}

}  // namespace caldera
