#include "actors/jobflow/core/dag.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace caldera {
namespace {

constexpr std::array<std::pair<FlowPhase, std::string_view>, 5> kPhaseNames{{
    {FlowPhase::Pending, "Pending"},
    {FlowPhase::Running, "Running"},
    {FlowPhase::Succeed, "Succeed"},
    {FlowPhase::Failed, "Failed"},
    {FlowPhase::Terminating, "Terminating"},
}};

bool any_job(const FlowJobs& jobs, std::initializer_list<JobPhase> phases) {
  return std::any_of(jobs.begin(), jobs.end(), [&](const auto& j) {
    return std::find(phases.begin(), phases.end(), j.second) != phases.end();
  });
}

bool all_completed(const JobFlowSpec& spec, const FlowJobs& jobs) {
  return std::all_of(spec.flows.begin(), spec.flows.end(), [&](const Flow& f) {
    auto it = jobs.find(f.name);
    return it != jobs.end() && it->second == JobPhase::Completed;
  });
}

// One arrow of the diagram, or `current` when none leaves it.
FlowPhase step(FlowPhase current, const JobFlowSpec& spec, const FlowJobs& jobs) {
  const bool failed = any_job(jobs, {JobPhase::Failed, JobPhase::Terminated});
  switch (current) {
    case FlowPhase::Pending:
      if (failed) return FlowPhase::Failed;
      if (any_job(jobs, {JobPhase::Running, JobPhase::Completed})) return FlowPhase::Running;
      return current;
    case FlowPhase::Running:
      if (all_completed(spec, jobs)) return FlowPhase::Succeed;
      if (failed) return FlowPhase::Failed;
      return current;
    case FlowPhase::Succeed:
    case FlowPhase::Failed:
    case FlowPhase::Terminating:
      return current;
  }
  return current;
}

}  // namespace

std::string_view to_string(FlowPhase p) {
  for (const auto& [phase, name] : kPhaseNames)
    if (phase == p) return name;
  return "Unknown";
}

std::optional<FlowPhase> parse_flow_phase(std::string_view s) {
  for (const auto& [phase, name] : kPhaseNames)
    if (name == s) return phase;
  return std::nullopt;
}

std::vector<std::string> due_flows(const JobFlowSpec& spec, const FlowJobs& jobs) {
  std::vector<std::string> due;
  for (const auto& f : spec.flows) {
    if (jobs.count(f.name)) continue;
    bool ready = true;
    if (f.depends_on)
      for (const auto& target : f.depends_on->targets) {
        auto it = jobs.find(target);
        ready = ready && it != jobs.end() && it->second == JobPhase::Completed;
      }
    if (ready) due.push_back(f.name);
  }
  return due;
}

void fill_job_lists(const JobFlowSpec& spec, const FlowJobs& jobs, JobFlowStatus& status) {
  status.pending_jobs.clear();
  status.running_jobs.clear();
  status.completed_jobs.clear();
  status.failed_jobs.clear();
  status.terminated_jobs.clear();
  status.unknown_jobs.clear();
  for (const auto& f : spec.flows) {
    auto it = jobs.find(f.name);
    if (it == jobs.end()) continue;
    auto name = flow_job_name(spec.name, f.name);
    switch (it->second) {
      case JobPhase::Pending:
        status.pending_jobs.push_back(std::move(name));
        break;
      case JobPhase::Running:
        status.running_jobs.push_back(std::move(name));
        break;
      case JobPhase::Completed:
        status.completed_jobs.push_back(std::move(name));
        break;
      case JobPhase::Failed:
        status.failed_jobs.push_back(std::move(name));
        break;
      case JobPhase::Terminated:
        status.terminated_jobs.push_back(std::move(name));
        break;
      default:
        status.unknown_jobs.push_back(std::move(name));
    }
  }
}

FlowPhase next_phase(FlowPhase current, const JobFlowSpec& spec, const FlowJobs& jobs) {
  for (;;) {
    auto next = step(current, spec, jobs);
    if (next == current) return current;
    current = next;
  }
}

}  // namespace caldera
