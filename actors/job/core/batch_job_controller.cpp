// syncJob's steps, in its order: count the pods that ended, decide whether the job ends (and
// finish it once its pods are gone), else manage its pods (suspend, resume, scale, create after
// the back-off); then show the status and move the phase the job actor's machinery reads.
#include "actors/job/core/batch_job_controller.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "actors/job/core/active_pods.hpp"
#include "actors/job/core/batch_job_end.hpp"
#include "actors/job/core/job_steps.hpp"
#include "actors/job/core/pod_template.hpp"
#include "actors/job/core/slow_start.hpp"
#include "messages/model/completion_indexes.hpp"

namespace caldera {
namespace {

const BatchJobFields& fields(const JobModel& m) {
  return *m.job.spec.batch;
}

BatchJobStatus& status(JobModel& m) {
  auto& s = m.job.status.batch;
  if (!s) s.emplace();
  return *s;
}

const BatchJobStatus& status(const JobModel& m) {
  static const BatchJobStatus kNone;
  return m.job.status.batch ? *m.job.status.batch : kNone;
}

int32_t completions(const JobModel& m) {
  return fields(m).completions.value_or(0);
}

bool per_index(const JobModel& m) {
  return fields(m).indexed() && fields(m).backoff_limit_per_index.has_value();
}

bool valid_index(const JobModel& m, int32_t index) {
  return fields(m).indexed() && index >= 0 && index < completions(m);
}

// Kubernetes replaces a pod being deleted only once it has failed, with this policy (the only
// one a podFailurePolicy allows, and its default there).
bool only_replace_failed(const JobModel& m) {
  const auto& f = fields(m);
  return f.pod_replacement_policy == "Failed" ||
         (f.pod_replacement_policy.empty() && f.pod_failure_policy.has_value());
}

// The job is ending: its end is decided, its pods are being deleted.
const BatchJobCondition* ending(const JobModel& m) {
  for (const char* type : {kJobFailureTarget, kJobSuccessCriteriaMet})
    if (has_true_condition(status(m), type)) return find_condition(status(m), type);
  return nullptr;
}

// Kubernetes' ensureJobConditionStatus: a condition absent is added only as True; one there
// changes (and its transition time with it) only when its status does. Whether it changed.
bool set_condition(JobModel& m, const char* type, const char* value, std::string reason,
                   std::string message, const Clock& clock) {
  auto& conditions = status(m).conditions;
  for (auto& c : conditions) {
    if (c.type != type) continue;
    if (c.status == value) return false;
    c = {type, value, std::move(reason), std::move(message), clock.now_ms, clock.now_ms};
    return true;
  }
  if (std::string_view(value) != "True") return false;
  conditions.push_back(
      {type, value, std::move(reason), std::move(message), clock.now_ms, clock.now_ms});
  return true;
}

PodBackoff& backoff_of(JobModel& m, int32_t index) {
  return m.batch.backoff[per_index(m) && valid_index(m, index) ? index : kJobWideBackoff];
}

// --- Counting: each pod's end, once (Kubernetes' uncounted pods, counted in one write). ---

struct Counted {
  std::optional<FailurePolicyMatch> fail_job;  // a FailJob rule matched
};

void count_success(JobModel& m, const Pod& p, int64_t end_ms) {
  auto& s = status(m);
  if (!fields(m).indexed()) {
    ++s.succeeded;
  } else if (valid_index(m, p.index) && !m.batch.failed_indexes.count(p.index)) {
    // One success per index: a second pod of an index that succeeded adds nothing.
    m.batch.succeeded_indexes.insert(p.index);
    s.succeeded = static_cast<int32_t>(m.batch.succeeded_indexes.size());
  }
  record_pod_end(backoff_of(m, p.index), true, end_ms);
}

void count_failure(JobModel& m, const Pod& p, int64_t end_ms, const Clock& clock,
                   Counted& counted) {
  std::optional<FailurePolicyMatch> match;
  // Once the job's end is decided, its pods are deleted: their ends count, no rule applies.
  if (fields(m).pod_failure_policy && !ending(m))
    match = match_pod_failure_policy(*fields(m).pod_failure_policy, p, m.job.spec.key());
  const std::string action = match ? match->action : "Count";
  auto& backoff = backoff_of(m, p.index);
  // Even a failure the policy ignores makes the replacement wait out the back-off, as
  // Kubernetes' back-off counts every failed pod; it is not counted against any limit.
  record_pod_end(backoff, false, end_ms);
  if (action == "Ignore") {
    if (per_index(m)) ++m.batch.ignored_failures[p.index];
    add_event(m, clock, "Normal", "PodFailureIgnored", match->message);
    return;
  }
  ++status(m).failed;
  if (action == "FailJob" && !counted.fail_job) counted.fail_job = match;
  const auto ignored = m.batch.ignored_failures.find(p.index);
  const int32_t index_failures = backoff.failures_since_success -
                                 (ignored == m.batch.ignored_failures.end() ? 0 : ignored->second);
  if (per_index(m) && valid_index(m, p.index) && !m.batch.succeeded_indexes.count(p.index) &&
      (action == "FailIndex" || index_failures > *fields(m).backoff_limit_per_index)) {
    if (m.batch.failed_indexes.insert(p.index).second)
      add_event(m, clock, "Warning", "FailedIndex",
                fmt::format("index {} failed{}", p.index,
                            action == "FailIndex" ? ": " + match->message
                                                  : " past its backoffLimitPerIndex"));
  }
}

// An Indexed job's pod without a valid index is deleted, never counted.
bool counts(const JobModel& m, const Pod& p) {
  return !fields(m).indexed() || valid_index(m, p.index);
}

Counted count_ended(JobModel& m, const std::vector<std::string>& ended, const Clock& clock) {
  Counted counted;
  for (const auto& name : ended) {
    auto it = std::as_const(m.pods).find(name);
    if (it == m.pods.cend() || is_live(it->second)) continue;
    if (m.batch.counted_terminating.erase(name)) continue;  // counted as it was deleted
    const Pod& p = it->second;
    if (!counts(m, p)) continue;
    const int64_t end_ms = p.finished_ms ? p.finished_ms : clock.now_ms;
    if (p.phase == PodPhase::Succeeded)
      count_success(m, p, end_ms);
    else
      count_failure(m, p, end_ms, clock, counted);
  }
  return counted;
}

// A pod being deleted is a failure for Kubernetes (unless only failed pods are replaced): counted
// from the first sync that finds it terminating, not again when it ends.
// Whether it counted any.
bool count_terminating(JobModel& m, const Clock& clock, Counted& counted) {
  if (only_replace_failed(m)) return false;
  int32_t terminating = 0;
  for (const auto& [key, n] : m.pods.census()) terminating += n.terminating;
  if (terminating <= static_cast<int32_t>(m.batch.counted_terminating.size())) return false;
  bool any = false;
  for (const auto& [name, p] : m.pods.map()) {
    if (!p.out_of_sync || !is_live(p) || m.batch.counted_terminating.count(name)) continue;
    if (!counts(m, p)) continue;
    m.batch.counted_terminating.insert(name);
    count_failure(m, p, clock.now_ms, clock, counted);
    any = true;
  }
  return any;
}

// A job that fails counts every pod still live as failed at once (they are being deleted).
void count_live_as_failed(JobModel& m, const Clock& clock) {
  Counted ignored;
  for (const auto& [name, p] : m.pods.map()) {
    if (!is_live(p) || m.batch.counted_terminating.count(name) || !counts(m, p)) continue;
    m.batch.counted_terminating.insert(name);
    count_failure(m, p, clock.now_ms, clock, ignored);
  }
}

// --- The pods as the status shows them. ---

struct PodCount {
  int32_t active = 0;  // live, not being deleted
  int32_t ready = 0;
  int32_t terminating = 0;
};

PodCount count_pods(const JobModel& m) {
  PodCount c;
  for (const auto& [key, n] : m.pods.census()) {
    c.active += n.pending + n.running + n.unknown;
    c.ready += n.running;
    c.terminating += n.terminating;
  }
  return c;
}

// --- Deleting and creating pods. A pod the controller deletes (kill_pod) is out of sync,
// terminating, until it ends; one never launched ends at once and, as it never ran, is no failure
// of the job's (Kubernetes counts any deleted pod as failed: it cannot tell one that never ran).

// The job's live pods not being deleted, in the order Kubernetes deletes them: for an Indexed
// job, pods of an index out of range, succeeded, failed or held by another pod first, then the
// highest indexes; else pods not placed, then not running, then the newest.
std::vector<PodTable::const_iterator> pods_for_removal(const JobModel& m, int32_t at_least) {
  std::vector<PodTable::const_iterator> active, out;
  for (auto it = m.pods.cbegin(); it != m.pods.cend(); ++it)
    if (is_live(it->second) && !it->second.out_of_sync) active.push_back(it);
  if (fields(m).indexed()) {
    std::sort(active.begin(), active.end(), [](auto a, auto b) {
      return a->second.index != b->second.index ? a->second.index < b->second.index
                                                : a->second.created_ms < b->second.created_ms;
    });
    std::vector<PodTable::const_iterator> kept;
    for (size_t i = 0; i < active.size(); ++i) {
      const int32_t index = active[i]->second.index;
      const bool duplicate = i > 0 && active[i - 1]->second.index == index;
      if (!valid_index(m, index) || duplicate || m.batch.succeeded_indexes.count(index) ||
          m.batch.failed_indexes.count(index))
        out.push_back(active[i]);
      else
        kept.push_back(active[i]);
    }
    std::reverse(kept.begin(), kept.end());
    active = std::move(kept);
  } else {
    auto rank = [](const Pod& p) {
      return p.node.empty() ? 0 : p.phase == PodPhase::Running ? 2 : 1;
    };
    std::stable_sort(active.begin(), active.end(), [&](auto a, auto b) {
      const int ra = rank(a->second), rb = rank(b->second);
      return ra != rb ? ra < rb : a->second.created_ms > b->second.created_ms;
    });
  }
  for (auto it : active) {
    if (static_cast<int32_t>(out.size()) >= at_least) break;
    out.push_back(it);
  }
  return out;
}

void create_pod(JobModel& m, int32_t index, const Clock& clock, Effects& fx) {
  Pod p;
  p.uid = clock.new_uid();
  p.name = batch_pod_name(m.name(), index, p.uid);
  for (int attempt = 0; m.pods.count(p.name) && attempt < 8; ++attempt) {
    p.uid = clock.new_uid();
    p.name = batch_pod_name(m.name(), index, p.uid);
  }
  p.namespace_ = m.job.spec.namespace_;
  p.job_name = m.name();
  p.task_name = kBatchJobTask;
  p.batch_job = true;
  p.index = index;
  p.job_version = m.job.status.version;
  p.phase = PodPhase::Pending;
  p.created_ms = clock.now_ms;
  add_event(m, clock, "Normal", "SuccessfulCreate", "Created pod: " + p.name);
  std::string name = p.name;  // the arguments' order of evaluation is unspecified
  m.pods.emplace(std::move(name), std::move(p));
  fx.changed = true;
}

// The indexes that may get a pod now: neither done nor held by a live pod (nor, when only
// failed pods are replaced, by one being deleted), nor waiting out their back-off.
std::set<int32_t> indexes_taken(const JobModel& m, int64_t now_ms, int64_t& next_allowed_ms) {
  std::set<int32_t> taken;
  const bool count_terminating = only_replace_failed(m);
  for (const auto& [name, p] : m.pods.map())
    if (is_live(p) && (!p.out_of_sync || count_terminating)) taken.insert(p.index);
  if (per_index(m))
    for (const auto& [index, b] : m.batch.backoff) {
      const int64_t at = pod_allowed_at_ms(b);
      if (index == kJobWideBackoff || at <= now_ms) continue;
      taken.insert(index);
      next_allowed_ms = next_allowed_ms ? std::min(next_allowed_ms, at) : at;
    }
  return taken;
}

// manageJob: no pod while suspended; else the active pods the job wants, deleting those past
// it and creating the missing ones once the failure back-off allows.
void manage_pods(JobModel& m, const Clock& clock, Effects& fx) {
  const auto& f = fields(m);
  auto& s = status(m);
  const PodCount pods = count_pods(m);
  if (f.suspend) {
    for (auto it : pods_for_removal(m, pods.active))
      kill_pod(m, it, "the job is suspended", clock, fx);
    if (set_condition(m, kJobSuspended, "True", "JobSuspended", "Job suspended", clock)) {
      add_event(m, clock, "Normal", "Suspended", "Job suspended");
      fx.changed = true;
    }
    return;
  }
  const int32_t wanted = wanted_active(f, pods.active, s.succeeded);
  const int32_t extra = pods.active - wanted;
  auto removal = pods_for_removal(m, std::max(extra, 0));
  if (!removal.empty()) {
    if (static_cast<int32_t>(removal.size()) > kMaxPodCreateDeletePerSync)
      removal.resize(kMaxPodCreateDeletePerSync);
    for (auto it : removal) kill_pod(m, it, "too many active pods for the job", clock, fx);
    return;
  }
  int32_t missing = wanted - pods.active - (only_replace_failed(m) ? pods.terminating : 0);
  missing = std::min(missing, kMaxPodCreateDeletePerSync);
  if (missing <= 0) return;
  if (!per_index(m)) {
    const int64_t allowed = pod_allowed_at_ms(backoff_of(m, kJobWideBackoff));
    if (allowed > clock.now_ms) {
      m.batch.create_at_ms = allowed;
      return;
    }
  }
  if (!f.indexed()) {
    for (int32_t i = 0; i < missing; ++i) create_pod(m, -1, clock, fx);
    return;
  }
  int64_t next_allowed = 0;
  const auto taken = indexes_taken(m, clock.now_ms, next_allowed);
  const auto indexes = first_pending_indexes(completions(m), m.batch.succeeded_indexes,
                                             m.batch.failed_indexes, taken, missing);
  for (int32_t index : indexes) create_pod(m, index, clock, fx);
  if (static_cast<int32_t>(indexes.size()) < missing) m.batch.create_at_ms = next_allowed;
}

// A job no longer suspended is resumed: Suspended=False, and its active deadline counts from
// now (before the end is decided, so that the time it was suspended never counts).
void resume(JobModel& m, const Clock& clock, Effects& fx) {
  if (fields(m).suspend || !has_true_condition(status(m), kJobSuspended)) return;
  set_condition(m, kJobSuspended, "False", "JobResumed", "Job resumed", clock);
  add_event(m, clock, "Normal", "Resumed", "Job resumed");
  status(m).start_ms = clock.now_ms;
  fx.changed = true;
}

// --- The end. ---

// Decides whether the job ends now: FailureTarget (its live pods counted as failed) or
// SuccessCriteriaMet.
bool decide_end(JobModel& m, const Counted& counted, const Clock& clock, Effects& fx) {
  const auto& s = status(m);
  BatchJobProgress p;
  p.active = count_pods(m).active;
  p.succeeded = s.succeeded;
  p.failed = s.failed;
  p.succeeded_indexes = m.batch.succeeded_indexes;
  p.failed_indexes = m.batch.failed_indexes;
  p.start_ms = s.start_ms;
  p.fail_job = counted.fail_job;
  auto end = batch_job_end(fields(m), m.job.spec.active_deadline_seconds, p, clock.now_ms);
  if (!end) return false;
  set_condition(m, end->complete ? kJobSuccessCriteriaMet : kJobFailureTarget, "True", end->reason,
                end->message, clock);
  add_event(m, clock, end->complete ? "Normal" : "Warning", end->reason, end->message);
  fx.changed = true;
  if (!end->complete) count_live_as_failed(m, clock);
  return true;
}

// An ending job's pods go (a later sync deletes those that appeared since).
void delete_all_pods(JobModel& m, const Clock& clock, Effects& fx) {
  const BatchJobCondition* end = ending(m);
  const std::string why =
      end->type == kJobSuccessCriteriaMet ? "the job succeeded" : "the job failed: " + end->reason;
  for (auto it : pods_for_removal(m, INT32_MAX)) {
    kill_pod(m, it, why, clock, fx);
    // One never launched ended at once: counted already (count_live_as_failed), it reports
    // no end that would take it off the list.
    if (!is_live(it->second)) m.batch.counted_terminating.erase(it->first);
  }
}

// Once an ending job's pods are all gone: Complete (with its completion time) or Failed.
void finish(JobModel& m, const Clock& clock, Effects& fx) {
  const BatchJobCondition* target = ending(m);
  if (!target || count_pods(m).active + count_pods(m).terminating > 0) return;
  const bool complete = target->type == kJobSuccessCriteriaMet;
  const std::string reason = target->reason, message = target->message;
  set_condition(m, complete ? kJobComplete : kJobFailed, "True", reason, message, clock);
  if (complete) status(m).completion_ms = clock.now_ms;
  fx.changed = true;
}

// The phase the job actor's machinery reads (passivation, TTL, lists): Pending until a pod
// runs, Running, Completed or Failed once finished, Aborted while suspended.
void move_phase(JobModel& m, const Clock& clock, Effects& fx) {
  const auto& s = status(m);
  const BatchJobCondition* end = find_condition(s, kJobComplete);
  if (!end || end->status != "True") end = find_condition(s, kJobFailed);
  if (end && end->status == "True") {
    set_phase(m, end->type == kJobComplete ? JobPhase::Completed : JobPhase::Failed, end->reason,
              end->message, clock, fx);
  } else if (has_true_condition(s, kJobSuspended) && count_pods(m).terminating == 0) {
    set_phase(m, JobPhase::Aborted, "JobSuspended", "Job suspended", clock, fx);
  } else {
    bool started = m.job.status.state.phase == JobPhase::Running;
    for (const auto& [key, n] : m.pods.census())
      started = started || n.running + n.succeeded + n.failed > 0;
    if (m.job.status.state.phase == JobPhase::Aborted)
      set_phase(m, JobPhase::Pending, "JobResumed", "Job resumed", clock, fx);
    if (started) set_phase(m, JobPhase::Running, "Started", "a pod of the job runs", clock, fx);
  }
}

void show_status(JobModel& m, const Clock& clock) {
  auto& s = status(m);
  const PodCount pods = count_pods(m);
  s.active = pods.active;
  s.ready = pods.ready;
  s.terminating = pods.terminating;
  if (fields(m).indexed()) {
    s.completed_indexes = format_index_intervals(m.batch.succeeded_indexes);
    s.failed_indexes = format_index_intervals(m.batch.failed_indexes);
  }
  update_counts(m, clock.now_ms);  // Volcano's counts too: lists and metrics read them
}

std::optional<int64_t> ttl_due_ms(const JobModel& m) {
  const auto& ttl = m.job.spec.ttl_seconds_after_finished;
  if (!ttl || !batch_job_finished(m)) return std::nullopt;
  const auto& s = status(m);
  const BatchJobCondition* end = find_condition(s, kJobComplete);
  if (!end || end->status != "True") end = find_condition(s, kJobFailed);
  return end->last_transition_ms + *ttl * 1000;
}

std::optional<int64_t> deadline_due_ms(const JobModel& m) {
  const auto& ads = m.job.spec.active_deadline_seconds;
  const auto& s = status(m);
  if (!ads || s.start_ms == 0 || fields(m).suspend || ending(m) || batch_job_finished(m))
    return std::nullopt;
  return s.start_ms + *ads * 1000;
}

}  // namespace

std::string batch_pod_name(const std::string& job, int32_t index, const std::string& uid) {
  // Kubernetes' generateName alphabet: no vowels (no words), no look-alikes.
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  uint64_t h = std::hash<std::string>()(uid);
  std::string suffix;
  for (int i = 0; i < 5; ++i, h /= kAlphabet.size()) suffix += kAlphabet[h % kAlphabet.size()];
  return index >= 0 ? fmt::format("{}-{}-{}", job, index, suffix)
                    : fmt::format("{}-{}", job, suffix);
}

bool batch_job_finished(const JobModel& m) {
  const auto& s = status(m);
  return has_true_condition(s, kJobComplete) || has_true_condition(s, kJobFailed);
}

JobModel new_batch_job(JobSpec spec, std::string uid, const Clock& clock) {
  JobModel m;
  m.job.uid = std::move(uid);
  m.job.created_ms = clock.now_ms;
  m.job.spec = std::move(spec);
  if (!m.job.spec.batch) m.job.spec.batch.emplace();
  m.job.status.state = {JobPhase::Pending, "Created", "job accepted", clock.now_ms};
  m.job.status.conditions.push_back({JobPhase::Pending, clock.now_ms});
  m.job.status.min_available = 1;
  m.job.status.batch.emplace();
  add_event(m, clock, "Normal", "Created", "job accepted");
  return m;
}

Effects sync_batch_job(JobModel& m, const std::vector<std::string>& ended, const Clock& clock) {
  Effects fx;
  if (batch_job_finished(m)) return fx;
  Counted counted = count_ended(m, ended, clock);
  if (count_terminating(m, clock, counted) || !ended.empty()) fx.changed = true;
  auto& s = status(m);
  if (s.start_ms == 0 && !fields(m).suspend) {
    s.start_ms = clock.now_ms;
    fx.changed = true;
  }
  resume(m, clock, fx);
  // Pods held back by the back-off: manage_pods says so again while it still holds them.
  const int64_t held_until = m.batch.create_at_ms;
  m.batch.create_at_ms = 0;
  if (ending(m) || decide_end(m, counted, clock, fx))
    delete_all_pods(m, clock, fx);
  else
    manage_pods(m, clock, fx);
  if (m.batch.create_at_ms != held_until) fx.changed = true;
  finish(m, clock, fx);
  show_status(m, clock);
  move_phase(m, clock, fx);
  launch_next_batch(m, clock, fx);
  fx.request_placement = false;
  if (!ending(m) && !batch_job_finished(m) && !fields(m).suspend)
    for (const auto& [key, n] : m.pods.census())
      fx.request_placement = fx.request_placement || n.waiting > 0;
  return fx;
}

Effects on_batch_tick(JobModel& m, const Clock& clock) {
  Effects fx;
  if (auto ttl = ttl_due_ms(m); ttl && clock.now_ms >= *ttl) fx.expired = true;
  if (batch_job_finished(m)) return fx;
  fx.merge(sync_batch_job(m, {}, clock));
  relaunch_overdue(m, clock, fx);
  return fx;
}

std::optional<int64_t> batch_next_due_ms(const JobModel& m) {
  std::optional<int64_t> next;
  auto consider = [&](std::optional<int64_t> t) {
    if (t && *t > 0 && (!next || *t < *next)) next = t;
  };
  consider(ttl_due_ms(m));
  consider(deadline_due_ms(m));
  if (!batch_job_finished(m) && !ending(m)) consider(m.batch.create_at_ms);
  if (m.creation.resume_at_ms) consider(m.creation.resume_at_ms);
  consider(relaunch_due_ms(m));
  return next;
}

}  // namespace caldera
