#include "actors/jobflow/flow_actor.hpp"

#include <chrono>
#include <map>
#include <optional>
#include <set>

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/jobflow/core/dag.hpp"
#include "actors/jobflow/core/flow_job.hpp"
#include "actors/jobflow/core/flow_status.hpp"
#include "actors/jobflow/endpoint_probe.hpp"
#include "actors/jobflow/flow_records.hpp"
#include "actors/protocol/atoms.hpp"
#include "actors/store/commit_relay.hpp"
#include "common/clock.hpp"
#include "messages/api.capnp.h"
#include "messages/codec/flat.hpp"

namespace caldera {
namespace {

using namespace std::chrono_literals;

struct FlowState {
  FlowActorEnv env;
  JobFlow flow;                                // the latest state; durable once `written` says so
  std::map<std::string, std::string> entries;  // job name -> entry: the spec never changes
  FlowJobs jobs;                               // entry -> the phase of its job, for jobs that exist
  FlowTasks tasks;
  std::map<std::string, std::string> uids;     // entry -> its job's uid
  std::map<std::string, JobState> job_states;  // entry -> its job's state (reasons)
  std::set<std::string> creating;              // entries whose create is in flight
  std::set<std::string> retired;               // uids deleted for a retry: their news is old
  std::set<std::string> retrying;              // entries whose failed job is being deleted
  std::map<std::string, std::string> waiting;  // entry -> why it cannot be created yet
  // entry -> when the flow heard its job Completed: the start of its dependents' DAG step
  std::map<std::string, std::chrono::steady_clock::time_point> completed_at;
  std::set<std::string> stepped;  // entries whose creation was counted as a DAG step
  bool jobs_deleted = false;      // jobRetainPolicy delete done
  bool deleting_jobs = false;
  // The record: one write in flight at a time; changes meanwhile are written after it.
  bool writing = false;
  JobFlow written;  // what the last durable write held
  bool deleted = false;
  bool look_scheduled = false;
  bool offered_stop = false;  // asked the flow directory to stop it (passivation)
  FlowAnswers answered;       // the endpoint probes that passed (not stored: made again)
  bool probing = false;       // a round of endpoint probes is under way, or waits to be made
  caf::response_promise delete_rp;
  static inline const char* name = "jobflow";
};

using FlowSelf = caf::stateful_actor<FlowState>;

FlowPhase phase_of(const FlowState& st) {
  return parse_flow_phase(st.flow.status.phase).value_or(FlowPhase::Pending);
}

// The entry whose job is named `job`: looked up, not searched, as every status message asks.
std::optional<std::string> entry_of(const FlowState& st, const std::string& job) {
  auto it = st.entries.find(job);
  if (it == st.entries.end()) return std::nullopt;
  return it->second;
}

// The entry's job is gone: the entry is as if never created (due again while the flow runs).
void forget_job(FlowState& st, const std::string& entry) {
  st.jobs.erase(entry);
  st.tasks.erase(entry);
  st.uids.erase(entry);
  for (auto& [waiting, targets] : st.answered) targets.erase(entry);  // a new job answers anew
}

FlowRestarts restarts_of(const FlowState& st) {
  FlowRestarts out;
  for (const auto& line : st.flow.status.job_status_list)
    if (line.restart_count > 0)  // most never restart: the map stays small
      if (auto entry = entry_of(st, line.name)) out[*entry] = line.restart_count;
  return out;
}

void act_after_durable(FlowSelf* self);

// Whether nothing is left for the actor to do: the flow is finished and durably so, its jobs
// have ended, and nothing it asked for is under way. Only a change of one of its jobs (a
// command, a delete) could give it work again: the flow directory then wakes it.
bool done_for_now(const FlowState& st) {
  if (st.deleted || st.writing || st.look_scheduled || st.probing || st.deleting_jobs ||
      !st.creating.empty() || !st.retrying.empty() || !is_finished(phase_of(st)) ||
      !(st.flow.status == st.written.status))
    return false;
  if (phase_of(st) == FlowPhase::Succeed && st.flow.spec.job_retain_policy == "delete" &&
      !st.jobs_deleted)
    return false;
  for (const auto& [entry, phase] : st.jobs)
    if (!is_finished(phase) && phase != JobPhase::Aborted) return false;
  return true;
}

// Passivation: offered once; the flow directory answers with stop_atom.
void offer_stop(FlowSelf* self) {
  auto& st = self->state;
  if (st.offered_stop || !done_for_now(st)) return;
  st.offered_stop = true;
  self->send(st.env.flows, passivate_atom::value, st.flow.spec.key(), st.flow.uid);
}

void write(FlowSelf* self) {
  auto& st = self->state;
  if (st.writing) return;  // the changes go with the next write, once this one is durable
  st.writing = true;
  auto snapshot = st.flow;
  auto me = caf::actor_cast<caf::actor>(self);
  st.env.store->commit(
      {Write{Family::Flows, st.flow.spec.key(), FlowKind<JobFlow>::record(st.flow)}},
      [me, snapshot](std::string error) { notify_committed(me, snapshot, std::move(error)); });
}

void set_phase(FlowState& st, FlowPhase to, std::string reason, std::string message) {
  if (st.env.metrics) st.env.metrics->flow_finished(st.flow.spec.namespace_, to);
  const auto from = st.flow.status.phase;
  st.flow.status.phase = std::string(to_string(to));
  st.flow.status.reason = std::move(reason);
  st.flow.status.message = std::move(message);
  st.flow.status.last_transition_ms = system_now_ms();
  spdlog::info("jobflow={} phase={} from={}{}", st.flow.spec.key(), st.flow.status.phase, from,
               st.flow.status.message.empty() ? "" : " message=\"" + st.flow.status.message + "\"");
}

void request_create(FlowSelf* self, const std::string& entry);

// The DAG step of an entry just created: from its last target's completion, as this actor heard
// it, to now. Targets heard of only from the record (before a restart) have no time: no step.
void observe_dag_step(FlowState& st, const std::string& entry) {
  if (!st.env.metrics) return;
  for (const auto& f : st.flow.spec.flows) {
    if (f.name != entry || !f.depends_on || f.depends_on->targets.empty()) continue;
    std::chrono::steady_clock::time_point last{};
    for (const auto& t : f.depends_on->targets) {
      auto it = st.completed_at.find(t);
      if (it == st.completed_at.end()) return;
      last = std::max(last, it->second);
    }
    st.env.metrics->dag_step(std::chrono::steady_clock::now() - last);
  }
}

// Something it asked for did not happen: it looks again in a while (level-triggered), one look
// at a time.
void look_again(FlowSelf* self) {
  auto& st = self->state;
  if (st.look_scheduled || st.deleted) return;
  st.look_scheduled = true;
  self->delayed_send(self, 1s, sync_atom::value);
}

void probe_endpoints(FlowSelf* self, const FlowJobs& judged);

// Decides from the jobs as they are now: the phase, the lists, and which jobs to create. Writes
// the record when it changed.
void step(FlowSelf* self) {
  auto& st = self->state;
  if (st.deleted) return;
  const auto restarts = restarts_of(st);
  const auto judged = judged_jobs(st.flow.spec, st.jobs, restarts);
  const auto current = phase_of(st);
  if (!is_finished(current)) {
    const auto next = next_phase(current, st.flow.spec, judged);
    auto failed = failed_entry(st.flow.spec, judged);
    if (next == FlowPhase::Failed && failed) {
      const auto& entry = *failed;
      const auto& js = st.job_states[entry];
      auto job = flow_job_name(st.flow.spec.name, entry);
      std::string message = "job " + job + " " + std::string(to_string(judged.at(entry)));
      if (!js.reason.empty()) message += ": " + js.reason;
      if (!js.message.empty()) message += ": " + js.message;
      set_phase(st, next, judged.at(entry) == JobPhase::Terminated ? "JobTerminated" : "JobFailed",
                std::move(message));
    } else if (next != current) {
      set_phase(st, next, "", "");
    }
    fill_job_lists(st.flow.spec, judged, st.flow.status);
  }
  if (!is_finished(phase_of(st))) {
    for (const auto& entry : due_flows(st.flow.spec, judged, st.tasks, st.answered))
      if (!st.creating.count(entry) && !st.retrying.count(entry)) request_create(self, entry);
    probe_endpoints(self, judged);
  }
  // Only the status changes (the spec is the submitted one): comparing it alone halves the work
  // every status message costs a large flow.
  if (!(st.flow.status == st.written.status))
    write(self);
  else
    act_after_durable(self);
}

void request_create(FlowSelf* self, const std::string& entry) {
  auto& st = self->state;
  st.creating.insert(entry);
  self->request(st.env.flows, caf::infinite, flow_create_atom::value, st.flow.spec.key(),
                st.flow.uid, entry)
      .then(
          [self, entry](const std::string& uid, int64_t created_ms, const std::string& error,
                        bool wait) {
            auto& st = self->state;
            st.creating.erase(entry);
            if (st.deleted) return;
            if (!error.empty()) {
              if (wait) {
                // Said once per reason; a JobTemplate arriving wakes the flow (sync_atom), and
                // so does a later look (a job still being deleted, a store that failed).
                if (st.waiting[entry] != error)
                  spdlog::warn("jobflow={} flow={} waits: {}", st.flow.spec.key(), entry, error);
                st.waiting[entry] = error;
                look_again(self);
                return;
              }
              st.waiting.erase(entry);
              if (!is_finished(phase_of(st)))
                set_phase(st, FlowPhase::Failed, "JobCreateFailed",
                          "job " + flow_job_name(st.flow.spec.name, entry) +
                              " cannot be created: " + error);
              step(self);
              return;
            }
            st.waiting.erase(entry);
            // The job's own status may have arrived before this answer: the step is counted
            // here, once per entry (a retry is not a DAG step).
            if (st.stepped.insert(entry).second) observe_dag_step(st, entry);
            if (st.uids[entry] != uid) {
              // Another job than the record knew (created again after a failure it recorded):
              // nothing of the old one's state applies to it.
              st.uids[entry] = uid;
              st.jobs[entry] = JobPhase::Pending;
              st.tasks.erase(entry);
              st.job_states.erase(entry);
              auto& line = job_status_line(st.flow.status, flow_job_name(st.flow.spec.name, entry),
                                           uid, created_ms);
              if (line.state.empty()) observe_phase(line, JobPhase::Pending, created_ms);
            }
            step(self);
          },
          [self, entry](caf::error& err) {
            self->state.creating.erase(entry);
            spdlog::error("jobflow={} flow={} create failed: {}", self->state.flow.spec.key(),
                          entry, self->system().render(err));
            look_again(self);
          });
}

// One round of endpoint probes: where each probed target's pods run.
struct ProbeRound {
  std::vector<ProbeWanted> wanted;
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> pods;  // target ->
                                                                                 // (task, host)
  size_t left = 0;  // targets whose pods are still being listed
};

// One endpoint to probe, and the entry and target it speaks for.
struct EndpointProbe {
  std::string entry, target, host;
  std::optional<HttpGetProbe> http;
  int32_t tcp_port = 0;
};

constexpr auto kProbeWait = 1s;       // each connection and answer, at most
constexpr auto kProbePeriod = 500ms;  // between rounds that found nothing

// Makes the probes on a thread of its own (they block), one pass per (entry, target) at most,
// and tells the flow actor which passed.
void run_probes(caf::blocking_actor* self, caf::actor flow, std::vector<EndpointProbe> probes) {
  std::vector<std::string> entries, targets;
  std::set<std::pair<std::string, std::string>> passed;
  for (const auto& p : probes) {
    if (passed.count({p.entry, p.target})) continue;
    const bool ok = p.http ? http_answers(p.host, *p.http, kProbeWait)
                           : tcp_answers(p.host, p.tcp_port, kProbeWait);
    if (!ok) continue;
    passed.insert({p.entry, p.target});
    entries.push_back(p.entry);
    targets.push_back(p.target);
  }
  self->send(flow, probed_atom::value, std::move(entries), std::move(targets));
}

void make_probes(FlowSelf* self, const std::shared_ptr<ProbeRound>& round) {
  auto& st = self->state;
  if (st.deleted) return;
  std::vector<EndpointProbe> probes;
  for (const auto& w : round->wanted) {
    const Flow* flow = nullptr;
    for (const auto& f : st.flow.spec.flows)
      if (f.name == w.entry) flow = &f;
    if (!flow || !flow->depends_on) continue;
    for (const auto& [task, host] : round->pods[w.target]) {
      for (const auto& g : flow->depends_on->http_get)
        if (g.task_name == task) probes.push_back({w.entry, w.target, host, g, 0});
      for (const auto& t : flow->depends_on->tcp_socket)
        if (t.task_name == task) probes.push_back({w.entry, w.target, host, std::nullopt, t.port});
    }
  }
  if (probes.empty()) {  // no pod of a probed task runs yet
    self->delayed_send(self, kProbePeriod, probed_atom::value);
    return;
  }
  self->spawn<caf::detached>(run_probes, caf::actor_cast<caf::actor>(self), std::move(probes));
}

// The flow waits on endpoints of its targets' pods: their Running pods are listed (as `get pods`
// lists them), then probed; a round that passes none is made again after kProbePeriod. One round
// at a time.
void probe_endpoints(FlowSelf* self, const FlowJobs& judged) {
  auto& st = self->state;
  if (st.probing || st.deleted) return;
  auto round = std::make_shared<ProbeRound>();
  round->wanted = endpoint_probes_wanted(st.flow.spec, judged, st.tasks, st.answered);
  if (round->wanted.empty()) return;
  st.probing = true;
  std::set<std::string> targets;
  for (const auto& w : round->wanted) targets.insert(w.target);
  round->left = targets.size();
  for (const auto& target : targets) {
    SmallMessageBuilder b;
    auto filter = b.initRoot<api::Request>().initListPods();
    filter.setNamespace(st.flow.spec.namespace_);
    filter.setJobName(flow_job_name(st.flow.spec.name, target));
    filter.setKind("jobs");
    auto listed = [self, round](const std::string& target, const std::string* bytes) {
      try {
        if (bytes) {
          FlatReader reader(*bytes);
          for (auto pod : reader.root<api::Response>().getPods())
            if (std::string_view(pod.getPhase().cStr()) == "Running" && pod.getHostIp().size() > 0)
              round->pods[target].emplace_back(pod.getTaskName(), pod.getHostIp());
        }
      } catch (const kj::Exception&) {
        // Not a list of pods (an error answer): none to probe this round.
      }
      if (--round->left == 0) make_probes(self, round);
    };
    self->request(st.env.jobs, 10s, api_atom::value, to_bytes(b))
        .then([listed, target](const std::string& bytes) { listed(target, &bytes); },
              [listed, target](caf::error&) { listed(target, nullptr); });
  }
}

// What may happen only once the flow's record says why: a failed job is deleted for a retry
// only once its failure is in the record (so that a restart counts the retry once), and the
// jobs are deleted under jobRetainPolicy delete only once Succeed is durable.
void act_after_durable(FlowSelf* self) {
  auto& st = self->state;
  if (st.deleted || st.writing) return;
  const auto restarts = restarts_of(st);
  if (!is_finished(phase_of(st)))
    for (const auto& entry : retry_due(st.flow.spec, st.jobs, restarts)) {
      if (st.retrying.count(entry)) continue;
      const auto uid = st.uids[entry];
      st.retrying.insert(entry);
      st.retired.insert(uid);
      spdlog::info("jobflow={} flow={} job failed, creating it again (retry {} of {})",
                   st.flow.spec.key(), entry, restarts.count(entry) ? restarts.at(entry) + 1 : 1,
                   [&] {
                     for (const auto& f : st.flow.spec.flows)
                       if (f.name == entry) return f.retry;
                     return 0;
                   }());
      self->request(st.env.jobs, 60s, flow_delete_atom::value,
                    st.flow.spec.namespace_ + "/" + flow_job_name(st.flow.spec.name, entry), uid)
          .then(
              [self, entry, uid](const std::string& error) {
                auto& st = self->state;
                st.retrying.erase(entry);
                if (!error.empty()) {
                  st.retired.erase(uid);
                  spdlog::error("jobflow={} flow={} cannot delete the failed job: {}",
                                st.flow.spec.key(), entry, error);
                  look_again(self);
                  return;
                }
                if (st.uids[entry] == uid) forget_job(st, entry);
                step(self);
              },
              [self, entry, uid](caf::error&) {
                self->state.retrying.erase(entry);
                self->state.retired.erase(uid);
                look_again(self);
              });
    }
  if (phase_of(st) == FlowPhase::Succeed && st.flow.spec.job_retain_policy == "delete" &&
      !st.jobs_deleted && !st.deleting_jobs) {
    st.deleting_jobs = true;
    std::vector<std::string> keys;
    for (const auto& [job, entry] : st.entries) keys.push_back(st.flow.spec.namespace_ + "/" + job);
    self->request(st.env.jobs, caf::infinite, flow_delete_atom::value, st.flow.spec.key(),
                  st.flow.uid, std::move(keys))
        .then([self](const std::string& error) {
          auto& st = self->state;
          st.deleting_jobs = false;
          if (!error.empty()) {
            spdlog::error("jobflow={} cannot delete its jobs: {}", st.flow.spec.key(), error);
            look_again(self);
            return;
          }
          st.jobs_deleted = true;
          spdlog::info("jobflow={} jobs deleted (jobRetainPolicy delete)", st.flow.spec.key());
          offer_stop(self);
        });
  }
  offer_stop(self);
}

caf::behavior flow_actor(FlowSelf* self, JobFlow flow, FlowActorEnv env) {
  auto& st = self->state;
  st.env = std::move(env);
  st.written = flow;
  st.flow = std::move(flow);
  st.entries = job_entries(st.flow.spec);
  // What the record last said of each job, until its actor says more.
  for (const auto& line : st.flow.status.job_status_list) {
    auto entry = entry_of(st, line.name);
    auto phase = parse_job_phase(line.state);
    if (!entry || !phase) continue;
    st.jobs[*entry] = *phase;
    st.uids[*entry] = line.uid;
    st.stepped.insert(*entry);  // created before: not a step of this run
  }
  self->send(self, sync_atom::value);
  return {
      [=](job_status_atom, const std::string& job, const std::string& uid, int64_t created_ms,
          const JobStatus& status) {
        auto& st = self->state;
        auto entry = entry_of(st, job);
        if (!entry || st.retired.count(uid) || st.deleted) return;
        st.uids[*entry] = uid;
        // Only a completion heard as it happens starts a DAG step: one the record knew already
        // (a restart) does not.
        if (status.state.phase == JobPhase::Completed && !st.completed_at.count(*entry) &&
            !(st.jobs.count(*entry) && st.jobs[*entry] == JobPhase::Completed))
          st.completed_at[*entry] = std::chrono::steady_clock::now();
        st.jobs[*entry] = status.state.phase;
        st.tasks[*entry] = status.task_status_count;
        st.job_states[*entry] = status.state;
        const auto now = system_now_ms();
        auto& line = job_status_line(st.flow.status, job, uid, created_ms);
        observe_phase(line, status.state.phase, now);
        st.flow.status.conditions[job] = condition_of(status, created_ms);
        step(self);
      },
      [=](job_gone_atom, const std::string& job, const std::string& uid) {
        auto& st = self->state;
        auto entry = entry_of(st, job);
        if (!entry || st.uids[*entry] != uid) return;
        // A Completed job deleted (by its TTL, by a user) stays done: it is not run again.
        if (st.jobs.count(*entry) && st.jobs[*entry] == JobPhase::Completed) return;
        forget_job(st, *entry);
        // A finished flow keeps its status as it ended; a running one creates the job again.
        step(self);
      },
      [=](sync_atom) {
        self->state.look_scheduled = false;
        step(self);
      },
      [=](probed_atom, const std::vector<std::string>& entries,
          const std::vector<std::string>& targets) {
        auto& st = self->state;
        for (size_t i = 0; i < entries.size() && i < targets.size(); ++i) {
          spdlog::info("jobflow={} flow={} target={} answered its probe", st.flow.spec.key(),
                       entries[i], targets[i]);
          st.answered[entries[i]].insert(targets[i]);
        }
        if (entries.empty()) {
          self->delayed_send(self, kProbePeriod, probed_atom::value);
          return;
        }
        st.probing = false;
        step(self);
      },
      [=](probed_atom) {
        self->state.probing = false;
        step(self);
      },
      [=](delete_atom) {
        auto& st = self->state;
        st.deleted = true;
        st.delete_rp = self->make_response_promise();
        if (!st.writing) {
          st.delete_rp.deliver(caf::ok_atom::value);
          self->quit();
        }
        return st.delete_rp;
      },
      [=](stop_atom) {
        auto& st = self->state;
        st.offered_stop = false;
        if (!done_for_now(st)) return false;
        st.deleted = true;  // nothing after this
        self->quit();
        return true;
      },
      [=](committed_atom, JobFlow& snapshot, const std::string& error) {
        auto& st = self->state;
        st.writing = false;
        if (st.deleted) {
          st.delete_rp.deliver(caf::ok_atom::value);
          self->quit();
          return;
        }
        if (!error.empty()) {
          spdlog::error("jobflow={} write failed, writing it again in 1 s: {}", st.flow.spec.key(),
                        error);
          self->delayed_send(self, 1s, sync_atom::value);
          return;
        }
        st.written = std::move(snapshot);
        if (st.env.watches)
          self->send(st.env.watches, flow_event_atom::value, st.written,
                     static_cast<int32_t>(api::WatchEvent::Type::MODIFIED));
        if (!(st.flow.status == st.written.status))
          write(self);
        else
          act_after_durable(self);
      },
  };
}

}  // namespace

protocol::jobflow spawn_flow_actor(caf::actor_system& sys, JobFlow flow, FlowActorEnv env) {
  // Dynamically typed inside, as the job actor: it asks the dynamically typed job directory.
  return caf::actor_cast<protocol::jobflow>(sys.spawn(flow_actor, std::move(flow), std::move(env)));
}

}  // namespace caldera
