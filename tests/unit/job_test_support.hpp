// Helpers for tests of the pure job controller: a fake clock, small specs, node-style reports.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "actors/job/core/job_controller.hpp"

namespace caldera::testing {

// Time is the one test double: a fixed instant and predictable uids.
inline Clock test_clock(int64_t now = 1000) {
  auto counter = std::make_shared<int>(0);
  return Clock{now, [counter] { return "uid-" + std::to_string(++*counter); }};
}

inline Clock at(const Clock& c, int64_t now) {
  Clock later = c;
  later.now_ms = now;
  return later;
}

inline JobSpec spec_with(std::vector<std::pair<std::string, int32_t>> tasks) {
  JobSpec s;
  s.name = "job";
  for (auto& [name, replicas] : tasks) {
    TaskSpec t;
    t.name = name;
    t.replicas = replicas;
    s.tasks.push_back(t);
  }
  return s;
}

inline LifecyclePolicy policy(Event e, Action a, std::optional<int64_t> timeout_ms = {}) {
  LifecyclePolicy p;
  p.events = {e};
  p.action = a;
  p.timeout_ms = timeout_ms;
  return p;
}

inline LifecyclePolicy exit_code_policy(int32_t code, Action a) {
  LifecyclePolicy p;
  p.exit_code = code;
  p.action = a;
  return p;
}

// Reports a pod's phase as a node would: numbered, the next status after the last applied.
inline Effects report(JobModel& m, const std::string& name, PodPhase phase, const Clock& c,
                      int32_t exit_code = 0, const std::string& reason = {}) {
  Pod r = m.pods.at(name);
  ++r.status_seq;
  r.phase = phase;
  r.reason = reason;
  ContainerStatus cs;
  cs.name = "main";
  cs.state = is_terminal(phase) ? ContainerState::Terminated : ContainerState::Running;
  cs.exit_code = exit_code;
  r.containers = {cs};
  return on_pod_report(m, r, c);
}

// Binds every unbound pending pod to node n1, as the scheduler would.
inline Effects place_all(JobModel& m, const Clock& c) {
  std::map<std::string, Placement> b;
  for (auto& [name, p] : m.pods)
    if (p.node.empty() && p.phase == PodPhase::Pending && !p.out_of_sync)
      b[p.uid] = {"n1", "10.0.0.1"};
  return on_pods_placed(m, b, c);
}

// Every pod the controller asked to kill ends, as its node would report.
inline void finish_killed(JobModel& m, const Clock& c) {
  std::vector<std::string> names;
  for (auto& [name, p] : m.pods)
    if (p.out_of_sync && is_live(p)) names.push_back(name);
  for (const auto& n : names) report(m, n, PodPhase::Failed, c, 143);
}

// A new job after its first sync: its pods exist and wait for placement.
inline JobModel pending_job(JobSpec spec, const Clock& c) {
  auto m = new_job(std::move(spec), "u1", c);
  sync_job(m, c);
  return m;
}

// A job with its pods created, placed and running.
inline JobModel running_job(JobSpec spec, const Clock& c) {
  auto m = new_job(std::move(spec), "u1", c);
  sync_job(m, c);
  place_all(m, c);
  std::vector<std::string> names;
  for (auto& [name, p] : m.pods) names.push_back(name);
  for (const auto& n : names) report(m, n, PodPhase::Running, c);
  return m;
}

}  // namespace caldera::testing
