#include "messages/yaml/yaml_batch_job.hpp"

#include <utility>

#include "messages/yaml/yaml_pod.hpp"

namespace caldera {
namespace {

ExitCodeRequirement read_exit_codes(YamlContext& ctx, const YamlNode& node,
                                    const std::string& path) {
  ExitCodeRequirement r;
  MapReader m(ctx, node, path);
  m.str("containerName", r.container_name);
  m.str("operator", r.op);
  if (auto n = m.get("values")) {
    const auto values = m.path("values");
    if (auto items = read_sequence(ctx, *n, values))
      for (size_t i = 0; i < items->size(); ++i)
        if (auto v = read_int(ctx, (*items)[i], index_path(values, i), INT32_MIN, INT32_MAX))
          r.values.push_back(static_cast<int32_t>(*v));
  }
  m.warn_unknown();
  return r;
}

PodFailurePolicyRule read_failure_rule(YamlContext& ctx, const YamlNode& node,
                                       const std::string& path) {
  PodFailurePolicyRule rule;
  MapReader m(ctx, node, path);
  m.str("action", rule.action);
  if (auto n = m.get("onExitCodes"))
    rule.on_exit_codes = read_exit_codes(ctx, *n, m.path("onExitCodes"));
  if (auto n = m.get("onPodConditions")) {
    const auto conditions = m.path("onPodConditions");
    if (auto items = read_sequence(ctx, *n, conditions))
      for (size_t i = 0; i < items->size(); ++i) {
        PodConditionPattern p;
        MapReader c(ctx, (*items)[i], index_path(conditions, i));
        c.str("type", p.type);
        c.str("status", p.status);
        c.warn_unknown();
        rule.on_pod_conditions.push_back(std::move(p));
      }
  }
  m.warn_unknown();
  return rule;
}

// A policy is a mapping whose one field, `rules`, is a list: each item read by `read_rule`.
template <class Rule, class ReadRule>
std::vector<Rule> read_rules(YamlContext& ctx, const YamlNode& node, const std::string& path,
                             ReadRule read_rule) {
  std::vector<Rule> rules;
  MapReader m(ctx, node, path);
  if (auto n = m.get("rules")) {
    const auto list = m.path("rules");
    if (auto items = read_sequence(ctx, *n, list))
      for (size_t i = 0; i < items->size(); ++i)
        rules.push_back(read_rule(ctx, (*items)[i], index_path(list, i)));
  }
  m.warn_unknown();
  return rules;
}

SuccessPolicyRule read_success_rule(YamlContext& ctx, const YamlNode& node,
                                    const std::string& path) {
  SuccessPolicyRule rule;
  MapReader m(ctx, node, path);
  if (auto n = m.get("succeededIndexes"))
    rule.succeeded_indexes = read_string(ctx, *n, m.path("succeededIndexes"));
  m.i32("succeededCount", rule.succeeded_count);
  m.warn_unknown();
  return rule;
}

}  // namespace

void read_batch_job_spec(YamlContext& ctx, const YamlNode& node, BatchJobSpec& job,
                         const std::string& path) {
  MapReader m(ctx, node, path);
  m.i32("parallelism", job.parallelism);
  m.i32("completions", job.completions);
  m.str("completionMode", job.completion_mode);
  m.i32("backoffLimit", job.backoff_limit);
  m.i32("backoffLimitPerIndex", job.backoff_limit_per_index);
  m.i32("maxFailedIndexes", job.max_failed_indexes);
  m.i64("activeDeadlineSeconds", job.active_deadline_seconds);
  m.i64("ttlSecondsAfterFinished", job.ttl_seconds_after_finished);
  if (auto n = m.get("suspend"))
    job.suspend = read_bool(ctx, *n, m.path("suspend")).value_or(false);
  if (auto n = m.get("manualSelector"))
    job.manual_selector = read_bool(ctx, *n, m.path("manualSelector")).value_or(false);
  if (auto n = m.get("selector")) {
    MapReader s(ctx, *n, m.path("selector"));
    std::map<std::string, std::string> labels;
    s.string_map("matchLabels", labels);
    if (s.get("matchExpressions"))
      ctx.error(s.path("matchExpressions"),
                "caldera reads a selector's matchLabels only, not matchExpressions");
    s.warn_unknown();
    job.selector = std::move(labels);
  }
  if (auto n = m.get("podFailurePolicy"))
    job.pod_failure_policy =
        read_rules<PodFailurePolicyRule>(ctx, *n, m.path("podFailurePolicy"), read_failure_rule);
  if (auto n = m.get("successPolicy"))
    job.success_policy =
        read_rules<SuccessPolicyRule>(ctx, *n, m.path("successPolicy"), read_success_rule);
  m.str("podReplacementPolicy", job.pod_replacement_policy);
  if (auto n = m.get("template"))
    job.template_ = read_pod_template(ctx, *n, m.path("template"), &job.priority_class_name);
  m.ignore({"managedBy"});
  m.warn_unknown();
}

}  // namespace caldera
