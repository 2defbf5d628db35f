// The job's phases, one function each, as seed 000 sections 3.3 and 3.4 draw them: what each
// phase does with an action, and when SyncJob moves it on.
#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "actors/job/core/job_steps.hpp"
#include "actors/job/core/pod_template.hpp"

namespace caldera {
namespace {

// Volcano's retain phases: which ended pods a kill leaves in place for inspection.
enum class Retain { None, Soft };

// Moves to `to` keeping the reason of the transient phase that leads there (Aborting ->
// Aborted says why the job was aborted, not that its pods are gone).
void finish_transient(JobModel& m, JobPhase to, const Clock& clock, Effects& fx) {
  auto reason = m.job.status.state.reason;
  auto message = m.job.status.state.message;
  set_phase(m, to, std::move(reason), std::move(message), clock, fx);
}

int32_t live_pod_count(const JobModel& m) {
  int32_t n = 0;
  for (const auto& [key, c] : m.pods.census()) n += c.live();
  return n;
}

bool in_target(const Pod& p, const Target& t) {
  switch (t.level) {
    case ActionLevel::Job:
      return true;
    case ActionLevel::Task:
      return p.task_name == t.task;
    case ActionLevel::Pod:
      return p.name == t.pod_name;
    case ActionLevel::Partition:
      return p.task_name == t.task && p.partition == t.partition;
  }
  return false;
}

// KillJob / KillTarget: pods are marked out-of-sync before they are stopped, so that their
// deaths are OutOfSync and not PodEvicted. Ended pods stay visible under Retain::Soft.
void kill_pods(JobModel& m, const Target& target, Retain retain, const std::string& why,
               const Clock& clock, Effects& fx) {
  for (auto it = m.pods.cbegin(); it != m.pods.cend(); ++it) {
    if (it->second.out_of_sync || !in_target(it->second, target)) continue;
    if (is_terminal(it->second.phase) && retain == Retain::Soft) continue;
    kill_pod(m, it, why, clock, fx);
  }
}

// Seed 000 section 12, with `condition` added: a dependency is met when minAvailable of its
// pods are Running or Succeeded (or, with condition Succeeded, have succeeded).
bool dependencies_met(const JobModel& m, const TaskSpec& task) {
  if (!task.depends_on || task.depends_on->names.empty()) return true;
  const auto& dep = *task.depends_on;
  const bool need_success = dep.condition == "Succeeded";
  const auto census = m.pods.census();
  auto met = [&](const std::string& name) {
    const TaskSpec* t = find_task(m.job.spec, name);
    if (!t) return true;  // admission refuses unknown names
    auto c = census.find({name, m.job.status.version});
    if (c == census.end()) return false;
    int32_t have = c->second.succeeded + (need_success ? 0 : c->second.running);
    return have >= t->min_available.value_or(t->replicas);
  };
  if (dep.iteration == "any") return std::any_of(dep.names.begin(), dep.names.end(), met);
  return std::all_of(dep.names.begin(), dep.names.end(), met);
}

// A new pod raises PodPending: a PodPending policy with a timeout starts waiting now.
void raise_pod_pending(JobModel& m, const Pod& p, const Clock& clock, Effects& fx) {
  auto req = request_for(m, p, Event::PodPending);
  auto d = apply_policies(m.job.spec, m.job.uid, m.job.status.version, req);
  if (d.matched && d.delay_ms) schedule_delayed(m, req, d, clock, fx);
}

// syncJob's create loop: the pods the spec wants at the current version that do not exist yet,
// for every task whose dependencies are met.
void create_missing_pods(JobModel& m, const Clock& clock, Effects& fx) {
  // Pod indices run below replicas, so a task with that many pods has them all: the usual case,
  // found without making every pod's name.
  std::map<std::string, int32_t> have;
  for (const auto& [key, c] : m.pods.census()) have[key.first] += c.total;
  // A pod made again after a restart (pods waiting for a node have no row) keeps the uid its
  // PodPending action names, and that action keeps its due time.
  std::map<std::string, std::string> pending_uid;
  for (const auto& d : m.delayed)
    if (d.event == Event::PodPending && !d.pod_name.empty()) pending_uid[d.pod_name] = d.pod_uid;
  for (const auto& task : m.job.spec.tasks) {
    auto h = have.find(task.name);
    if (h != have.end() && h->second >= task.replicas) continue;
    if (!dependencies_met(m, task)) continue;
    for (int32_t i = 0; i < task.replicas; ++i) {
      auto name = pod_name(m.name(), task.name, i);
      if (m.pods.count(name)) continue;
      Pod p;
      p.name = name;
      auto waited = pending_uid.find(name);
      p.uid = waited != pending_uid.end() ? waited->second : clock.new_uid();
      p.namespace_ = m.job.spec.namespace_;
      p.job_name = m.name();
      p.task_name = task.name;
      p.index = i;
      p.job_version = m.job.status.version;
      p.phase = PodPhase::Pending;
      p.created_ms = clock.now_ms;
      if (task.partition_policy && task.partition_policy->partition_size > 0)
        p.partition = i / task.partition_policy->partition_size;
      auto& created = m.pods.emplace(name, std::move(p)).first->second;
      fx.changed = true;
      if (waited == pending_uid.end()) raise_pod_pending(m, created, clock, fx);
    }
  }
}

// Elastic scaling down (an applied spec with fewer replicas): the pods of an index at or past
// their task's replicas are stopped, highest index first, as out-of-sync (never an eviction);
// once ended they leave the table, so that the job counts only the pods it wants.
void remove_surplus_pods(JobModel& m, const Clock& clock, Effects& fx) {
  std::map<std::string, int32_t> wanted;
  for (const auto& t : m.job.spec.tasks) wanted[t.name] = t.replicas;
  std::vector<std::pair<int32_t, std::string>> surplus;  // (index, name), highest first
  for (const auto& [name, p] : std::as_const(m.pods)) {
    auto w = wanted.find(p.task_name);
    if (w != wanted.end() && p.index >= w->second) surplus.emplace_back(p.index, name);
  }
  if (surplus.empty()) return;
  std::sort(surplus.rbegin(), surplus.rend());
  for (const auto& [index, name] : surplus) {
    auto it = m.pods.find(name);
    if (!it->second.out_of_sync) kill_pod(m, it, "scaled down", clock, fx);
    it = m.pods.find(name);
    if (!is_terminal(it->second.phase)) continue;
    if (!it->second.node.empty())
      fx.remove.push_back({it->second.uid, it->second.node, "scaled down"});
    m.pods.erase(it);
    fx.changed = true;
  }
}

// Before a restarted job creates its pods again: the ended pods it killed and those of earlier
// versions leave the table (and their nodes forget them, logs included).
void drop_replaced_pods(JobModel& m, Effects& fx) {
  for (auto it = m.pods.cbegin(); it != m.pods.cend();) {
    const Pod& p = it->second;
    bool replaced = p.out_of_sync || p.job_version < m.job.status.version;
    if (!is_terminal(p.phase) || !replaced) {
      ++it;
      continue;
    }
    if (!p.node.empty()) fx.remove.push_back({p.uid, p.node, "replaced by a restart"});
    it = m.pods.erase(it);
    fx.changed = true;
  }
}

// RestartJob, RestartTask, RestartPod, RestartPartition. A restart the job's policies ask for
// consumes a retry; when none is left the job keeps what ran (Retain::Soft) and ends Failed.
void restart(JobModel& m, const Step& s, const Clock& clock, Effects& fx) {
  auto& status = m.job.status;
  const int32_t max_retry = m.job.spec.effective_max_retry();
  if (!s.by_user && status.retry_count >= max_retry) {
    m.retries_exhausted = true;
    kill_pods(m, {}, Retain::Soft, "the job failed: its retries are used up", clock, fx);
    set_phase(m, JobPhase::Restarting, "MaxRetryExceeded",
              fmt::format("{}; no retry left after {} restart(s), maxRetry {}", s.message,
                          status.retry_count, max_retry),
              clock, fx);
    return;
  }
  if (!s.by_user) ++status.retry_count;
  Target target = s.target;
  if (level_of(s.action) == ActionLevel::Job) target = {};
  if (target.level == ActionLevel::Job) {
    ++status.version;  // pods of the old version become stale: their events only sync
  } else if (!target.task.empty()) {
    ++m.task_retries[target.task];
  }
  kill_pods(m, target, Retain::None, fmt::format("{}: {}", to_string(s.action), s.reason), clock,
            fx);
  set_phase(m, JobPhase::Restarting, s.reason, s.message, clock, fx);
}

// ResumeJob: a fresh version of the job, without consuming a retry.
void resume(JobModel& m, const Step& s, const Clock& clock, Effects& fx) {
  ++m.job.status.version;
  kill_pods(m, {}, Retain::None, "resumed", clock, fx);
  set_phase(m, JobPhase::Restarting, s.reason, s.message, clock, fx);
}

// What Pending and Running do with restart, abort, complete and terminate (section 3.4).
bool act(JobModel& m, const Step& s, const Clock& clock, Effects& fx) {
  auto stop = [&](JobPhase to) {
    kill_pods(m, {}, Retain::Soft, fmt::format("job {}", to_string(to)), clock, fx);
    set_phase(m, to, s.reason, s.message, clock, fx);
  };
  switch (s.action) {
    case Action::RestartJob:
    case Action::RestartTask:
    case Action::RestartPod:
    case Action::RestartPartition:
      restart(m, s, clock, fx);
      return true;
    case Action::AbortJob:
      stop(JobPhase::Aborting);
      return true;
    case Action::CompleteJob:
      stop(JobPhase::Completing);
      return true;
    case Action::TerminateJob:
      stop(JobPhase::Terminating);
      return true;
    case Action::SyncJob:
    case Action::ResumeJob:
      return false;
  }
  return false;
}

// ---- one function per phase ----

void pending_phase(JobModel& m, const Step& s, const Clock& clock, Effects& fx) {
  if (act(m, s, clock, fx)) return;
  remove_surplus_pods(m, clock, fx);
  create_missing_pods(m, clock, fx);
  update_counts(m, clock.now_ms);
  const auto& st = m.job.status;
  auto min_available = m.job.spec.effective_min_available();
  if (min_available <= st.running + st.succeeded + st.failed)
    set_phase(m, JobPhase::Running, "MinAvailableReached",
              fmt::format("{} of {} pods running or finished, minAvailable {}",
                          st.running + st.succeeded + st.failed, m.job.spec.total_replicas(),
                          min_available),
              clock, fx);
}

void running_phase(JobModel& m, const Step& s, const Clock& clock, Effects& fx) {
  if (act(m, s, clock, fx)) return;
  remove_surplus_pods(m, clock, fx);
  create_missing_pods(m, clock, fx);
  update_counts(m, clock.now_ms);
  const auto& spec = m.job.spec;
  const auto& st = m.job.status;
  auto total = spec.total_replicas();
  if (total == 0) return;
  auto min_available = spec.effective_min_available();

  if (spec.min_success && st.succeeded >= *spec.min_success) {
    set_phase(m, JobPhase::Completed, "MinSuccessReached",
              fmt::format("{} pods succeeded, minSuccess {}", st.succeeded, *spec.min_success),
              clock, fx);
    return;
  }
  if (st.succeeded + st.failed == total) {
    int32_t task_min_total = 0;
    for (const auto& t : spec.tasks) task_min_total += t.min_available.value_or(0);
    if (min_available >= task_min_total) {
      for (const auto& t : spec.tasks) {
        if (!t.min_available) continue;
        auto it = st.task_status_count.find(t.name);
        int32_t ok = it == st.task_status_count.end() ? 0 : it->second.succeeded;
        if (ok < *t.min_available) {
          set_phase(m, JobPhase::Failed, "TaskMinAvailableNotMet",
                    fmt::format("task {}: {} pods succeeded, minAvailable {}", t.name, ok,
                                *t.min_available),
                    clock, fx);
          return;
        }
      }
    }
    if (spec.min_success && st.succeeded < *spec.min_success) {
      set_phase(m, JobPhase::Failed, "MinSuccessNotMet",
                fmt::format("all pods finished: {} succeeded, minSuccess {}", st.succeeded,
                            *spec.min_success),
                clock, fx);
    } else if (st.succeeded >= min_available) {
      set_phase(m, JobPhase::Completed, "PodsSucceeded",
                fmt::format("all pods finished: {} succeeded, {} failed, minAvailable {}",
                            st.succeeded, st.failed, min_available),
                clock, fx);
    } else {
      set_phase(m, JobPhase::Failed, "MinAvailableNotMet",
                fmt::format("all pods finished: {} succeeded, {} failed, minAvailable {}",
                            st.succeeded, st.failed, min_available),
                clock, fx);
    }
    return;
  }
  if (st.pending > total - min_available)
    set_phase(m, JobPhase::Pending, "NotEnoughPods",
              fmt::format("{} pods pending, more than replicas {} - minAvailable {}", st.pending,
                          total, min_available),
              clock, fx);
}

// Restarting ignores actions: it waits until the pods it killed are gone (a RestartPod leaves
// the other pods running).
void restarting_phase(JobModel& m, const Step&, const Clock& clock, Effects& fx) {
  for (const auto& [key, c] : m.pods.census())
    if (c.terminating > 0) return;
  if (m.retries_exhausted) {
    finish_transient(m, JobPhase::Failed, clock, fx);
    return;
  }
  drop_replaced_pods(m, fx);
  const auto& st = m.job.status;
  set_phase(m, JobPhase::Pending, "Restarted",
            fmt::format("version {}, {} of {} retries used", st.version, st.retry_count,
                        m.job.spec.effective_max_retry()),
            clock, fx);
}

void aborting_phase(JobModel& m, const Step& s, const Clock& clock, Effects& fx) {
  if (s.action == Action::ResumeJob) {
    resume(m, s, clock, fx);
    return;
  }
  if (live_pod_count(m) == 0) finish_transient(m, JobPhase::Aborted, clock, fx);
}

void aborted_phase(JobModel& m, const Step& s, const Clock& clock, Effects& fx) {
  if (s.action == Action::ResumeJob) resume(m, s, clock, fx);
}

void completing_phase(JobModel& m, const Step&, const Clock& clock, Effects& fx) {
  if (live_pod_count(m) == 0) finish_transient(m, JobPhase::Completed, clock, fx);
}

void terminating_phase(JobModel& m, const Step&, const Clock& clock, Effects& fx) {
  if (live_pod_count(m) == 0) finish_transient(m, JobPhase::Terminated, clock, fx);
}

// Completed, Terminated, Failed: whatever still runs is stopped; ended pods stay.
void finished_phase(JobModel& m, const Step&, const Clock& clock, Effects& fx) {
  for (const auto& [key, c] : m.pods.census())
    if (c.pending + c.running + c.unknown > 0) {
      kill_pods(m, {}, Retain::Soft, fmt::format("job {}", to_string(m.job.status.state.phase)),
                clock, fx);
      return;
    }
}

void run_phase(JobModel& m, const Step& s, const Clock& clock, Effects& fx) {
  switch (m.job.status.state.phase) {
    case JobPhase::Pending:
      return pending_phase(m, s, clock, fx);
    case JobPhase::Running:
      return running_phase(m, s, clock, fx);
    case JobPhase::Restarting:
      return restarting_phase(m, s, clock, fx);
    case JobPhase::Aborting:
      return aborting_phase(m, s, clock, fx);
    case JobPhase::Aborted:
      return aborted_phase(m, s, clock, fx);
    case JobPhase::Completing:
      return completing_phase(m, s, clock, fx);
    case JobPhase::Terminating:
      return terminating_phase(m, s, clock, fx);
    case JobPhase::Completed:
    case JobPhase::Terminated:
    case JobPhase::Failed:
      return finished_phase(m, s, clock, fx);
  }
}

}  // namespace

// Mirrors the phase functions above: act() in Pending and Running, resume() in Aborting and
// Aborted; every other phase ignores actions.
void set_phase(JobModel& m, JobPhase to, std::string reason, std::string message,
               const Clock& clock, Effects& fx) {
  auto& state = m.job.status.state;
  if (state.phase == to) return;
  fx.phase_changes.push_back({state.phase, to, reason});
  bool bad = to == JobPhase::Failed || to == JobPhase::Aborted || to == JobPhase::Terminated;
  add_event(m, clock, bad ? "Warning" : "Normal", reason,
            fmt::format("{} -> {}: {}", to_string(state.phase), to_string(to), message));
  state.phase = to;
  state.reason = std::move(reason);
  state.message = std::move(message);
  state.last_transition_ms = clock.now_ms;
  m.job.status.conditions.push_back({to, clock.now_ms});
  // Its pods are going: the gang is admitted anew, as Volcano's pod group of a job that ran goes
  // back to Pending.
  if (to == JobPhase::Restarting) m.job.status.pod_group_phase.clear();
  // Delayed actions belong to a running gang; a job that restarts, stops or ends drops them.
  if (!is_active(to) && !m.delayed.empty()) {
    add_event(m, clock, "Normal", "DelayedActionCancelled",
              fmt::format("{} delayed action(s) dropped: the job is {}", m.delayed.size(),
                          to_string(to)));
    m.delayed.clear();
  }
  fx.changed = true;
}

void kill_pod(JobModel& m, PodTable::const_iterator it, const std::string& why, const Clock& clock,
              Effects& fx) {
  Pod& p = m.pods.edit(it);
  p.out_of_sync = true;
  fx.changed = true;
  if (is_terminal(p.phase)) return;
  if (launched(m, p)) {
    fx.kill.push_back({p.uid, p.node, why, {}, pod_grace_ms(m.job.spec, p.task_name)});
    return;
  }
  // Never sent to a node (unplaced, or waiting for its batch): nothing runs, it ends here; a
  // node it was placed on lets its reservation go.
  if (!p.node.empty()) fx.unreserve.push_back({p.uid, p.node});
  p.phase = PodPhase::Failed;
  p.reason = "Killed";
  p.message = why;
  p.finished_ms = clock.now_ms;
  fx.release.push_back(p.uid);
}

bool phase_takes(JobPhase phase, Action action) {
  switch (phase) {
    case JobPhase::Pending:
    case JobPhase::Running:
      return action != Action::SyncJob && action != Action::ResumeJob;
    case JobPhase::Aborting:
    case JobPhase::Aborted:
      return action == Action::ResumeJob;
    default:
      return false;
  }
}

void execute(JobModel& m, const Step& step, const Clock& clock, Effects& fx) {
  update_counts(m, clock.now_ms);
  run_phase(m, step, clock, fx);
  // A fast job can pass several arrows in one event (Pending -> Running -> Completed when its
  // pods ended before we saw them run); each arrow still gets its condition. Bounded: the
  // longest chain is Restarting -> Pending -> Running -> Completed.
  for (int i = 0; i < 8; ++i) {
    update_counts(m, clock.now_ms);
    auto before = m.job.status.state.phase;
    run_phase(m, Step{}, clock, fx);
    if (m.job.status.state.phase == before) break;
  }
  update_counts(m, clock.now_ms);
  launch_next_batch(m, clock, fx);
  if (is_active(m.job.status.state.phase)) {
    for (const auto& [key, c] : m.pods.census())
      if (c.waiting > 0) {
        fx.request_placement = true;
        break;
      }
  } else {
    fx.request_placement = false;
  }
}

const TaskSpec* find_task(const JobSpec& spec, const std::string& name) {
  for (const auto& t : spec.tasks)
    if (t.name == name) return &t;
  return nullptr;
}

EventRequest request_for(const JobModel& m, const Pod& pod, Event event) {
  EventRequest req;
  req.event = event;
  req.task = pod.task_name;
  req.pod_name = pod.name;
  req.pod_uid = pod.uid;
  req.partition = pod.partition;
  req.job_uid = m.job.uid;
  req.job_version = pod.job_version;
  return req;
}

void add_event(JobModel& m, const Clock& clock, std::string type, std::string reason,
               std::string message) {
  auto& events = m.job.events;
  events.push_back({clock.now_ms, std::move(type), std::move(reason), std::move(message)});
  if (events.size() > kMaxJobEvents)
    events.erase(events.begin(), events.begin() + (events.size() - kMaxJobEvents));
}

void schedule_delayed(JobModel& m, const EventRequest& req, const PolicyDecision& d,
                      const Clock& clock, Effects& fx) {
  DelayedAction a{req.pod_name,
                  req.pod_uid,
                  req.task,
                  req.partition,
                  req.event,
                  d.action,
                  clock.now_ms + *d.delay_ms};
  for (const auto& w : m.delayed)
    if (w.pod_uid == a.pod_uid && w.pod_name == a.pod_name && w.event == a.event &&
        w.action == a.action)
      return;
  m.delayed.push_back(a);
  fx.changed = true;
  add_event(m, clock, "Normal", "DelayedActionScheduled",
            fmt::format("{} in {}ms unless {} of pod {} clears", to_string(a.action), *d.delay_ms,
                        to_string(a.event), a.pod_name.empty() ? "-" : a.pod_name));
}

Target target_of(Action action, const std::string& task, const std::string& pod_name,
                 int32_t partition) {
  Target t;
  t.level = level_of(action);
  t.task = task;
  t.pod_name = pod_name;
  t.partition = partition;
  bool known = t.level == ActionLevel::Job || (t.level == ActionLevel::Pod && !pod_name.empty()) ||
               (t.level == ActionLevel::Task && !task.empty()) ||
               (t.level == ActionLevel::Partition && !task.empty() && partition >= 0);
  if (!known) t = {};  // nothing narrower to aim at: the whole job
  return t;
}

}  // namespace caldera
