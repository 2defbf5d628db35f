// The controller's entry points: each turns what happened (a pod report, a command, time) into a
// lifecycle event, lets the policies choose an action, and executes it in the current phase.
#include "actors/job/core/job_controller.hpp"
#include "actors/job/core/plugins.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "actors/job/core/batch_job_controller.hpp"
#include "actors/job/core/job_steps.hpp"
#include "actors/job/core/pod_template.hpp"

namespace caldera {
namespace {

std::optional<int32_t> exit_code_of(const Pod& p) {
  for (const auto& c : p.containers)
    if (c.state == ContainerState::Terminated && c.exit_code != 0) return c.exit_code;
  return std::nullopt;
}

bool task_completed(const JobModel& m, const std::string& task) {
  const TaskSpec* t = find_task(m.job.spec, task);
  if (!t) return false;
  auto census = m.pods.census();
  auto c = census.find({task, m.job.status.version});
  return c != census.end() && c->second.succeeded >= t->replicas;
}

bool task_retries_used_up(const JobModel& m, const std::string& task) {
  const TaskSpec* t = find_task(m.job.spec, task);
  if (!t || !t->max_retry) return false;
  auto it = m.task_retries.find(task);
  return (it == m.task_retries.end() ? 0 : it->second) >= *t->max_retry;
}

// Section 14.1's mapping from a pod's change to the event its job sees.
EventRequest event_for(const JobModel& m, const Pod& before, const Pod& now) {
  auto req = request_for(m, now, Event::OutOfSync);
  if (now.out_of_sync) return req;
  if (now.phase == before.phase) return req;
  switch (now.phase) {
    case PodPhase::Running:
      req.event = Event::PodRunning;
      break;
    case PodPhase::Failed:
      if (now.reason == "Evicted" || now.reason == kNodeLost || now.reason == kPreempted ||
          now.reason == kReclaimed) {
        req.event = Event::PodEvicted;
      } else {
        req.event = task_retries_used_up(m, now.task_name) ? Event::TaskFailed : Event::PodFailed;
        req.exit_code = exit_code_of(now);
      }
      break;
    case PodPhase::Succeeded:
      if (task_completed(m, now.task_name)) req.event = Event::TaskCompleted;
      break;
    default:
      break;
  }
  return req;
}

std::string describe_request(const EventRequest& req) {
  std::string out = std::string(to_string(req.event));
  if (!req.pod_name.empty()) out += " of pod " + req.pod_name;
  if (req.exit_code) out += fmt::format(" (exit code {})", *req.exit_code);
  return out;
}

// applyPolicies, then the action (now, or later when the policy has a timeout).
Effects handle(JobModel& m, const EventRequest& req, const Clock& clock) {
  Effects fx;
  for (const auto& d : cancel_on_event(m.delayed, req.event, req.pod_name, req.pod_uid)) {
    add_event(m, clock, "Normal", "DelayedActionCancelled",
              fmt::format("{} for {} of pod {}: the pod is now {}", to_string(d.action),
                          to_string(d.event), d.pod_name, to_string(req.event)));
    fx.changed = true;
  }
  auto decision = apply_policies(m.job.spec, m.job.uid, m.job.status.version, req);
  Step step;
  if (decision.matched && decision.delay_ms) {
    schedule_delayed(m, req, decision, clock, fx);
  } else if (decision.matched && decision.action != Action::SyncJob) {
    step.action = decision.action;
    step.target = target_of(decision.action, req.task, req.pod_name, req.partition);
    step.reason = std::string(to_string(req.event));
    step.message = fmt::format("{} -> {}", describe_request(req), to_string(decision.action));
    add_event(m, clock, "Normal", "PolicyMatched", step.message);
    fx.changed = true;
  }
  execute(m, step, clock, fx);
  return fx;
}

bool ends_for_ttl(JobPhase p) {
  return is_finished(p) || p == JobPhase::Aborted;
}

std::optional<int64_t> deadline_ms(const JobModel& m) {
  const auto& ads = m.job.spec.active_deadline_seconds;
  if (!ads || !is_active(m.job.status.state.phase)) return std::nullopt;
  return m.job.created_ms + *ads * 1000;
}

std::optional<int64_t> ttl_ms(const JobModel& m) {
  const auto& ttl = m.job.spec.ttl_seconds_after_finished;
  if (!ttl || !ends_for_ttl(m.job.status.state.phase)) return std::nullopt;
  return m.job.status.state.last_transition_ms + *ttl * 1000;
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
  ended.insert(ended.end(), other.ended.begin(), other.ended.end());
  unreserve.insert(unreserve.end(), other.unreserve.begin(), other.unreserve.end());
  files.insert(files.end(), other.files.begin(), other.files.end());
  phase_changes.insert(phase_changes.end(), other.phase_changes.begin(), other.phase_changes.end());
  request_placement = request_placement || other.request_placement;
  expired = expired || other.expired;
  changed = changed || other.changed;
  if (refused.empty()) refused = std::move(other.refused);
}

JobModel new_job(JobSpec spec, std::string uid, const Clock& clock) {
  const int64_t generation = spec.generation;
  if (spec.batch) {
    auto b = new_batch_job(std::move(spec), std::move(uid), clock);
    b.job.status.observed_generation = generation;
    return b;
  }
  JobModel m;
  m.job.status.observed_generation = generation;
  m.job.uid = std::move(uid);
  m.job.created_ms = clock.now_ms;
  m.job.spec = std::move(spec);
  auto& s = m.job.status;
  s.state = {JobPhase::Pending, "Created", "job accepted", clock.now_ms};
  s.conditions.push_back({JobPhase::Pending, clock.now_ms});
  s.min_available = m.job.spec.effective_min_available();
  add_event(m, clock, "Normal", "Created", "job accepted");
  return m;
}

void update_counts(JobModel& m, int64_t now_ms) {
  auto& s = m.job.status;
  s.pending = s.running = s.succeeded = s.failed = s.terminating = s.unknown = 0;
  s.task_status_count.clear();
  s.min_available = m.job.spec.effective_min_available();
  // From the pod table's census: the pods a change touched are recounted, not every pod.
  for (const auto& [key, c] : m.pods.census()) {
    s.terminating += c.terminating;
    if (c.in_sync() == 0) continue;
    auto& t = s.task_status_count[key.first];
    t.pending += c.pending, s.pending += c.pending;
    t.running += c.running, s.running += c.running;
    t.succeeded += c.succeeded, s.succeeded += c.succeeded;
    t.failed += c.failed, s.failed += c.failed;
    t.unknown += c.unknown, s.unknown += c.unknown;
  }
  // From the first time the job ran until it finished or was aborted (or now): it stops
  // growing at the end (volcano#1908).
  int64_t started = 0;
  for (const auto& c : s.conditions)
    if (c.status == JobPhase::Running) {
      started = c.last_transition_ms;
      break;
    }
  bool stopped = is_finished(s.state.phase) || s.state.phase == JobPhase::Aborted;
  int64_t end = stopped ? s.state.last_transition_ms : now_ms;
  s.running_duration_ms = started > 0 && end > started ? end - started : 0;
}

Effects sync_job(JobModel& m, const Clock& clock) {
  if (m.job.spec.batch) return sync_batch_job(m, {}, clock);
  Effects fx;
  execute(m, Step{}, clock, fx);
  return fx;
}

Effects on_pod_report(JobModel& m, const Pod& report, const Clock& clock) {
  Effects fx;
  auto it = m.pods.find(report.name);
  if (it == m.pods.end() || it->second.uid != report.uid) {
    // A pod this job does not own (an older incarnation): stop it if it still runs. Once ended,
    // its node forgets it: a node that was away when it was replaced would keep it for good.
    if (!report.node.empty()) {
      if (is_live(report))
        fx.kill.push_back({report.uid,
                           report.node,
                           "pod not owned by the current job",
                           {},
                           pod_grace_ms(m.job.spec, report.task_name)});
      else
        fx.remove.push_back({report.uid, report.node, "pod not owned by the current job"});
    }
    return fx;
  }
  Pod& p = it->second;
  if (is_terminal(p.phase)) {
    // Terminal is final; repeats change nothing. A node that was lost may come back still
    // running a pod that was evicted from it meanwhile: that pod must not run on.
    if (is_live(report) && !report.node.empty())
      fx.kill.push_back({report.uid,
                         report.node,
                         "evicted while its node was lost",
                         {},
                         pod_grace_ms(m.job.spec, report.task_name)});
    fx.merge(sync_job(m, clock));
    return fx;
  }
  // Applied already (a replayed outbox, a registration after the report itself) or older than
  // what was applied (reordered): it would take the pod back in time.
  if (report.status_seq != 0 && report.status_seq <= p.status_seq) return fx;
  if (report.status_seq > p.status_seq) p.status_seq = report.status_seq;
  if (report.phase == PodPhase::Failed && report.reason == kFailedCreate && !p.out_of_sync) {
    // Not a pod failure: the pod never existed on its node (Kubernetes' failed create), so no
    // policy sees it; it is made again and the round of launches stops.
    Pod failed = p;
    failed.message = report.message;
    pod_creation_failed(m, failed, clock, fx);
    fx.merge(sync_job(m, clock));
    return fx;
  }
  const Pod before = p;
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
  // A status the node numbered: the node freed the pod's room as it ended, so the scheduler may
  // take it back before this write (Effects::ended). The controller's own verdicts (node lost,
  // where the pod may still run; evicted before launch) wait for the write.
  if (is_live(before) && !is_live(p))
    (report.status_seq != 0 ? fx.ended : fx.release).push_back(p.uid);
  if (before.phase == PodPhase::Pending && p.phase != PodPhase::Pending) pod_created(m, p);
  if (m.job.spec.batch) {
    // A Kubernetes Job has no lifecycle policies: its sync counts the pod's end.
    std::vector<std::string> ended;
    if (is_live(before) && !is_live(p)) ended.push_back(p.name);
    fx.merge(sync_batch_job(m, ended, clock));
    return fx;
  }
  auto req = event_for(m, before, p);
  if (req.event == Event::PodFailed || req.event == Event::TaskFailed ||
      req.event == Event::PodEvicted)
    add_event(m, clock, "Warning", std::string(to_string(req.event)),
              fmt::format("pod {} {}{}", p.name,
                          req.event == Event::PodEvicted ? "was evicted" : "failed",
                          req.exit_code ? fmt::format(" with exit code {}", *req.exit_code)
                                        : (p.message.empty() ? "" : ": " + p.message)));
  fx.merge(handle(m, req, clock));
  return fx;
}

bool replaces_lost_pods_at_once(const JobSpec& spec) {
  auto it = spec.annotations.find(kReplaceLostPodsAnnotation);
  return it != spec.annotations.end() && it->second == "immediately";
}

int64_t lost_pods_stop_ms(const JobModel& m, const std::string& node) {
  int64_t ms = 0;
  for (const auto& [name, p] : m.pods)
    if (p.node == node && is_live(p))
      ms = std::max(ms, lease_stop_grace_ms(m.job.spec, p.task_name));
  return ms;
}

Effects on_node_lost(JobModel& m, const std::string& node, const std::string& why,
                     const Clock& clock) {
  std::vector<Pod> evicted;
  for (const auto& [name, p] : std::as_const(m.pods)) {
    if (p.node != node || !is_live(p)) continue;
    Pod r = p;
    r.phase = PodPhase::Failed;
    r.reason = std::string(kNodeLost);
    r.message =
        fmt::format("node {} which was running pod {} is unresponsive: {}", node, name, why);
    r.finished_ms = clock.now_ms;
    r.status_seq = 0;  // the controller's own verdict, not a status numbered by the node
    for (auto& c : r.containers) {
      if (c.state == ContainerState::Terminated) continue;
      c.state = ContainerState::Terminated;
      c.reason = std::string(kNodeLost);
      c.finished_ms = clock.now_ms;
    }
    evicted.push_back(std::move(r));
  }
  auto running = [&] {
    int32_t n = 0;
    for (const auto& [name, p] : std::as_const(m.pods))
      n += p.phase == PodPhase::Running && !p.out_of_sync;
    return n;
  };
  const bool was_whole =
      m.job.status.state.phase == JobPhase::Running && running() >= m.job.status.min_available;
  Effects fx;
  for (const auto& r : evicted) fx.merge(on_pod_report(m, r, clock));
  // The scheduler's pod group goes Unknown when a running gang falls below its minimum; the
  // job's policies hear it as the Unknown event (seed 000, updatePodGroup), unless a PodEvicted
  // policy has acted already.
  if (!m.job.spec.batch && was_whole && m.job.status.state.phase == JobPhase::Running &&
      running() < m.job.status.min_available) {
    EventRequest req;
    req.event = Event::JobUnknown;
    req.job_uid = m.job.uid;
    req.job_version = m.job.status.version;
    add_event(m, clock, "Warning", "Unknown",
              fmt::format("{} of the gang's {} pods run after node {} was lost", running(),
                          m.job.status.min_available, node));
    fx.merge(handle(m, req, clock));
    fx.changed = true;
  }
  return fx;
}

Effects on_pod_evicted(JobModel& m, const std::string& uid, const std::string& reason,
                       const std::string& why, const Clock& clock) {
  Effects fx;
  auto it = std::find_if(m.pods.cbegin(), m.pods.cend(),
                         [&](const auto& entry) { return entry.second.uid == uid; });
  if (it == m.pods.cend() || !is_live(it->second) || it->second.out_of_sync) return fx;
  const Pod& p = it->second;
  if (launched(m, p)) {
    // Its node ends it and reports it with the reason (its launch went the same way, first).
    fx.kill.push_back({p.uid, p.node, why, reason, pod_grace_ms(m.job.spec, p.task_name)});
    return fx;
  }
  // Never sent to its node: nothing runs, it ends here, and the node lets its reservation go
  // (kept, it would hold the room the eviction is for until it expires).
  if (!p.node.empty()) fx.unreserve.push_back({p.uid, p.node});
  Pod r = p;
  r.phase = PodPhase::Failed;
  r.reason = reason;
  r.message = why;
  r.finished_ms = clock.now_ms;
  r.status_seq = 0;  // the controller's own verdict
  fx.merge(on_pod_report(m, r, clock));
  return fx;
}

Effects on_command(JobModel& m, Action action, const std::string& command_id, const Clock& clock) {
  Effects fx;
  if (!command_id.empty()) {
    if (std::find(m.command_ids.begin(), m.command_ids.end(), command_id) != m.command_ids.end())
      return fx;  // a retried command: it has acted already
  }
  if (m.job.spec.batch) {
    fx.refused = fmt::format(
        "job {} is a Kubernetes Job (jobs.batch): it takes no {}; patch its spec.suspend instead",
        m.name(), to_string(action));
    return fx;
  }
  const auto phase = m.job.status.state.phase;
  if (!phase_takes(phase, action)) {
    // Not remembered: a retry of a refused command is refused again, never answered "done".
    fx.refused = fmt::format("job {} is {}: {} does nothing in this phase", m.name(),
                             to_string(phase), to_string(action));
    return fx;
  }
  if (!command_id.empty()) {
    m.command_ids.push_back(command_id);
    constexpr size_t kKeep = 32;
    if (m.command_ids.size() > kKeep)
      m.command_ids.erase(m.command_ids.begin(), m.command_ids.end() - kKeep);
  }
  fx.changed = true;
  add_event(m, clock, "Normal", "CommandIssued",
            fmt::format("{} by a client command", to_string(action)));
  Step step;
  step.action = action;
  step.reason = "CommandIssued";
  step.message = fmt::format("{} by a client command", to_string(action));
  step.by_user = true;
  execute(m, step, clock, fx);
  return fx;
}

Effects on_unschedulable(JobModel& m, const std::string& message, bool enqueued,
                         const Clock& clock) {
  Effects fx;
  auto& state = m.job.status.state;
  if (state.phase != JobPhase::Pending) return fx;  // a late report: the gang is in
  const std::string group_phase = enqueued ? "Inqueue" : "Pending";
  if (state.reason == kUnschedulable && state.message == message &&
      m.job.status.pod_group_phase == group_phase)
    return fx;
  // One event when the job becomes unschedulable; the message alone follows the free amounts.
  if (state.reason != kUnschedulable) add_event(m, clock, "Warning", kUnschedulable, message);
  state.reason = kUnschedulable;
  state.message = message;
  m.job.status.pod_group_phase = group_phase;
  fx.changed = true;
  return fx;
}

Effects on_tick(JobModel& m, const Clock& clock) {
  if (m.job.spec.batch) return on_batch_tick(m, clock);
  Effects fx;
  for (;;) {
    auto due = std::min_element(m.delayed.begin(), m.delayed.end(),
                                [](const auto& a, const auto& b) { return a.due_ms < b.due_ms; });
    if (due == m.delayed.end() || due->due_ms > clock.now_ms) break;
    DelayedAction d = *due;
    m.delayed.erase(due);
    fx.changed = true;
    auto pod = std::as_const(m.pods).find(d.pod_name);
    if (!d.pod_uid.empty() && (pod == m.pods.cend() || pod->second.uid != d.pod_uid)) continue;
    cancel_same_level(m.delayed, d);
    Step step;
    step.action = d.action;
    step.target = target_of(d.action, d.task, d.pod_name, d.partition);
    step.reason = std::string(to_string(d.event));
    step.message = fmt::format("{} of pod {} outlasted its timeout -> {}", to_string(d.event),
                               d.pod_name, to_string(d.action));
    add_event(m, clock, "Warning", "DelayedActionFired", step.message);
    execute(m, step, clock, fx);
  }
  if (auto dl = deadline_ms(m); dl && clock.now_ms >= *dl) {
    Step step;
    step.action = Action::TerminateJob;
    step.reason = "DeadlineExceeded";
    step.message = fmt::format("the job was active longer than activeDeadlineSeconds {}",
                               *m.job.spec.active_deadline_seconds);
    step.by_user = true;
    add_event(m, clock, "Warning", "DeadlineExceeded", step.message);
    fx.changed = true;
    execute(m, step, clock, fx);
  }
  if (m.creation.resume_at_ms && clock.now_ms >= m.creation.resume_at_ms)
    fx.merge(sync_job(m, clock));  // a stopped round of launches starts again
  relaunch_overdue(m, clock, fx);
  if (auto ttl = ttl_ms(m); ttl && clock.now_ms >= *ttl) fx.expired = true;
  return fx;
}

std::optional<int64_t> next_due_ms(const JobModel& m) {
  if (m.job.spec.batch) return batch_next_due_ms(m);
  std::optional<int64_t> next;
  auto consider = [&](std::optional<int64_t> t) {
    if (t && (!next || *t < *next)) next = t;
  };
  for (const auto& d : m.delayed) consider(d.due_ms);
  consider(deadline_ms(m));
  consider(ttl_ms(m));
  if (m.creation.resume_at_ms) consider(m.creation.resume_at_ms);
  consider(relaunch_due_ms(m));
  return next;
}

bool is_settled(const JobModel& m) {
  if (!ends_for_ttl(m.job.status.state.phase) || next_due_ms(m) || !m.creation.in_flight.empty())
    return false;
  for (const auto& [name, p] : m.pods.map())
    if (is_live(p)) return false;
  return true;
}

Effects on_node_up(JobModel& m, const std::string& node, const std::set<std::string>& present,
                   const Clock& clock) {
  Effects fx;
  std::vector<std::string> ended;
  for (auto it = m.pods.cbegin(); it != m.pods.cend(); ++it) {
    const auto& [name, p] = *it;
    if (p.node != node || !is_live(p)) continue;
    bool held = present.count(p.uid) > 0;
    if (held && p.out_of_sync) {
      fx.kill.push_back({p.uid,
                         p.node,
                         "killed by the controller before the node restarted",
                         {},
                         pod_grace_ms(m.job.spec, p.task_name)});
    } else if (!held && p.out_of_sync) {
      Pod& w = m.pods.edit(it);
      w.phase = PodPhase::Failed;
      w.reason = "Killed";
      w.finished_ms = clock.now_ms;
      fx.release.push_back(p.uid);
      fx.changed = true;
      ended.push_back(name);
    } else if (!held && launched(m, p)) {
      fx.launch.push_back(name);
    }
  }
  fx.merge(m.job.spec.batch ? sync_batch_job(m, ended, clock) : sync_job(m, clock));
  return fx;
}

Effects on_pods_placed(JobModel& m, const std::map<std::string, Placement>& by_placement,
                       const Clock& clock) {
  Effects fx;
  // Only pods waiting for a node can take a placement: they are the ones looked at.
  std::map<std::string, PodTable::const_iterator> by_uid;
  for (const Pod* p : m.pods.waiting())
    if (by_placement.count(p->uid)) by_uid.emplace(p->uid, m.pods.find(p->name));
  const auto phase = m.job.status.state.phase;
  const bool wants_pods = phase == JobPhase::Pending || phase == JobPhase::Running;
  int32_t placed = 0;
  for (const auto& [uid, placement] : by_placement) {
    auto it = by_uid.find(uid);
    const Pod* p = it == by_uid.end() ? nullptr : &it->second->second;
    bool wanted =
        wants_pods && p && p->node.empty() && !p->out_of_sync && p->phase == PodPhase::Pending;
    if (!wanted) {
      fx.release.push_back(uid);  // the scheduler's reservation is not needed any more
      fx.unreserve.push_back({uid, placement.node});
      continue;
    }
    Pod& w = m.pods.edit(it->second);
    w.node = placement.node;
    w.host_ip = placement.host_ip;
    fx.changed = true;  // the sync below launches it when its batch comes
    ++placed;
  }
  auto& state = m.job.status.state;
  // Placed pods mean the enqueue action admitted the gang: its pod group is Inqueue until they run.
  if (placed > 0 && phase == JobPhase::Pending) m.job.status.pod_group_phase = "Inqueue";
  if (placed > 0 && phase == JobPhase::Pending && state.reason == kUnschedulable) {
    // The gang is in: the shortfall no longer holds. MinAvailableReached follows once they run.
    int32_t bound = 0;
    for (const auto& [name, p] : std::as_const(m.pods))
      if (!p.node.empty() && !p.out_of_sync && p.job_version == m.job.status.version) ++bound;
    state.reason = "Scheduled";
    state.message = fmt::format("{}/{} pods placed, waiting for them to run", bound,
                                m.job.spec.total_replicas());
  }
  fx.merge(sync_job(m, clock));
  refresh_plugin_files(m, fx);
  return fx;
}

}  // namespace caldera
