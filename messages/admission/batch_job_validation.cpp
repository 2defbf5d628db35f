#include "messages/admission/batch_job_validation.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "messages/model/completion_indexes.hpp"

namespace caldera {
namespace {

bool is_dns_subdomain(std::string_view name) {
  if (name.empty()) return false;
  auto alnum = [](char c) {
    return std::islower(static_cast<unsigned char>(c)) ||
           std::isdigit(static_cast<unsigned char>(c));
  };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return alnum(c) || c == '-' || c == '.'; });
}

std::string quoted(const std::string& s) {
  return "\"" + s + "\"";
}

std::string one_of(std::initializer_list<const char*> values) {
  std::string out;
  for (const char* v : values) out += (out.empty() ? "" : ", ") + quoted(v);
  return out;
}

bool is_one_of(const std::string& value, std::initializer_list<const char*> values) {
  return std::any_of(values.begin(), values.end(), [&](const char* v) { return value == v; });
}

// Checks over one job, each error at prefix + path.
class Checks {
 public:
  Checks(const BatchJobSpec& job, Diagnostics& diags, const std::string& prefix)
      : job_(job), diags_(diags), prefix_(prefix) {}

  void error(const std::string& path, std::string message) {
    diags_.error(prefixed(prefix_, path), std::move(message));
  }
  template <class T>
  void non_negative(const std::optional<T>& value, const std::string& path) {
    if (value && *value < 0) error(path, "must be greater than or equal to 0");
  }

  void metadata() {
    const auto& name = job_.name;
    if (name.empty()) return error("metadata.name", "name is required");
    if (!is_dns_subdomain(name))
      error("metadata.name",
            "a lowercase RFC 1123 subdomain must consist of lower case "
            "alphanumeric characters, '-' or '.', and must start and end with an "
            "alphanumeric character");
    // Its pods carry it as a label value.
    if (name.size() > 63) error("metadata.name", "must be no more than 63 characters");
  }

  void counts() {
    non_negative(job_.parallelism, "spec.parallelism");
    non_negative(job_.completions, "spec.completions");
    non_negative(job_.active_deadline_seconds, "spec.activeDeadlineSeconds");
    non_negative(job_.backoff_limit, "spec.backoffLimit");
    non_negative(job_.ttl_seconds_after_finished, "spec.ttlSecondsAfterFinished");
    non_negative(job_.backoff_limit_per_index, "spec.backoffLimitPerIndex");
    non_negative(job_.max_failed_indexes, "spec.maxFailedIndexes");
  }

  void completion_mode() {
    const auto& mode = job_.completion_mode;
    if (!mode.empty() && !is_one_of(mode, {"NonIndexed", "Indexed"}))
      return error("spec.completionMode",
                   "Unsupported value: " + quoted(mode) +
                       ": supported values: " + one_of({"NonIndexed", "Indexed"}));
    if (job_.indexed()) {
      if (!job_.completions)
        error("spec.completions", "Required value: when completion mode is Indexed");
      if (job_.parallelism && *job_.parallelism > kMaxIndexedParallelism)
        error("spec.parallelism", "must be less than or equal to " +
                                      std::to_string(kMaxIndexedParallelism) +
                                      " when completion mode is Indexed");
    }
    if (job_.backoff_limit_per_index && !job_.indexed())
      error("spec.backoffLimitPerIndex", "requires indexed completion mode");
    if (job_.max_failed_indexes) {
      if (!job_.backoff_limit_per_index)
        error("spec.maxFailedIndexes", "cannot be set when backoffLimitPerIndex is not set");
      if (*job_.max_failed_indexes > kMaxFailedIndexes)
        error("spec.maxFailedIndexes",
              "must be less than or equal to " + std::to_string(kMaxFailedIndexes));
      if (job_.completions && *job_.max_failed_indexes > *job_.completions)
        error("spec.maxFailedIndexes", "must be less than or equal to completions");
    }
  }

  void template_() {
    const auto& policy = job_.template_.restart_policy;
    const std::string path = "spec.template.spec.restartPolicy";
    if (!is_one_of(policy, {"OnFailure", "Never"}))
      error(path, "Unsupported value: " + quoted(policy.empty() ? "Always" : policy) +
                      ": supported values: " + one_of({"OnFailure", "Never"}));
    if (job_.template_.containers.empty()) error("spec.template.spec.containers", "Required value");
  }

  void selector() {
    if (job_.manual_selector) {
      if (!job_.selector || job_.selector->empty())
        return error("spec.selector", "Required value: manualSelector is true");
      for (const auto& [k, v] : *job_.selector) {
        auto it = job_.template_.labels.find(k);
        if (it == job_.template_.labels.end() || it->second != v)
          return error("spec.template.metadata.labels",
                       "`selector` does not match template `labels`");
      }
    } else if (job_.selector) {
      error("spec.selector",
            "`selector` will be auto-generated (set manualSelector: true to give your own)");
    }
  }

  void pod_failure_policy() {
    if (!job_.pod_failure_policy) return;
    const auto& rules = *job_.pod_failure_policy;
    if (job_.template_.restart_policy != "Never")
      error("spec.template.spec.restartPolicy",
            "only \"Never\" is supported when podFailurePolicy is specified");
    if (rules.size() > kMaxPodFailurePolicyRules)
      error("spec.podFailurePolicy.rules",
            "Too many: " + std::to_string(rules.size()) + ": must have at most " +
                std::to_string(kMaxPodFailurePolicyRules) + " items");
    std::set<std::string> containers;
    for (const auto& c : job_.template_.containers) containers.insert(c.name);
    for (size_t i = 0; i < rules.size(); ++i)
      failure_rule(rules[i], "spec.podFailurePolicy.rules[" + std::to_string(i) + "]", containers);
  }

