#include "actors/jobflow/core/dag.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace caldera {
namespace {

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

// Whether a target lets its dependents start: its job Completed, or a probe's task reached the
// probe's phase, or one of the entry's endpoint probes passed on it (`answered`).
bool target_reached(const std::string& target, const FlowDependsOn& dep, const FlowJobs& jobs,
                    const FlowTasks& tasks, const std::set<std::string>* answered) {
  auto job = jobs.find(target);
  if (job == jobs.end()) return false;
  if (job->second == JobPhase::Completed) return true;
  if (!dep.has_probes() || job->second != JobPhase::Running) return false;
  if (answered && answered->count(target)) return true;
  auto counts = tasks.find(target);
  if (counts == tasks.end()) return false;
  return std::any_of(dep.probe.begin(), dep.probe.end(), [&](const TaskProbe& p) {
    auto c = counts->second.find(p.task_name);
    if (c == counts->second.end()) return false;
    if (p.phase == "Running") return c->second.running + c->second.succeeded > 0;
    if (p.phase == "Succeeded") return c->second.succeeded > 0;
    return false;
  });
}

const std::set<std::string>* answers_of(const FlowAnswers& answered, const std::string& entry) {
  auto it = answered.find(entry);
  return it == answered.end() ? nullptr : &it->second;
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

std::vector<std::string> due_flows(const JobFlowSpec& spec, const FlowJobs& jobs,
                                   const FlowTasks& tasks, const FlowAnswers& answered) {
  std::vector<std::string> due;
  for (const auto& f : spec.flows) {
    if (jobs.count(f.name)) continue;
    bool ready = true;
    if (f.depends_on)
      for (const auto& target : f.depends_on->targets)
        ready = ready &&
                target_reached(target, *f.depends_on, jobs, tasks, answers_of(answered, f.name));
    if (ready) due.push_back(f.name);
  }
  return due;
}

std::vector<ProbeWanted> endpoint_probes_wanted(const JobFlowSpec& spec, const FlowJobs& jobs,
                                                const FlowTasks& tasks,
                                                const FlowAnswers& answered) {
  std::vector<ProbeWanted> wanted;
  for (const auto& f : spec.flows) {
    if (jobs.count(f.name) || !f.depends_on || !f.depends_on->probes_endpoints()) continue;
    for (const auto& target : f.depends_on->targets) {
      auto job = jobs.find(target);
      if (job != jobs.end() && job->second == JobPhase::Running &&
          !target_reached(target, *f.depends_on, jobs, tasks, answers_of(answered, f.name)))
        wanted.push_back({f.name, target});
    }
  }
  return wanted;
}

std::vector<std::string> retry_due(const JobFlowSpec& spec, const FlowJobs& jobs,
                                   const FlowRestarts& restarts) {
  std::vector<std::string> due;
  for (const auto& f : spec.flows) {
    auto it = jobs.find(f.name);
    if (it == jobs.end() || it->second != JobPhase::Failed) continue;
    auto r = restarts.find(f.name);
    if ((r == restarts.end() ? 0 : r->second) < f.retry) due.push_back(f.name);
  }
  return due;
}

FlowJobs judged_jobs(const JobFlowSpec& spec, const FlowJobs& jobs, const FlowRestarts& restarts) {
  FlowJobs out = jobs;
  bool any_retry = false;
  for (const auto& f : spec.flows) any_retry |= f.retry > 0;
  if (!any_retry) return out;  // the common case: no entry can be retried
  for (const auto& name : retry_due(spec, jobs, restarts)) out.erase(name);
  return out;
}

std::optional<std::string> failed_entry(const JobFlowSpec& spec, const FlowJobs& jobs) {
  for (const auto& f : spec.flows) {
    auto it = jobs.find(f.name);
    if (it != jobs.end() && (it->second == JobPhase::Failed || it->second == JobPhase::Terminated))
      return f.name;
  }
  return std::nullopt;
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
