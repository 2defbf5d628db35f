// The fields of a Kubernetes Job's spec (batch/v1) that a Volcano Job has no place for.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace caldera {

// The annotation and variable that give an Indexed Job's pod its completion index.
inline constexpr const char* kCompletionIndexAnnotation =
    "batch.kubernetes.io/job-completion-index";
inline constexpr const char* kCompletionIndexEnv = "JOB_COMPLETION_INDEX";

// podFailurePolicy.rules[].onExitCodes: exit codes of one container (or of any, unnamed).
struct ExitCodeRequirement {
  std::string container_name;  // empty: every container
  std::string op;              // "In" or "NotIn"
  std::vector<int32_t> values;
  bool operator==(const ExitCodeRequirement&) const = default;
};

// podFailurePolicy.rules[].onPodConditions[]: a condition the failed pod has (DisruptionTarget).
struct PodConditionPattern {
  std::string type;
  std::string status = "True";
  bool operator==(const PodConditionPattern&) const = default;
};

struct PodFailurePolicyRule {
  std::string action;  // FailJob, FailIndex, Ignore or Count
  std::optional<ExitCodeRequirement> on_exit_codes;
  std::vector<PodConditionPattern> on_pod_conditions;
  bool operator==(const PodFailurePolicyRule&) const = default;
};

// successPolicy.rules[]: the job succeeds once these indexes (or this many of them) have.
struct SuccessPolicyRule {
  std::optional<std::string> succeeded_indexes;  // Kubernetes' interval form, "0-3,5"
  std::optional<int32_t> succeeded_count;
  bool operator==(const SuccessPolicyRule&) const = default;
};

struct BatchJobFields {
  std::optional<int32_t> parallelism;    // unset: 1
  std::optional<int32_t> completions;    // unset: any success ends the job (a work queue)
  std::string completion_mode;           // "" (NonIndexed), "NonIndexed" or "Indexed"
  std::optional<int32_t> backoff_limit;  // unset: 6, or no limit with backoffLimitPerIndex
  std::optional<int32_t> backoff_limit_per_index;
  std::optional<int32_t> max_failed_indexes;
  bool suspend = false;
  std::optional<std::vector<PodFailurePolicyRule>> pod_failure_policy;  // its rules
  std::optional<std::vector<SuccessPolicyRule>> success_policy;         // its rules
  std::string pod_replacement_policy;  // "" (by default), "TerminatingOrFailed" or "Failed"
  bool manual_selector = false;
  std::optional<std::map<std::string, std::string>> selector;  // its matchLabels

  bool indexed() const { return completion_mode == "Indexed"; }
  bool operator==(const BatchJobFields&) const = default;
};

}  // namespace caldera
