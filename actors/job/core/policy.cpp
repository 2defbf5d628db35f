#include "actors/job/core/policy.hpp"

#include <algorithm>

namespace caldera {
namespace {

bool is_internal(Event e) {
  return e == Event::OutOfSync || e == Event::CommandIssued || e == Event::PodRunning;
}

bool has_event(const LifecyclePolicy& p, Event e) {
  return std::find(p.events.begin(), p.events.end(), e) != p.events.end();
}

// The first policy of the list that the request matches and that may act on it.
std::optional<PolicyDecision> match(const std::vector<LifecyclePolicy>& policies,
                                    const EventRequest& req) {
  for (const auto& p : policies) {
    bool by_event = has_event(p, req.event) || has_event(p, Event::Any);
    bool by_code = p.exit_code && req.exit_code && *p.exit_code == *req.exit_code;
    if (!by_event && !by_code) continue;
    if (req.event == Event::PodPending && !p.timeout_ms) continue;
    return PolicyDecision{p.action, p.timeout_ms, true};
  }
  return std::nullopt;
}

}  // namespace

PolicyDecision apply_policies(const JobSpec& spec, const std::string& job_uid, int32_t job_version,
                              const EventRequest& req) {
  if (req.action) return PolicyDecision{*req.action, std::nullopt, true};
  if (is_internal(req.event)) return {};
  if (!req.job_uid.empty() && req.job_uid != job_uid) return {};
  if (req.job_version < job_version) return {};
  if (!req.task.empty()) {
    for (const auto& t : spec.tasks)
      if (t.name == req.task)
        if (auto d = match(t.policies, req)) return *d;
  }
  if (auto d = match(spec.policies, req)) return *d;
  return {};
}

}  // namespace caldera
