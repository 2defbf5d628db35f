#include "actors/job/core/job_controller.hpp"

#include <fmt/format.h>

namespace caldera {
namespace {

void set_phase(JobModel& m, JobPhase to, std::string reason, std::string message,
               const Clock& clock, Effects& fx) {
  auto& state = m.job.status.state;
  if (state.phase == to) return;
  fx.phase_changes.push_back({state.phase, to, reason});
  state.phase = to;
  state.reason = std::move(reason);
  state.message = std::move(message);
  state.last_transition_ms = clock.now_ms;
  m.job.status.conditions.push_back({to, clock.now_ms});
  fx.changed = true;
}

// Pods the spec wants at the job's current version that do not exist yet (syncJob's create loop).
void create_missing_pods(JobModel& m, const Clock& clock, Effects& fx) {
  for (const auto& task : m.job.spec.tasks) {
    for (int32_t i = 0; i < task.replicas; ++i) {
      auto name = pod_name(m.name(), task.name, i);
      if (m.pods.count(name)) continue;
      Pod p;
      p.name = name;
      p.uid = clock.new_uid();
      p.namespace_ = m.job.spec.namespace_;
      p.job_name = m.name();
      p.task_name = task.name;
      p.index = i;
      p.job_version = m.job.status.version;
      p.phase = PodPhase::Pending;
      p.created_ms = clock.now_ms;
      if (task.partition_policy && task.partition_policy->partition_size > 0)
        p.partition = i / task.partition_policy->partition_size;
      m.pods.emplace(name, std::move(p));
      fx.changed = true;
    }
  }
  for (const auto& [name, p] : m.pods)
    if (p.phase == PodPhase::Pending && p.node.empty() && !p.out_of_sync) {
      fx.request_placement = true;
      break;
    }
}

// KillJob with retain phase Soft: finished pods stay for inspection, live ones are stopped. Pods
// are marked out-of-sync first so that their deaths are not taken for evictions.
void kill_live_pods(JobModel& m, const std::string& reason, const Clock& clock, Effects& fx) {
  for (auto& [name, p] : m.pods) {
    if (!is_live(p) || p.out_of_sync) continue;
    p.out_of_sync = true;
    fx.changed = true;
    if (p.node.empty()) {
      // Never placed: nothing runs, the pod ends here.
      p.phase = PodPhase::Failed;
      p.reason = "Killed";
      p.message = reason;
      p.finished_ms = clock.now_ms;
      fx.release.push_back(p.uid);
    } else {
      fx.kill.push_back({p.uid, p.node, reason});
    }
  }
}

int32_t live_pod_count(const JobModel& m) {
  int32_t n = 0;
  for (const auto& [name, p] : m.pods)
    if (is_live(p)) ++n;
  return n;
}

// ---- one function per phase, as in seed 000 section 3.4 ----

void sync_pending(JobModel& m, const Clock& clock, Effects& fx) {
  const auto& s = m.job.status;
  auto min_available = m.job.spec.effective_min_available();
  if (min_available <= s.running + s.succeeded + s.failed)
    set_phase(
        m, JobPhase::Running, "MinAvailableReached",
        fmt::format("{} of {} pods running or finished, minAvailable {}",
                    s.running + s.succeeded + s.failed, m.job.spec.total_replicas(), min_available),
        clock, fx);
}

void sync_running(JobModel& m, const Clock& clock, Effects& fx) {
  const auto& spec = m.job.spec;
  const auto& s = m.job.status;
  auto total = spec.total_replicas();
  if (total == 0) return;
  auto min_available = spec.effective_min_available();

  if (spec.min_success && s.succeeded >= *spec.min_success) {
    set_phase(m, JobPhase::Completed, "MinSuccessReached",
              fmt::format("{} pods succeeded, minSuccess {}", s.succeeded, *spec.min_success),
              clock, fx);
    return;
  }
  if (s.succeeded + s.failed == total) {
    int32_t task_min_total = 0;
    for (const auto& t : spec.tasks) task_min_total += t.min_available.value_or(0);
    if (min_available >= task_min_total) {
      for (const auto& t : spec.tasks) {
        if (!t.min_available) continue;
        auto it = s.task_status_count.find(t.name);
        int32_t ok = it == s.task_status_count.end() ? 0 : it->second.succeeded;
        if (ok < *t.min_available) {
          set_phase(m, JobPhase::Failed, "TaskMinAvailableNotMet",
                    fmt::format("task {}: {} pods succeeded, minAvailable {}", t.name, ok,
                                *t.min_available),
                    clock, fx);
          return;
        }
      }
    }
    if (spec.min_success && s.succeeded < *spec.min_success) {
      set_phase(m, JobPhase::Failed, "MinSuccessNotMet",
                fmt::format("all pods finished: {} succeeded, minSuccess {}", s.succeeded,
                            *spec.min_success),
                clock, fx);
    } else if (s.succeeded >= min_available) {
      set_phase(m, JobPhase::Completed, "PodsSucceeded",
                fmt::format("all pods finished: {} succeeded, {} failed, minAvailable {}",
                            s.succeeded, s.failed, min_available),
                clock, fx);
    } else {
      set_phase(m, JobPhase::Failed, "MinAvailableNotMet",
                fmt::format("all pods finished: {} succeeded, {} failed, minAvailable {}",
                            s.succeeded, s.failed, min_available),
                clock, fx);
    }
    return;
  }
  if (s.pending > total - min_available)
    set_phase(m, JobPhase::Pending, "NotEnoughPods",
              fmt::format("{} pods pending, more than replicas {} - minAvailable {}", s.pending,
                          total, min_available),
              clock, fx);
}

// Completed, Terminated, Failed (finishedState): clear up what still runs.
void sync_finished(JobModel& m, const Clock& clock, Effects& fx) {
  if (live_pod_count(m) > 0)
    kill_live_pods(m, fmt::format("job {}", to_string(m.job.status.state.phase)), clock, fx);
}

void step(JobModel& m, const Clock& clock, Effects& fx) {
  switch (m.job.status.state.phase) {
    case JobPhase::Pending:
      sync_pending(m, clock, fx);
      break;
    case JobPhase::Running:
      sync_running(m, clock, fx);
      break;
    case JobPhase::Completed:
    case JobPhase::Terminated:
    case JobPhase::Failed:
      sync_finished(m, clock, fx);
      break;
    default:
      break;
  }
}

}  // namespace

std::string pod_name(const std::string& job, const std::string& task, int32_t index) {
  return fmt::format("{}-{}-{}", job, task, index);
}

void Effects::merge(Effects other) {
  launch.insert(launch.end(), other.launch.begin(), other.launch.end());
  kill.insert(kill.end(), other.kill.begin(), other.kill.end());
  remove.insert(remove.end(), other.remove.begin(), other.remove.end());
  release.insert(release.end(), other.release.begin(), other.release.end());
  phase_changes.insert(phase_changes.end(), other.phase_changes.begin(), other.phase_changes.end());
  request_placement = request_placement || other.request_placement;
  changed = changed || other.changed;
}

JobModel new_job(JobSpec spec, std::string uid, const Clock& clock) {
  JobModel m;
  m.job.uid = std::move(uid);
  m.job.created_ms = clock.now_ms;
  m.job.spec = std::move(spec);
  auto& s = m.job.status;
  s.state = {JobPhase::Pending, "Created", "job accepted", clock.now_ms};
  s.conditions.push_back({JobPhase::Pending, clock.now_ms});
  s.min_available = m.job.spec.effective_min_available();
  return m;
}

void update_counts(JobModel& m, int64_t now_ms) {
  auto& s = m.job.status;
  s.pending = s.running = s.succeeded = s.failed = s.terminating = s.unknown = 0;
  s.task_status_count.clear();
  s.min_available = m.job.spec.effective_min_available();
  for (const auto& [name, p] : m.pods) {
    if (is_discarded(p)) continue;
    if (p.out_of_sync) {
      ++s.terminating;
      continue;
    }
    auto& t = s.task_status_count[p.task_name];
    switch (p.phase) {
      case PodPhase::Pending:
        ++s.pending, ++t.pending;
        break;
      case PodPhase::Running:
        ++s.running, ++t.running;
        break;
      case PodPhase::Succeeded:
        ++s.succeeded, ++t.succeeded;
        break;
      case PodPhase::Failed:
        ++s.failed, ++t.failed;
        break;
      case PodPhase::Unknown:
        ++s.unknown, ++t.unknown;
        break;
    }
  }
  // From the first time the job ran until it finished (or now): it stops growing at the end.
  int64_t started = 0;
  for (const auto& c : s.conditions)
    if (c.status == JobPhase::Running) {
      started = c.last_transition_ms;
      break;
    }
  int64_t end = is_finished(s.state.phase) ? s.state.last_transition_ms : now_ms;
  s.running_duration_ms = started > 0 && end > started ? end - started : 0;
}

Effects sync_job(JobModel& m, const Clock& clock) {
  Effects fx;
  if (!is_finished(m.job.status.state.phase)) create_missing_pods(m, clock, fx);
  // A fast job can pass several phases in one sync (Pending -> Running -> Completed when its pods
  // ended before we saw them run); each arrow still gets its condition.
  for (int i = 0; i < 4; ++i) {
    update_counts(m, clock.now_ms);
    auto before = m.job.status.state.phase;
    step(m, clock, fx);
    if (m.job.status.state.phase == before) break;
  }
  update_counts(m, clock.now_ms);
  if (is_finished(m.job.status.state.phase)) fx.request_placement = false;
  return fx;
}

Effects on_pod_report(JobModel& m, const Pod& report, const Clock& clock) {
  Effects fx;
  auto it = m.pods.find(report.name);
  if (it == m.pods.end() || it->second.uid != report.uid) {
    // A pod this job does not own (an older incarnation): stop it if it still runs.
    if (is_live(report) && !report.node.empty())
      fx.kill.push_back({report.uid, report.node, "pod not owned by the current job"});
    return fx;
  }
  Pod& p = it->second;
  if (is_terminal(p.phase))
    return sync_job(m, clock);  // terminal is final; a repeat changes nothing
  bool was_live = is_live(p);
  if (p.phase != report.phase || p.containers != report.containers || p.reason != report.reason) {
    p.phase = report.phase;
    p.reason = report.reason;
    p.message = report.message;
    p.containers = report.containers;
    if (report.started_ms) p.started_ms = report.started_ms;
    if (report.finished_ms) p.finished_ms = report.finished_ms;
    if (!report.node.empty()) p.node = report.node;
    fx.changed = true;
  }
  if (was_live && !is_live(p)) fx.release.push_back(p.uid);
  fx.merge(sync_job(m, clock));
  return fx;
}

Effects on_node_up(JobModel& m, const std::string& node, const std::set<std::string>& present,
                   const Clock& clock) {
  Effects fx;
  for (auto& [name, p] : m.pods) {
    if (p.node != node || !is_live(p)) continue;
    bool held = present.count(p.uid) > 0;
    if (held && p.out_of_sync) {
      fx.kill.push_back({p.uid, p.node, "killed by the controller before the node restarted"});
    } else if (!held && p.out_of_sync) {
      p.phase = PodPhase::Failed;
      p.reason = "Killed";
      p.finished_ms = clock.now_ms;
      fx.release.push_back(p.uid);
      fx.changed = true;
    } else if (!held) {
      fx.launch.push_back(name);
    }
  }
  fx.merge(sync_job(m, clock));
  return fx;
}

Effects on_pods_placed(JobModel& m, const std::map<std::string, std::string>& node_by_uid,
                       const Clock& clock) {
  Effects fx;
  std::map<std::string, Pod*> by_uid;
  for (auto& [name, p] : m.pods) by_uid[p.uid] = &p;
  for (const auto& [uid, node] : node_by_uid) {
    auto it = by_uid.find(uid);
    bool wanted = it != by_uid.end() && it->second->node.empty() && !it->second->out_of_sync &&
                  it->second->phase == PodPhase::Pending && !is_finished(m.job.status.state.phase);
    if (!wanted) {
      fx.release.push_back(uid);  // the scheduler's reservation is not needed any more
      continue;
    }
    it->second->node = node;
    fx.launch.push_back(it->second->name);
    fx.changed = true;
  }
  fx.merge(sync_job(m, clock));
  return fx;
}

}  // namespace caldera
