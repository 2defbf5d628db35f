#include "messages/codec/batch_job_codec.hpp"

#include "messages/codec/codec.hpp"

namespace caldera {
namespace {

std::string str(capnp::Text::Reader t) {
  return std::string(t.cStr(), t.size());
}

std::optional<int32_t> optional(int32_t v) {
  return v >= 0 ? std::optional<int32_t>(v) : std::nullopt;
}

}  // namespace

void encode(const BatchJobFields& in, api::BatchJobFields::Builder out) {
  out.setParallelism(in.parallelism.value_or(-1));
  out.setCompletions(in.completions.value_or(-1));
  out.setCompletionMode(in.completion_mode);
  out.setBackoffLimit(in.backoff_limit.value_or(-1));
  out.setBackoffLimitPerIndex(in.backoff_limit_per_index.value_or(-1));
  out.setMaxFailedIndexes(in.max_failed_indexes.value_or(-1));
  out.setSuspend(in.suspend);
  out.setHasPodFailurePolicy(in.pod_failure_policy.has_value());
  if (in.pod_failure_policy) {
    const auto& rules = *in.pod_failure_policy;
    auto list = out.initPodFailurePolicy(static_cast<capnp::uint>(rules.size()));
    for (capnp::uint i = 0; i < rules.size(); ++i) {
      list[i].setAction(rules[i].action);
      if (const auto& codes = rules[i].on_exit_codes) {
        auto c = list[i].initOnExitCodes();
        c.setContainerName(codes->container_name);
        c.setOperator(codes->op);
        auto values = c.initValues(static_cast<capnp::uint>(codes->values.size()));
        for (capnp::uint v = 0; v < codes->values.size(); ++v) values.set(v, codes->values[v]);
      }
      const auto& patterns = rules[i].on_pod_conditions;
      auto conditions = list[i].initOnPodConditions(static_cast<capnp::uint>(patterns.size()));
      for (capnp::uint c = 0; c < patterns.size(); ++c) {
        conditions[c].setType(patterns[c].type);
        conditions[c].setStatus(patterns[c].status);
      }
    }
  }
  out.setHasSuccessPolicy(in.success_policy.has_value());
  if (in.success_policy) {
    const auto& rules = *in.success_policy;
    auto list = out.initSuccessPolicy(static_cast<capnp::uint>(rules.size()));
    for (capnp::uint i = 0; i < rules.size(); ++i) {
      list[i].setHasSucceededIndexes(rules[i].succeeded_indexes.has_value());
      if (rules[i].succeeded_indexes) list[i].setSucceededIndexes(*rules[i].succeeded_indexes);
      list[i].setSucceededCount(rules[i].succeeded_count.value_or(-1));
    }
  }
  out.setPodReplacementPolicy(in.pod_replacement_policy);
  out.setManualSelector(in.manual_selector);
  out.setHasSelector(in.selector.has_value());
  if (in.selector)
    encode_map(*in.selector, out.initSelector(static_cast<capnp::uint>(in.selector->size())));
}

BatchJobFields decode(api::BatchJobFields::Reader in) {
  BatchJobFields f;
  f.parallelism = optional(in.getParallelism());
  f.completions = optional(in.getCompletions());
  f.completion_mode = str(in.getCompletionMode());
  f.backoff_limit = optional(in.getBackoffLimit());
  f.backoff_limit_per_index = optional(in.getBackoffLimitPerIndex());
  f.max_failed_indexes = optional(in.getMaxFailedIndexes());
  f.suspend = in.getSuspend();
  if (in.getHasPodFailurePolicy()) {
    auto& rules = f.pod_failure_policy.emplace();
    for (auto r : in.getPodFailurePolicy()) {
      PodFailurePolicyRule rule;
      rule.action = str(r.getAction());
      if (r.hasOnExitCodes()) {
        auto c = r.getOnExitCodes();
        ExitCodeRequirement codes{str(c.getContainerName()), str(c.getOperator()), {}};
        for (auto v : c.getValues()) codes.values.push_back(v);
        rule.on_exit_codes = std::move(codes);
      }
      for (auto c : r.getOnPodConditions())
        rule.on_pod_conditions.push_back({str(c.getType()), str(c.getStatus())});
      rules.push_back(std::move(rule));
    }
  }
  if (in.getHasSuccessPolicy()) {
    auto& rules = f.success_policy.emplace();
    for (auto r : in.getSuccessPolicy()) {
      SuccessPolicyRule rule;
      if (r.getHasSucceededIndexes()) rule.succeeded_indexes = str(r.getSucceededIndexes());
      rule.succeeded_count = optional(r.getSucceededCount());
      rules.push_back(std::move(rule));
    }
  }
  f.pod_replacement_policy = str(in.getPodReplacementPolicy());
  f.manual_selector = in.getManualSelector();
  if (in.getHasSelector()) f.selector = decode_map(in.getSelector());
  return f;
}

void encode(const BatchJobStatus& in, api::BatchJobStatus::Builder out) {
  out.setActive(in.active);
  out.setReady(in.ready);
  out.setSucceeded(in.succeeded);
  out.setFailed(in.failed);
  out.setTerminating(in.terminating);
  out.setStartMs(in.start_ms);
  out.setCompletionMs(in.completion_ms);
  out.setCompletedIndexes(in.completed_indexes);
  out.setFailedIndexes(in.failed_indexes);
  auto conditions = out.initConditions(static_cast<capnp::uint>(in.conditions.size()));
  for (capnp::uint i = 0; i < in.conditions.size(); ++i) {
    const auto& c = in.conditions[i];
    conditions[i].setType(c.type);
    conditions[i].setStatus(c.status);
    conditions[i].setReason(c.reason);
    conditions[i].setMessage(c.message);
    conditions[i].setLastProbeMs(c.last_probe_ms);
    conditions[i].setLastTransitionMs(c.last_transition_ms);
  }
}

BatchJobStatus decode(api::BatchJobStatus::Reader in) {
  BatchJobStatus s;
  s.active = in.getActive();
  s.ready = in.getReady();
  s.succeeded = in.getSucceeded();
  s.failed = in.getFailed();
  s.terminating = in.getTerminating();
  s.start_ms = in.getStartMs();
  s.completion_ms = in.getCompletionMs();
  s.completed_indexes = str(in.getCompletedIndexes());
  s.failed_indexes = str(in.getFailedIndexes());
  for (auto c : in.getConditions())
    s.conditions.push_back({str(c.getType()), str(c.getStatus()), str(c.getReason()),
                            str(c.getMessage()), c.getLastProbeMs(), c.getLastTransitionMs()});
  return s;
}

}  // namespace caldera