  void failure_rule(const PodFailurePolicyRule& rule, const std::string& path,
                    const std::set<std::string>& containers) {
    if (!is_one_of(rule.action, {"FailJob", "FailIndex", "Ignore", "Count"}))
      error(path + ".action", "Unsupported value: " + quoted(rule.action) + ": supported values: " +
                                  one_of({"Count", "FailIndex", "FailJob", "Ignore"}));
    if (rule.action == "FailIndex" && !job_.backoff_limit_per_index)
      error(path + ".action", "requires the backoffLimitPerIndex to be set");
    const bool codes = rule.on_exit_codes.has_value();
    const bool conditions = !rule.on_pod_conditions.empty();
    if (codes && conditions)
      error(path, "specifying both OnExitCodes and OnPodConditions is not supported");
    else if (!codes && !conditions)
      error(path, "specifying one of OnExitCodes and OnPodConditions is required");
    if (codes) exit_codes(*rule.on_exit_codes, path + ".onExitCodes", containers);
    if (rule.on_pod_conditions.size() > kMaxPodConditionPatterns)
      error(path + ".onPodConditions",
            "Too many: must have at most " + std::to_string(kMaxPodConditionPatterns) + " items");
    for (size_t j = 0; j < rule.on_pod_conditions.size(); ++j) {
      const auto& p = rule.on_pod_conditions[j];
      const auto at = path + ".onPodConditions[" + std::to_string(j) + "]";
      if (p.type.empty()) error(at + ".type", "Required value");
      if (!is_one_of(p.status, {"True", "False", "Unknown"}))
        error(at + ".status", "Unsupported value: " + quoted(p.status) +
                                  ": supported values: " + one_of({"True", "False", "Unknown"}));
    }
  }

  void exit_codes(const ExitCodeRequirement& r, const std::string& path,
                  const std::set<std::string>& containers) {
    if (!r.container_name.empty() && !containers.count(r.container_name))
      error(path + ".containerName",
            "must be one of the container or initContainer names in the pod template");
    if (!is_one_of(r.op, {"In", "NotIn"}))
      error(path + ".operator", "Unsupported value: " + quoted(r.op) +
                                    ": supported values: " + one_of({"In", "NotIn"}));
    const auto values = path + ".values";
    if (r.values.empty()) return error(values, "at least one value is required");
    if (r.values.size() > kMaxExitCodeValues)
      error(values, "Too many: must have at most " + std::to_string(kMaxExitCodeValues) + " items");
    for (size_t k = 0; k < r.values.size(); ++k) {
      const auto at = values + "[" + std::to_string(k) + "]";
      if (r.op == "In" && r.values[k] == 0) error(at, "must not be 0 for the In operator");
      if (k > 0 && r.values[k] == r.values[k - 1])
        error(at, "Duplicate value");
      else if (k > 0 && r.values[k] < r.values[k - 1])
        error(at, "must be ordered");
    }
  }

  void success_policy() {
    if (!job_.success_policy) return;
    const auto& rules = *job_.success_policy;
    if (!job_.indexed()) error("spec.successPolicy", "requires indexed completion mode");
    if (rules.empty()) error("spec.successPolicy.rules", "Required value: at least one rule");
    if (rules.size() > kMaxSuccessPolicyRules)
      error("spec.successPolicy.rules",
            "Too many: must have at most " + std::to_string(kMaxSuccessPolicyRules) + " items");
    const int32_t completions = job_.completions.value_or(0);
    for (size_t i = 0; i < rules.size(); ++i) {
      const auto& rule = rules[i];
      const auto path = "spec.successPolicy.rules[" + std::to_string(i) + "]";
      if (!rule.succeeded_indexes && !rule.succeeded_count) {
        error(path, "at least one of succeededCount or succeededIndexes must be specified");
        continue;
      }
      int64_t in_indexes = -1;
      if (rule.succeeded_indexes) {
        auto intervals = parse_index_intervals(*rule.succeeded_indexes, completions);
        if (!intervals) {
          error(path + ".succeededIndexes", intervals.error());
        } else {
          in_indexes = 0;
          for (const auto& [lo, hi] : *intervals) in_indexes += int64_t{hi} - lo + 1;
        }
      }
      if (rule.succeeded_count) {
        const auto at = path + ".succeededCount";
        const int32_t count = *rule.succeeded_count;
        if (count < 0) error(at, "must be greater than or equal to 0");
        if (job_.completions && count > completions)
          error(at, "must be less than or equal to .spec.completions");
        if (in_indexes >= 0 && count > in_indexes)
          error(at, "must be less than or equal to the number of indexes in succeededIndexes (" +
                        std::to_string(in_indexes) + ")");
      }
    }
  }

  void replacement_policy() {
    const auto& policy = job_.pod_replacement_policy;
    const std::string path = "spec.podReplacementPolicy";
    if (policy.empty()) return;
    if (!is_one_of(policy, {"TerminatingOrFailed", "Failed"}))
      return error(path, "Unsupported value: " + quoted(policy) +
                             ": supported values: " + one_of({"Failed", "TerminatingOrFailed"}));
    if (job_.pod_failure_policy && policy != "Failed")
      error(path, "Unsupported value: " + quoted(policy) +
                      ": supported values: \"Failed\" when podFailurePolicy is specified");
  }

 private:
  const BatchJobSpec& job_;
  Diagnostics& diags_;
  const std::string& prefix_;
};

}  // namespace

void validate_batch_job(const BatchJobSpec& job, Diagnostics& diags, const std::string& prefix) {
  Checks c(job, diags, prefix);
  c.metadata();
  c.counts();
  c.completion_mode();
  c.template_();
  c.selector();
  c.pod_failure_policy();
  c.success_policy();
  c.replacement_policy();
}

}  // namespace caldera
