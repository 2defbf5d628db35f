#include "actors/job/job_actor.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <capnp/message.h>
#include <kj/exception.h>
#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/job/core/job_controller.hpp"
#include "actors/job/core/job_update.hpp"
#include "actors/job/core/plugins.hpp"
#include "actors/job/core/pod_group.hpp"
#include "actors/job/core/pod_template.hpp"
#include "actors/job/job_record.hpp"
#include "actors/job/ssh_keygen.hpp"
#include "actors/protocol/atoms.hpp"
#include "actors/protocol/local_types.hpp"
#include "actors/store/commit_relay.hpp"
#include "actors/uid.hpp"
#include "messages/admission/batch_job_patch.hpp"
#include "messages/api.capnp.h"
#include "messages/cluster.capnp.h"
#include "messages/codec/codec.hpp"
#include "messages/codec/flat.hpp"
#include "messages/codec/pod_files.hpp"
#include "messages/codec/pod_kill.hpp"

namespace caldera {
namespace {

// A node's report that the job has applied: acknowledged once what it changed is durable, so the
// node's outbox may forget it (DESIGN rule 5).
struct ReportAck {
  std::string node;
  std::string uid;
  uint64_t seq = 0;
};

// Effects wait here until the state that produced them is durable.
struct Inflight {
  uint64_t seq = 0;  // 0: nothing was written; runs as soon as everything before it has
  Effects fx;
  std::string record;
  caf::response_promise reply;
  bool quit_after = false;
  std::string write_error;    // the write failed: the effects must not leave (write-ahead)
  bool command = false;       // `reply` answers a client command: "" when it acted, else why not
  bool create = false;        // the job's first write: a failure means the job was never accepted
  PodTable::Changes changes;  // the pod changes it wrote: given back if the write fails
  bool wrote_spec = false;    // it holds the spec row: once durable, later writes need not
  uint64_t spec_version = 0;  // ... of this version of the spec (a patch makes a new one)
  int64_t history_after = 0;  // the model's history_ms it wrote: what the store holds once durable
  bool failed = false;        // its write failed: it waits until a later write holds its changes
  uint64_t healed_by = 0;     // ... which is any write from this seq on
  std::optional<ReportAck> ack;
  std::optional<JobStatus> status;  // the status its write stored: what the owner may hear
  std::string pod_events;           // for pod watchers: the pods its write changed, as stored
  std::string pod_event_types;
  std::optional<std::string> pods_page;  // `reply` answers a list of pods with it
  std::optional<ApplyOutcome> applied;   // `reply` answers `caldera apply` with it
};

struct JobState {
  JobModel model;
  JobActorEnv env;
  uint64_t next_seq = 0;
  std::deque<Inflight> inflight;
  int64_t durable_history_ms = 0;  // the History row the store holds (model.history_ms's key)
  bool deleted = false;
  std::optional<int64_t> timer_at;      // when the scheduled tick fires, if one is scheduled
  std::string last_request;             // the signature of the pod group request sent last
  bool retry_scheduled = false;         // a failed write's changes are written again after a while
  std::optional<JobStatus> told_owner;  // the status the owner heard last
  // Someone watches pods: each write's pod changes go to the directory. `seen_pods`: the pods
  // watchers know (announced Added, or listed when the watch began), by a hash of what they
  // were last shown, so that a pod the write did not change is not sent again.
  bool watch_pods = false;
  std::map<std::string, size_t> seen_pods;
  // Lost nodes whose pods' lease-stop grace runs, with the number of that wait: a node that
  // comes back meanwhile ends it (its pods then report their own ends).
  std::map<std::string, uint64_t> stopping_nodes;
  uint64_t last_wait = 0;
  // A delete waiting for the store to write again (kEraseWaitsForDisk).
  struct PendingErase {
    Effects fx;
    caf::response_promise reply;
    std::chrono::steady_clock::time_point give_up;
  };
  std::optional<PendingErase> pending_erase;
  bool offered_stop = false;  // asked the directory to passivate it, no answer yet
  uint64_t spec_version = 0;  // patches applied: a write of an older spec does not store this one
  // After a patch, the spec row the store holds (what `get` shows until the patched one is
  // durable); empty: the model's spec is the stored one.
  std::string durable_spec;
  std::string durable_row;  // its job row as the store holds it now: what `get job` shows
  // Nodes asked how pods they did not list ended (node_up), with the pods they reported
  // meanwhile: those are there too.
  std::map<std::string, std::set<std::string>> looking_up;
  static inline const char* name = "job";
};

bool has_owner(const JobState& st) {
  return st.env.flows && !st.env.owner.empty();
}

using JobSelf = caf::stateful_actor<JobState>;

// The controller core's clock: the environment's wall clock, and fresh uids.
Clock make_clock(const JobSelf* self) {
  return Clock{self->state.env.clock.now_ms(), random_uid};
}

std::string launch_bytes(const JobModel& m, const Pod& pod) {
  SmallMessageBuilder b;
  auto l = b.initRoot<cluster::PodLaunch>();
  encode(pod, l.initPod());
  if (auto rt = pod_runtime(m.job.spec, pod, m.pods, m.ssh_keys)) {
    encode_map(rt->files, l.initFiles(static_cast<unsigned>(rt->files.size())));
    encode_map(rt->views, l.initViews(static_cast<unsigned>(rt->views.size())));
    auto cs = l.initContainers(static_cast<unsigned>(rt->containers.size()));
    for (unsigned i = 0; i < rt->containers.size(); ++i) encode(rt->containers[i], cs[i]);
    encode(rt->requests, l.initRequests(static_cast<unsigned>(rt->requests.values.size())));
    l.setGraceMs(rt->grace_ms);
    l.setLeaseStopGraceMs(rt->lease_stop_grace_ms);
    if (rt->sim_duration_ms) {
      l.setSimDurationMs(*rt->sim_duration_ms);
      l.setSimExitCode(rt->sim_exit_code);
    }
  }
  return to_bytes(b);
}

// Nodes let go of what they reserved for placements the job did not take (one cancel per node).
void unreserve(JobSelf* self, const std::vector<PodRef>& pods) {
  std::map<std::string, std::vector<std::string>> by_node;
  for (const auto& p : pods) by_node[p.node].push_back(p.uid);
  for (const auto& [node, uids] : by_node) {
    SmallMessageBuilder b;
    auto r = b.initRoot<cluster::PodReservation>();
    r.setGang(self->state.model.key());
    auto list = r.initPods(static_cast<unsigned>(uids.size()));
    for (unsigned i = 0; i < uids.size(); ++i) list[i].setUid(uids[i]);
    self->send(self->state.env.nodes, cancel_atom::value, node, to_bytes(b));
  }
}

std::string request_signature(const GangRequest& r) {
  std::string out = std::to_string(r.min_count);
  size_t size = out.size();
  for (const auto& a : r.pods) size += a.uid.size() + 1;
  out.reserve(size + 16 * r.task_min.size());
  for (const auto& [task, n] : r.task_min)
    out.append(";").append(task).append("=").append(std::to_string(n));
  for (const auto& a : r.pods) out.append(",").append(a.uid);
  return out;
}

// The pods a write changed, for the directory's pod watchers: a Response listing them as they
// are stored (a pod gone is sent by name) and one letter per pod, Added, Modified or Deleted.
size_t pod_hash(const Pod& p) {
  SmallMessageBuilder b;
  encode(p, b.initRoot<api::Pod>());
  return std::hash<std::string>()(to_bytes(b));
}

void pod_events(const JobModel& m, const PodTable::Changes& changes, bool erase,
                std::map<std::string, size_t>& seen, std::string* page, std::string* types) {
  std::vector<std::string> names;
  if (erase) {  // the job goes, and every pod with it
    for (const auto& [name, hash] : seen) names.push_back(name);
  } else if (changes.all) {
    for (const auto& [name, p] : m.pods.map()) names.push_back(name);
    for (const auto& [name, hash] : seen)
      if (!m.pods.count(name)) names.push_back(name);
  }
  if (!erase)
    for (const auto& name : changes.names)
      if (!changes.all || !m.pods.count(name)) names.push_back(name);
  std::vector<std::pair<const std::string*, const Pod*>> shown;
  for (const auto& name : names) {
    auto it = m.pods.find(name);
    const Pod* p = it == m.pods.cend() ? nullptr : &it->second;
    if (erase || !p || is_discarded(*p)) {
      if (!seen.erase(name)) continue;  // never shown: nothing to take back
      types->push_back('D');
    } else {
      auto hash = pod_hash(*p);
      auto [at, added] = seen.try_emplace(name, hash);
      if (!added && at->second == hash) continue;  // shown as it is
      at->second = hash;
      types->push_back(added ? 'A' : 'M');
    }
    shown.emplace_back(&name, p);
  }
  if (shown.empty()) return;
  SmallMessageBuilder b;
  auto list = b.initRoot<api::Response>().initPods(static_cast<unsigned>(shown.size()));
  for (unsigned i = 0; i < shown.size(); ++i) {
    auto [name, p] = shown[i];
    if (p) {
      encode(*p, list[i]);
    } else {
      list[i].setName(*name);
      list[i].setNamespace(m.job.spec.namespace_);
      list[i].setJobName(m.job.spec.name);
    }
  }
  *page = to_bytes(b);
}

// A write that failed (say, a full disk) is tried again this often; the store itself tries to
// resume every second.
constexpr std::chrono::milliseconds kRewriteAfter{1000};
// A delete that finds the store unwritable (a full disk) has its pods leave their nodes at once,
// logs and all, since deleting is what frees space; then it looks this often, this long at most,
// for the store to write again before it writes the delete (or gives up: the job stays).
constexpr std::chrono::milliseconds kEraseLooksForDisk{200};
constexpr std::chrono::milliseconds kEraseWaitsForDisk{10000};

void schedule_rewrite(JobSelf* self) {
  auto& st = self->state;
  if (st.retry_scheduled) return;
  st.retry_scheduled = true;
  self->delayed_send(self, kRewriteAfter, retry_atom::value);
}

// One timer at a time, for the earliest thing the controller waits on (a delayed action, the
// active deadline, the TTL). Due times are absolute, so after a restart they are kept.
void schedule_tick(JobSelf* self) {
  auto& st = self->state;
  if (st.deleted) return;
  auto due = next_due_ms(st.model);
  if (!due || (st.timer_at && *st.timer_at <= *due)) return;
  st.timer_at = due;
  if (st.env.timer) {
    self->send(st.env.timer, tick_atom::value, *due, caf::actor_cast<caf::actor>(self));
    return;
  }
  auto delay = std::max<int64_t>(0, *due - st.env.clock.now_ms());
  self->delayed_send(self, std::chrono::milliseconds(delay), tick_atom::value, *due);
}

void apply_effects(JobSelf* self, Inflight& in) {
  auto& st = self->state;
  auto& m = st.model;
  if (!in.write_error.empty()) {
    // Not durable: nothing may act on this state. The next event re-derives what is needed.
    if (in.reply.pending())
      in.reply.deliver(caf::make_error(caf::sec::runtime_error, "store: " + in.write_error));
    return;
  }
  // A new job enters Pending by its creation, not by a transition.
  const auto& batch = m.job.spec.batch;
  if (in.create && st.env.metrics && !batch)
    st.env.metrics->job_phase(m.job.spec.namespace_, JobPhase::Pending);
  for (const auto& c : in.fx.phase_changes) {
    spdlog::info("job={} phase={} from={} reason={}", m.key(), to_string(c.to), to_string(c.from),
                 c.reason);
    if (!st.env.metrics) continue;
    if (!batch)
      st.env.metrics->job_phase(m.job.spec.namespace_, c.to);
    else if (c.to == JobPhase::Completed || c.to == JobPhase::Failed)
      st.env.metrics->batch_job_finished(m.job.spec.namespace_, batch->completion_mode,
                                         c.to == JobPhase::Completed, c.reason);
  }
  // Effects of states from before a delete: the delete has removed the job's pods from their
  // nodes and cancelled its pod group, so nothing may be launched or asked for again.
  if (st.deleted) {
    in.fx.launch.clear();
    in.fx.request_placement = false;
  }
  for (const auto& name : in.fx.launch) {
    auto it = std::as_const(m.pods).find(name);
    if (it == m.pods.cend() || it->second.node.empty()) continue;
    self->send(st.env.nodes, launch_atom::value, it->second.node, launch_bytes(m, it->second));
  }
  for (const auto& k : in.fx.kill)
    self->send(st.env.nodes, kill_atom::value, k.node,
               pod_kill_bytes(k.uid, k.grace_ms, k.reason, k.evict_reason));
  for (const auto& r : in.fx.remove) self->send(st.env.nodes, remove_atom::value, r.node, r.uid);
  for (const auto& f : in.fx.files)
    self->send(st.env.nodes, files_atom::value, f.node, pod_files_bytes(f.uid, f.files));
  if (!in.fx.release.empty()) self->send(st.env.scheduler, release_atom::value, in.fx.release);
  if (!in.fx.unreserve.empty()) unreserve(self, in.fx.unreserve);
  if (in.fx.request_placement && !st.deleted) {
    // The scheduler keeps a request until it binds it (placed_atom) or it is replaced: the same
    // one again would only cost it a session.
    auto request = pod_group_request(m);
    auto signature = request_signature(request);
    if (signature != st.last_request) {
      st.last_request = std::move(signature);
      self->send(st.env.scheduler, place_atom::value, std::move(request));
    }
  }
  // Watchers hear of the job's durable changes, before its pods' (the job row is what a list of
  // jobs shows). A deleted job is shown as it was last.
  using EventType = api::WatchEvent::Type;
  if (!in.record.empty()) {
    st.durable_row = in.record;
    const auto type = in.create ? EventType::ADDED : EventType::MODIFIED;
    if (st.env.watches)
      self->send(st.env.watches, job_event_atom::value, m.key(), static_cast<int32_t>(type),
                 in.record, std::string());
  } else if (in.quit_after && in.write_error.empty() && st.env.watches) {
    // Its rows are gone from the store: the event carries them.
    self->send(st.env.watches, job_event_atom::value, m.key(),
               static_cast<int32_t>(EventType::DELETED),
               st.durable_row.empty() ? encode_job_row(m) : st.durable_row, encode_spec_row(m));
  }
  if (in.create && in.reply.pending()) in.reply.deliver(std::move(in.record));
  if (!in.pod_events.empty() && st.env.watches)
    self->send(st.env.watches, pod_events_atom::value, m.key(), std::move(in.pod_events),
               std::move(in.pod_event_types));
  // The owner hears every durable change of the status, once: it decides from them at once
  // (a flow creates what its dependents wait for) instead of polling.
  // The status this write stored, not the actor's latest: a later one may not be durable yet.
  if (has_owner(st) && in.status && st.told_owner != in.status) {
    st.told_owner = in.status;
    self->send(st.env.flows, job_status_atom::value, st.env.owner, st.env.owner_uid,
               m.job.spec.name, m.job.uid, m.job.created_ms, *in.status);
  }
  if (in.ack) self->send(st.env.nodes, ack_atom::value, in.ack->node, in.ack->uid, in.ack->seq);
  if (in.fx.expired) {
    spdlog::info("job={} expired ttlSecondsAfterFinished={}", m.key(),
                 m.job.spec.ttl_seconds_after_finished.value_or(0));
    self->send(st.env.coordinator, expire_atom::value, m.key(), m.job.uid);
  }
  if (in.quit_after) {
    // Durable now: the pods leave their nodes, logs and all.
    for (const auto& [name, p] : std::as_const(m.pods))
      if (!p.node.empty()) self->send(st.env.nodes, remove_atom::value, p.node, p.uid);
    spdlog::info("job={} deleted", m.key());
    if (has_owner(st))
      self->send(st.env.flows, job_gone_atom::value, st.env.owner, st.env.owner_uid,
                 m.job.spec.name, m.job.uid);
  }
  if (in.reply.pending()) {
    if (in.pods_page)
      in.reply.deliver(std::move(*in.pods_page));
    else if (in.applied)
      in.reply.deliver(std::move(*in.applied));
    else if (in.command)
      in.reply.deliver(in.fx.refused);
    else
      in.reply.deliver(caf::ok_atom::value);
  }
  schedule_tick(self);
}

// Nothing of the job is in memory only: it is settled (core), every write is durable, the live
// index says so, and no timer of its own runs. Its actor may stop: the store holds it all.
bool at_rest(const JobState& st) {
  return !st.deleted && st.inflight.empty() && !st.pending_erase && !st.retry_scheduled &&
         st.stopping_nodes.empty() && st.looking_up.empty() && st.model.live_row == false &&
         is_settled(st.model);
}

// Passivation: a job at rest offers the directory to stop. The scheduler first lets go of its pod
// group request (bindings it sent before reach this actor before its answer); the directory
// then stops routing to the job and asks it to stop (stop_atom), when it may still decline.
void offer_stop(JobSelf* self) {
  auto& st = self->state;
  if (st.offered_stop || !st.env.coordinator || !at_rest(st)) return;
  st.offered_stop = true;
  auto key = st.model.key();
  self->request(st.env.scheduler, caf::infinite, forget_atom::value, key)
      .then(
          [self, key](caf::ok_atom) {
            auto& st = self->state;
            self->request(st.env.coordinator, caf::infinite, passivate_atom::value, key,
                          st.model.job.uid)
                .then([self](bool stop_follows) { self->state.offered_stop = stop_follows; },
                      [self](caf::error&) { self->state.offered_stop = false; });
          },
          [self](caf::error&) { self->state.offered_stop = false; });
}

// Runs every head-of-line entry whose write is done (or that wrote nothing).
void drain(JobSelf* self) {
  auto& q = self->state.inflight;
  while (!q.empty() && q.front().seq == 0) {
    auto in = std::move(q.front());
    q.pop_front();
    apply_effects(self, in);
    const bool deleted = in.quit_after && in.write_error.empty();
    const bool never_accepted = in.create && !in.write_error.empty();  // the coordinator forgot it
    if (deleted || never_accepted) {
      self->quit();
      return;
    }
    if (in.quit_after) {
      // The record is still there: so is the job. Its pod group was cancelled and launches
      // were held back: a sync asks and sends again what is due.
      self->state.deleted = false;
      self->state.last_request.clear();
      self->send(self, recover_atom::value);
    }
  }
  if (q.empty()) offer_stop(self);
}

// Persist the model if it changed, then (once durable) carry the effects out.
enum class Kind { Plain, Create, Command, Erase };

void commit(JobSelf* self, Effects fx, caf::response_promise reply = {}, Kind kind = Kind::Plain,
            std::optional<ReportAck> ack = {}, std::optional<ApplyOutcome> applied = {}) {
  auto& st = self->state;
  Inflight in;
  in.applied = std::move(applied);
  in.ack = std::move(ack);
  in.fx = std::move(fx);
  in.reply = std::move(reply);
  const bool erase = kind == Kind::Erase;
  in.quit_after = erase;
  in.command = kind == Kind::Command;
  in.create = kind == Kind::Create;
  if (in.fx.changed || erase) {
    in.seq = ++st.next_seq;
    auto writes = erase ? job_erase_writes(st.model, &in.changes)
                        : job_writes(st.model, &in.record, &in.changes, &in.wrote_spec);
    in.spec_version = st.spec_version;
    in.history_after = st.model.history_ms;
    if (!erase && has_owner(st)) in.status = st.model.job.status;
    if (st.watch_pods)
      pod_events(st.model, in.changes, erase, st.seen_pods, &in.pod_events, &in.pod_event_types);
    auto me = caf::actor_cast<caf::actor>(self);
    auto seq = in.seq;
    st.env.store->commit(std::move(writes), [me, seq](std::string error) {
      notify_committed(me, seq, std::move(error));
    });
  }
  st.inflight.push_back(std::move(in));
  drain(self);
}

// A node's report on one of the job's pods: applied, and acknowledged once durable. The pod's
// uid, or nullopt for bytes that are not a report.
std::optional<std::string> take_report(JobSelf* self, const std::string& bytes) {
  if (self->state.deleted) return std::nullopt;
  Pod pod;
  try {
    FlatReader reader(bytes);
    pod = decode(reader.root<cluster::PodReport>().getPod());
  } catch (const kj::Exception& e) {
    spdlog::error("job={} bad pod report: {}", self->state.model.key(), e.getDescription().cStr());
    return std::nullopt;
  }
  std::optional<ReportAck> ack;
  if (pod.status_seq != 0 && !pod.node.empty()) ack = ReportAck{pod.node, pod.uid, pod.status_seq};
  if (auto it = self->state.looking_up.find(pod.node); it != self->state.looking_up.end())
    it->second.insert(pod.uid);
  auto fx = on_pod_report(self->state.model, pod, make_clock(self));
  if (!fx.ended.empty())
    self->send(self->state.env.scheduler, release_atom::value, std::move(fx.ended));
  commit(self, std::move(fx), {}, Kind::Plain, std::move(ack));
  return pod.uid;
}

// Whether the job publishes its pod changes to the watch hub (a pods watch wants them).
void watch_pods(JobSelf* self, bool on) {
  auto& st = self->state;
  if (on == st.watch_pods) return;
  st.watch_pods = on;
  st.seen_pods.clear();
  // Watchers list what is there now (the hub asks right after this); from here on they hear
  // of changes.
  if (on)
    for (const auto& [name, p] : st.model.pods.map())
      if (!is_discarded(p)) st.seen_pods.emplace(name, pod_hash(p));
}

// The ssh plugin's keys are made once, before any pod is launched, and stored in the spec row: a
// job stored without them (from before they were made) writes its spec row again.
void make_ssh_keys(JobModel& m) {
  if (m.ssh_keys || !uses_ssh_keys(m.job.spec)) return;
  auto keys = ssh_key_pair_for(m.job.spec);
  if (!keys) {
    spdlog::error("job={} pods get no ssh keys: {}", m.key(), keys.error());
    return;
  }
  m.ssh_keys = std::move(*keys);
  m.spec_stored = false;
}

caf::behavior job_actor(JobSelf* self, JobModel model, JobActorEnv env) {
  self->state.model = std::move(model);
  self->state.env = std::move(env);
  make_ssh_keys(self->state.model);
  self->state.durable_history_ms = self->state.model.history_ms;  // as loaded from the store
  if (self->state.env.watch_pods) watch_pods(self, true);
  return {
      [=](create_atom) {
        auto rp = self->make_response_promise();
        Effects fx = sync_job(self->state.model, make_clock(self));
        fx.changed = true;
        commit(self, std::move(fx), rp, Kind::Create);
        return rp;
      },
      [=](recover_atom) {
        // The coordinator has re-reserved the bound pods with the scheduler already.
        Effects fx = sync_job(self->state.model, make_clock(self));
        fx.changed = true;               // its row is written again, and watchers hear it
        self->state.told_owner.reset();  // and the status to a restarted owner
        commit(self, std::move(fx));
      },
      [=](report_atom, const std::string& bytes) { take_report(self, bytes); },
      [=](command_atom, const std::string& action, const std::string& command_id) {
        auto rp = self->make_response_promise();
        auto a = parse_action(action);
        if (!a || self->state.deleted) {
          rp.deliver(caf::make_error(caf::sec::invalid_argument, "unknown action " + action));
          return rp;
        }
        spdlog::info("job={} command={} id={}", self->state.model.key(), action, command_id);
        auto fx = on_command(self->state.model, *a, command_id, make_clock(self));
        // A refusal too waits for the writes before it: it speaks of the phase they store.
        commit(self, std::move(fx), rp, Kind::Command);
        return rp;
      },
      [=](patch_atom, const std::string& patch) {
        auto rp = self->make_response_promise();
        auto& st = self->state;
        Effects fx;
        Diagnostics diags;
        if (!st.model.job.spec.batch)
          diags.error("", "only a Kubernetes Job (jobs.batch) is patched");
        else if (st.deleted)
          diags.error("", "the job is being deleted");
        const std::string spec_before = encode_spec_row(st.model);
        if (st.model.job.spec.batch && !st.deleted)
          apply_batch_job_patch(st.model.job.spec, patch, diags);
        if (!diags.ok()) {
          for (const auto& e : diags.errors)
            fx.refused += (fx.refused.empty() ? "" : "; ") + to_string(e);
        } else {
          spdlog::info("job={} patched ({} bytes)", st.model.key(), patch.size());
          // Its spec row is written again, by every write until one that holds it is durable;
          // until then `get` shows the spec the store holds.
          if (st.durable_spec.empty() && st.model.spec_stored) st.durable_spec = spec_before;
          st.model.spec_stored = false;
          ++st.spec_version;
          fx = sync_job(st.model, make_clock(self));
          fx.changed = true;
        }
        commit(self, std::move(fx), rp, Kind::Command);
        return rp;
      },
      [=](update_atom, JobSpec& applied) {
        auto& st = self->state;
        ApplyOutcome out{true, false, st.model.job.uid, {}};
        if (st.deleted) {
          out.diags.error("", "the job is being deleted");
          return caf::result<ApplyOutcome>(out);
        }
        auto next = update_job_spec(st.model.job.spec, st.model.job.status.state.phase,
                                    std::move(applied), out.diags);
        if (!next) return caf::result<ApplyOutcome>(out);
        spdlog::info("job={} updated generation={}", st.model.key(), next->generation);
        const std::string spec_before = encode_spec_row(st.model);
        if (st.durable_spec.empty() && st.model.spec_stored) st.durable_spec = spec_before;
        st.model.job.spec = std::move(*next);
        st.model.job.status.observed_generation = st.model.job.spec.generation;
        st.model.spec_stored = false;
        ++st.spec_version;
        Effects fx = sync_job(st.model, make_clock(self));
        refresh_plugin_files(st.model, fx);  // a scaled task's hosts
        fx.changed = true;
        out.changed = true;
        auto rp = self->make_response_promise<ApplyOutcome>();
        commit(self, std::move(fx), rp, Kind::Plain, {}, std::move(out));
        return caf::result<ApplyOutcome>(rp);
      },
      [=](tick_atom, int64_t at) {
        auto& st = self->state;
        if (st.timer_at == at) st.timer_at.reset();
        if (st.deleted) return;
        auto clock = make_clock(self);
        if (clock.now_ms < at) clock.now_ms = at;  // timers may fire a hair early
        commit(self, on_tick(st.model, clock));
      },
      [=](node_lost_atom, const std::string& node, const std::string& why, bool lease_over) {
        auto& st = self->state;
        if (st.deleted) return;
        const bool at_once = replaces_lost_pods_at_once(st.model.job.spec);
        if (!lease_over && !at_once) return;
        if (!at_once) {
          if (st.stopping_nodes.count(node)) return;
          if (auto ms = lost_pods_stop_ms(st.model, node); ms > 0) {
            st.stopping_nodes[node] = ++st.last_wait;
            self->delayed_send(self, std::chrono::milliseconds(ms), replace_atom::value, node, why,
                               st.last_wait);
            return;
          }
        }
        commit(self, on_node_lost(st.model, node, why, make_clock(self)));
      },
      [=](replace_atom, const std::string& node, const std::string& why, uint64_t wait) {
        auto& st = self->state;
        auto it = st.stopping_nodes.find(node);
        if (it == st.stopping_nodes.end() || it->second != wait) return;
        st.stopping_nodes.erase(it);
        if (st.deleted) return;
        commit(self, on_node_lost(st.model, node, why, make_clock(self)));
      },
      [=](evict_atom, const std::string& uid, const std::string& reason, const std::string& why) {
        if (self->state.deleted) return;
        commit(self, on_pod_evicted(self->state.model, uid, reason, why, make_clock(self)));
      },
      [=](unsched_atom, const std::string& why, bool enqueued) {
        if (self->state.deleted) return;
        commit(self, on_unschedulable(self->state.model, why, enqueued, make_clock(self)));
      },
      [=](placed_atom, const std::vector<Binding>& bindings) {
        if (self->state.deleted) {
          std::vector<std::string> uids;
          std::vector<PodRef> reserved;
          for (const auto& b : bindings) {
            uids.push_back(b.uid);
            reserved.push_back({b.uid, b.node});
          }
          self->send(self->state.env.scheduler, release_atom::value, std::move(uids));
          unreserve(self, reserved);
          return;
        }
        self->state.last_request.clear();  // the scheduler's copy of the request changed
        std::map<std::string, Placement> by_uid;
        for (const auto& b : bindings) by_uid[b.uid] = {b.node, b.host_ip};
        commit(self, on_pods_placed(self->state.model, by_uid, make_clock(self)));
      },
      [=](node_up_atom, const std::string& node, const std::vector<std::string>& uids) {
        auto& st = self->state;
        st.stopping_nodes.erase(node);
        if (st.deleted) return;
        std::set<std::string> present(uids.begin(), uids.end());
        // Pods it holds live there that the node does not list may have ended and been
        // retired by the node (their end acknowledged to a coordinator whose store this one
        // is not: a restored backup). The node is asked how they ended before they count as
        // never started.
        std::vector<std::string> missing;
        for (const auto& [name, p] : st.model.pods.map())
          if (p.node == node && is_live(p) && !present.count(p.uid)) missing.push_back(p.uid);
        if (missing.empty() || !st.env.nodes || st.looking_up.count(node))
          return commit(self, on_node_up(st.model, node, present, make_clock(self)));
        st.looking_up[node];
        auto finish = [self, node](std::set<std::string> present) {
          auto& st = self->state;
          auto meanwhile = st.looking_up.extract(node);
          if (!meanwhile.empty()) present.merge(meanwhile.mapped());
          if (!st.deleted) commit(self, on_node_up(st.model, node, present, make_clock(self)));
        };
        self->request(st.env.nodes, std::chrono::seconds(10), lookup_atom::value, node, missing)
            .then(
                [self, node, present, finish](const std::vector<std::string>& reports) mutable {
                  if (!reports.empty())
                    spdlog::info(
                        "job={} pods={} on node={} ended while the coordinator did not know (its "
                        "store is older than theirs): the node told how",
                        self->state.model.key(), reports.size(), node);
                  for (const auto& bytes : reports) take_report(self, bytes);
                  finish(std::move(present));  // their reports joined `looking_up`
                },
                [present, finish](caf::error&) mutable { finish(std::move(present)); });
      },
      [=](watch_atom, bool on) { watch_pods(self, on); },
      [=](list_pods_atom, const std::string& after, uint32_t limit) -> caf::result<std::string> {
        auto& st = self->state;
        auto page = pod_page(st.model, after, limit);
        if (!st.watch_pods || st.inflight.empty()) return page;
        // A pods watch lists: its answer follows the changes of the writes before it (which the
        // watch then skips: the page holds them), so no pod is announced to it twice.
        Inflight in;
        in.reply = self->make_response_promise();
        in.pods_page = std::move(page);
        auto rp = in.reply;
        st.inflight.push_back(std::move(in));
        drain(self);
        return caf::result<std::string>(rp);
      },
      [=](get_job_atom) {
        auto& st = self->state;
        return caf::make_message(
            st.durable_row, st.durable_spec.empty() ? encode_spec_row(st.model) : st.durable_spec);
      },
      [=](get_pod_atom, const std::string& name) {
        const auto& pods = self->state.model.pods;
        auto it = pods.find(name);
        return it == pods.end() || is_discarded(it->second)
                   ? std::string()
                   : encode_pod_row(it->second, self->state.model.job.uid);
      },
      [=](delete_atom) {
        auto rp = self->make_response_promise();
        auto& st = self->state;
        Effects fx;
        for (const auto& [name, p] : std::as_const(st.model.pods))
          if (is_live(p)) fx.release.push_back(p.uid);
        // The pod group is cancelled at once, so that the scheduler binds nothing more to a job
        // about to go (bindings sent meanwhile reach this actor before it quits, and are
        // released). The pods and logs leave only once the delete is durable (apply_effects).
        self->send(st.env.scheduler, place_atom::value, GangRequest{st.model.key(), {}, 0, {}});
        st.deleted = true;
        if (!st.env.store->writable()) {
          spdlog::warn(
              "job={} delete: the data dir is not writable; its pods leave their nodes now to "
              "free space, and the delete is written once the store writes again (within {} s)",
              st.model.key(), kEraseWaitsForDisk.count() / 1000);
          for (const auto& [name, p] : std::as_const(st.model.pods))
            if (!p.node.empty()) self->send(st.env.nodes, remove_atom::value, p.node, p.uid);
          st.pending_erase = JobState::PendingErase{
              std::move(fx), rp, std::chrono::steady_clock::now() + kEraseWaitsForDisk};
          self->delayed_send(self, kEraseLooksForDisk, retry_atom::value);
          return rp;
        }
        commit(self, std::move(fx), rp, Kind::Erase);
        return rp;
      },
      [=](stop_atom) {
        auto& st = self->state;
        st.offered_stop = false;
        if (!at_rest(st)) return false;  // it offers again once it is at rest (drain)
        self->quit();
        return true;
      },
      [=](committed_atom, uint64_t seq, const std::string& error) {
        auto& st = self->state;
        auto it = std::find_if(st.inflight.begin(), st.inflight.end(),
                               [&](const Inflight& in) { return in.seq == seq; });
        if (it == st.inflight.end()) return;
        if (error.empty()) {
          it->seq = 0;
          if (it->wrote_spec && it->spec_version == st.spec_version) {
            st.model.spec_stored = true;
            st.durable_spec.clear();  // the model's spec is the stored one
          }
          st.durable_history_ms = it->history_after;
          // A write carries the job row whole and every pod change not yet durable, so it makes
          // the failed writes before it durable too (an erase makes them moot).
          for (auto before = st.inflight.begin(); before != it; ++before)
            if (before->failed && (it->quit_after || before->healed_by <= seq))
              before->seq = 0, before->failed = false;
        } else {
          // A batch is all or nothing: none of its pod changes are stored, nor its live row,
          // nor its History row: the next write says it from what the store last took.
          st.model.pods.restore(std::move(it->changes));
          st.model.live_row.reset();
          st.model.history_ms = st.durable_history_ms;
          if (it->create || it->quit_after) {
            // The client hears it now: a job never stored, a delete that did not happen.
            spdlog::error("job={} write failed: {}", st.model.key(), error);
            it->seq = 0;
            it->write_error = error;
          } else {
            // The state is already the actor's: it is written again until it is durable; its
            // effects wait for that, and so does everything after them.
            if (!it->failed)
              spdlog::error("job={} write failed, writing it again in {} ms: {}", st.model.key(),
                            kRewriteAfter.count(), error);
            it->failed = true;
            it->healed_by = st.next_seq + 1;
          }
          schedule_rewrite(self);
        }
        drain(self);
      },
      [=](retry_atom) {
        auto& st = self->state;
        st.retry_scheduled = false;
        if (st.pending_erase) {
          if (!st.env.store->writable() &&
              std::chrono::steady_clock::now() < st.pending_erase->give_up) {
            self->delayed_send(self, kEraseLooksForDisk, retry_atom::value);
            return;
          }
          auto erase = std::move(*st.pending_erase);
          st.pending_erase.reset();
          commit(self, std::move(erase.fx), erase.reply, Kind::Erase);
          return;
        }
        if (st.deleted) return;  // the erase under way heals or keeps them (committed_atom)
        bool waiting = std::any_of(st.inflight.begin(), st.inflight.end(),
                                   [](const Inflight& in) { return in.failed; });
        if (!waiting) return;  // a later write held their changes
        Effects fx;
        fx.changed = true;
        commit(self, std::move(fx));
      },
  };
}

}  // namespace

protocol::job spawn_job_actor(caf::actor_system& sys, JobModel model, JobActorEnv env) {
  // Dynamically typed inside: it sends to the dynamically typed scheduler, directory and
  // membership as itself (they answer, check or remember the sender), which CAF 0.17 allows a
  // typed actor only anonymously. Its handle is typed, so what its senders send is checked.
  return caf::actor_cast<protocol::job>(sys.spawn(job_actor, std::move(model), std::move(env)));
}

}  // namespace caldera
