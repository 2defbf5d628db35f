#include "actors/node/node_actor.hpp"

#include "actors/cluster/core/identity.hpp"
#include "actors/node/core/node_accounting.hpp"
#include "actors/node/core/outbox.hpp"
#include "actors/node/core/pod_status.hpp"
#include "common/clock.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <unordered_map>

#include <capnp/message.h>
#include <kj/exception.h>
#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/node/lease_file.hpp"
#include "actors/node/pod_dir.hpp"
#include "actors/node/process_runner.hpp"
#include "actors/protocol/atoms.hpp"
#include "actors/protocol/local_types.hpp"
#include "actors/protocol/node.hpp"
#include "actors/store/commit_relay.hpp"
#include "messages/cluster.capnp.h"
#include "messages/codec/codec.hpp"
#include "messages/codec/flat.hpp"
#include "messages/store.capnp.h"

// The process runner's thread hands statuses to the node actor only: never serialized.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(caldera::PodProcessStatus)

namespace caldera {
namespace {

namespace fs = std::filesystem;

// Messages of the node actor to itself.
// (lapse_atom, deadline): the lease that ran to `deadline` may be over (simulated pods end)
using lapse_atom = caf::atom_constant<caf::atom("lapse")>;
using forgotten_atom = caf::atom_constant<caf::atom("forgotten")>;  // (uid, error)
using unstored_atom = caf::atom_constant<caf::atom("unstored")>;    // (uid, error)
using restore_atom = caf::atom_constant<caf::atom("restore")>;
using stored_atom = caf::atom_constant<caf::atom("stored")>;  // (uid, status seq): durable
using resend_atom = caf::atom_constant<caf::atom("resend")>;
using retired_atom = caf::atom_constant<caf::atom("retired")>;  // (uid, error)

// How often statuses and deletes that could not be written are written again (the store resumes
// writes once space is back, every second too).
constexpr std::chrono::seconds kRestoreInterval{1};

// One pod this node runs. `launch` is kept as the bytes the coordinator sent.
struct NodePodEntry {
  std::string launch;
  Pod status;
  std::vector<Container> containers;
  int64_t sim_duration_ms = -1;
  int32_t sim_exit_code = 0;
  int64_t grace_ms = kPodGraceMs;
  int64_t lease_stop_grace_ms = kLeaseStopGraceMs;
  ResourceList requests;  // what it holds of the node while live
  int32_t shim_pid = 0;
  uint64_t shim_start_ticks = 0;
  bool started = false;
  bool remove_when_done = false;
  bool unstored = false;    // its latest status is not durable (nor reported): write it again
  bool forgetting = false;  // the delete of its record is in flight
  bool undeleted = false;   // the delete of its record failed: delete it again
  bool retiring = false;    // its record is moving to NodeRetired: it leaves memory once moved
  // Its next status is numbered above this: after a restart, above any number the previous run
  // may have sent without making it durable (a job that applied one would ignore a reuse).
  uint64_t seq_floor = 0;
  bool counted_start = false;  // metrics: each pod counts once as started, once as failed
  bool counted_failure = false;
  // Set by an evicting kill (preemption): the pod's end is reported as this, not its exit.
  std::string evict_reason, evict_message;
  int64_t evict_grace_ms = 0;
};

// An evicted pod ends Failed with the eviction's reason, so that its job hears PodEvicted.
void apply_eviction(NodePodEntry& e) {
  if (e.evict_reason.empty() || is_live(e.status)) return;
  e.status.phase = PodPhase::Failed;
  e.status.reason = e.evict_reason;
  e.status.message = e.evict_message;
}

// Its public interface (protocol::node) and what only its own timers, the store's writer thread
// and the process runner's thread send it.
using NodeImpl = protocol::node::extend<
    caf::reacts_to<process_atom, PodProcessStatus>,
    caf::reacts_to<committed_atom, std::string, std::string>,  // (uid, error): a launch written
    caf::reacts_to<unstored_atom, std::string, std::string>,
    caf::reacts_to<forgotten_atom, std::string, std::string>, caf::reacts_to<restore_atom>,
    caf::reacts_to<retired_atom, std::string, std::string>,
    caf::reacts_to<stored_atom, std::string, uint64_t>, caf::reacts_to<resend_atom>,
    caf::reacts_to<sim_atom, std::string>, caf::reacts_to<timer_atom, int64_t>,
    caf::reacts_to<lease_atom, int64_t>,  // its link: the lease runs to this (monotonic ms)
    // its link: the coordinator's cluster identity ("" while it acts on nothing), and which
    // process it is
    caf::reacts_to<identity_atom, std::string, uint64_t, caf::node_id>,
    caf::reacts_to<lapse_atom, int64_t>>;

struct NodeState {
  explicit NodeState() : accounting(ResourceList{}) {}
  NodeActorEnv env;
  NodeAccounting accounting;         // what its pods and reservations hold of its capacity
  std::optional<int64_t> expiry_at;  // when the reservation expiry check is armed for
  std::unique_ptr<ProcessRunner> runner;
  // By uid. Hashed: a pod is looked up for every message about it, among every pod the node
  // keeps until its job goes (thousands), and nothing needs them in order.
  std::unordered_map<std::string, NodePodEntry> pods;
  // The outbox (DESIGN rule 5): the latest status of each pod that its job has not acknowledged.
  // The status itself is the pod's durable record; an acknowledgement is kept in memory only, so
  // a restarted node sends every pod's status once more, which the jobs know by its number.
  Outbox outbox;
  bool resend_armed = false;
  bool resending = false;  // reports went unacknowledged: logged once until they are again
  uint64_t incarnation = 0;
  bool restore_scheduled = false;  // the one restore timer is pending
  // Its lease (env.lease_file set): pods run only until this (ms of CLOCK_MONOTONIC); those bound
  // while it is over wait in `held` for the next renewal.
  int64_t lease_deadline = 0;
  std::vector<std::string> held;
  bool lease_write_failed = false;  // logged once until a write works again
  // The cluster its store belongs to (empty until it first joined one), and whether the
  // coordinator it hears from is of another (or acts on nothing): its word then kills nothing.
  std::string cluster_id;
  uint64_t cluster_generation = 0;
  bool foreign_coordinator = false;
  // Orders that came while it was, with the process they came from: carried out if that very
  // coordinator turns out to be of this cluster after all (its identity comes by another path
  // than its orders, so a new coordinator's first orders may come first), else never: a halted
  // coordinator's orders were decided on a store it lost, and another process (say, one restored
  // from a backup) does not take them over.
  struct HeldOrder {
    caf::atom_value what;
    std::string bytes;
    caf::node_id from;
  };
  std::vector<HeldOrder> held_orders;
  static inline const char* name = "node";
};

using NodeSelf = std::remove_pointer_t<NodeImpl::stateful_pointer<NodeState>>;

void count_pods(const NodeState& st) {
  if (st.env.metrics && !st.env.hollow) st.env.metrics->node_pods(st.pods.size());
}

std::string pod_dir(const NodeState& st, const std::string& uid) {
  return st.env.data_dir + "/pods/" + uid;
}

std::vector<Container> decode_containers(cluster::PodLaunch::Reader l) {
  std::vector<Container> out;
  Diagnostics ignored;  // the coordinator's own encoding
  for (auto c : l.getContainers()) out.push_back(decode(c, ignored, "container"));
  return out;
}

// A pod's record key: its uid, or on a hollow node "<node>/<uid>" (the nodes share a store).
std::string record_key(const NodeActorEnv& env, const std::string& uid) {
  return env.hollow ? env.name + "/" + uid : uid;
}

// Whether a record is this node's: a hollow node's carry its name, a real node's none (a uid has
// no '/').
bool owns_record(const NodeActorEnv& env, std::string_view key) {
  if (env.hollow) return key.size() > env.name.size() && key.starts_with(env.name + "/");
  return key.find('/') == std::string_view::npos;
}

// Reads a launch (from the coordinator or from disk) into an entry.
NodePodEntry entry_from_launch(const std::string& bytes, const std::string& node) {
  NodePodEntry e;
  e.launch = bytes;
  FlatReader reader(bytes);
  auto l = reader.root<cluster::PodLaunch>();
  e.status = decode(l.getPod());
  e.status.node = node;
  e.containers = decode_containers(l);
  e.sim_duration_ms = l.getSimDurationMs();
  e.sim_exit_code = l.getSimExitCode();
  e.grace_ms = l.getGraceMs();
  e.lease_stop_grace_ms = l.getLeaseStopGraceMs();
  e.requests = decode_resources(l.getRequests());
  e.status.containers.clear();
  for (const auto& c : e.containers) {
    ContainerStatus cs;
    cs.name = c.name;
    e.status.containers.push_back(std::move(cs));
  }
  return e;
}

std::string report_bytes(const Pod& pod) {
  SmallMessageBuilder b;
  auto r = b.initRoot<cluster::PodReport>();
  encode(pod, r.initPod());
  return to_bytes(b);
}

std::string record_bytes(const NodePodEntry& e) {
  SmallMessageBuilder b;
  auto np = b.initRoot<store::NodePod>();
  np.setLaunchBytes(
      capnp::Data::Reader(reinterpret_cast<const kj::byte*>(e.launch.data()), e.launch.size()));
  encode(e.status, np.initStatus());
  np.setShimPid(e.shim_pid);
  np.setShimStartTicks(e.shim_start_ticks);
  np.setStartedMs(e.started ? std::max<int64_t>(e.status.started_ms, 1) : 0);
  np.setEvictReason(e.evict_reason);
  np.setEvictMessage(e.evict_message);
  np.setEvictGraceMs(e.evict_grace_ms);
  return to_bytes(b);
}

void arm_resend(NodeSelf* self) {
  auto& st = self->state;
  if (st.resend_armed || st.outbox.empty()) return;
  st.resend_armed = true;
  self->delayed_send(self, st.env.report_resend_after, resend_atom::value);
}

// Reports still unacknowledged a while after they were sent go again: lost with a connection,
// with a coordinator that died before its job wrote them, or refused by a job's failed write.
void resend_unacked(NodeSelf* self) {
  auto& st = self->state;
  st.resend_armed = false;
  const int64_t now = system_now_ms();
  const int64_t after = st.env.report_resend_after.count();
  size_t sent = 0;
  for (const auto& [uid, seq] : st.outbox.due(now, after)) {
    auto it = st.pods.find(uid);
    // A status whose write failed is written (and so sent) again by restore_unstored.
    if (it == st.pods.end() || it->second.unstored || it->second.status.status_seq != seq) continue;
    caf::anon_send(st.env.coordinator, report_atom::value, report_bytes(it->second.status));
    ++sent;
  }
  if (sent && !st.resending) {
    spdlog::warn(
        "node={} pods={} reports not acknowledged within {}ms: sending them again, less and "
        "less often, until they are",
        st.env.name, sent, after);
    st.resending = true;
  } else if (st.resending && st.outbox.resent() == 0) {
    spdlog::info("node={} pod reports are acknowledged again", st.env.name);
    st.resending = false;
  }
  arm_resend(self);
}

// Persist the pod's status under its next number, then (once durable) report it and keep it in
// the outbox until the pod's job acknowledges it. A status that could not be written is written
// (and reported) again, see restore_unstored.
void persist_and_report(NodeSelf* self, NodePodEntry& e) {
  auto& st = self->state;
  if (is_terminal(e.status.phase)) st.accounting.release(e.status.uid);
  // A write after the record's delete would bring it back. Should the delete fail, the record
  // stays and this status must still reach it.
  if (e.forgetting) {
    e.unstored = true;
    return;
  }
  if (auto& m = st.env.metrics) {
    if (!e.counted_start && e.status.started_ms > 0) m->pod_started();
    if (!e.counted_failure && e.status.phase == PodPhase::Failed) m->pod_failed();
  }
  e.counted_start = e.counted_start || e.status.started_ms > 0;
  e.counted_failure = e.counted_failure || e.status.phase == PodPhase::Failed;
  const uint64_t seq = e.status.status_seq = std::max(e.status.status_seq, e.seq_floor) + 1;
  auto report = report_bytes(e.status);
  auto coordinator = st.env.coordinator;
  auto me = caf::actor_cast<NodeImpl>(self);
  auto uid = e.status.uid;
  st.outbox.recorded(uid, seq);
  st.env.store->commit({Write{Family::NodePods, record_key(st.env, uid), record_bytes(e)}},
                       [coordinator, me, uid, seq, report](std::string error) {
                         if (!error.empty()) {
                           caf::anon_send(me, unstored_atom::value, uid, std::move(error));
                           return;
                         }
                         caf::anon_send(coordinator, report_atom::value, report);
                         caf::anon_send(me, stored_atom::value, uid, seq);
                       });
}

void schedule_restore(NodeSelf* self) {
  auto& st = self->state;
  if (st.restore_scheduled) return;
  st.restore_scheduled = true;
  self->delayed_send(self, kRestoreInterval, restore_atom::value);
}

void forget(NodeSelf* self, const std::string& uid);

// One timer at a time, for the earliest reservation that may expire.
void arm_expiry(NodeSelf* self) {
  auto& st = self->state;
  auto due = st.accounting.next_expiry_ms();
  if (!due || (st.expiry_at && *st.expiry_at <= *due)) return;
  st.expiry_at = due;
  auto delay = std::max<int64_t>(0, *due - system_now_ms());
  self->delayed_send(self, std::chrono::milliseconds(delay), timer_atom::value, *due);
}

// Statuses whose write failed (a full disk) stay ahead of the record until written: the pod's
// end is neither lost nor reported before it is durable. A delete that failed keeps the pod and
// its logs until it is done again. The status goes first: the store writes in order, so the
// coordinator still hears of the end of a pod that is then deleted.
void restore_unstored(NodeSelf* self) {
  auto& st = self->state;
  st.restore_scheduled = false;
  if (!st.env.store->writable()) {
    schedule_restore(self);
    return;
  }
  std::vector<std::string> to_delete;
  for (auto& [uid, e] : st.pods) {
    if (e.forgetting) continue;
    if (e.unstored) {
      e.unstored = false;
      spdlog::info("node={} pod={} writing its status again after a write error", st.env.name, uid);
      persist_and_report(self, e);
    }
    if (e.undeleted) {
      e.undeleted = false;
      spdlog::info("node={} pod={} deleting its record again after a write error", st.env.name,
                   uid);
      to_delete.push_back(uid);
    }
  }
  for (const auto& uid : to_delete) forget(self, uid);
}

// The record goes first and the pod's directory (its logs) once that is durable, or at once when
// it fails (a full disk): deleting is what frees space, and an ended pod's record without its
// logs harms nothing while its delete is tried again.
void forget(NodeSelf* self, const std::string& uid) {
  auto& st = self->state;
  auto it = st.pods.find(uid);
  if (it == st.pods.end() || it->second.forgetting) return;
  it->second.forgetting = true;
  st.outbox.forget(uid);  // removed by the coordinator: its job needs no more of it
  auto me = caf::actor_cast<NodeImpl>(self);
  // A retire under way wrote its record there first (the store writes in order).
  st.env.store->commit({Write{Family::NodePods, record_key(st.env, uid), std::nullopt},
                        Write{Family::NodeRetired, record_key(st.env, uid), std::nullopt}},
                       [me, uid](std::string error) {
                         caf::anon_send(me, forgotten_atom::value, uid, std::move(error));
                       });
}

// An ended pod whose end its job holds (acknowledged) leaves the node's memory and the records a
// restart reads: its record moves to NodeRetired, where a log read, a lookup (a coordinator
// restored from a backup asks how its pods ended) or its job's removal finds it. So a node's
// memory and restart time grow with the pods it runs, not with those it ran.
void retire(NodeSelf* self, NodePodEntry& e) {
  auto& st = self->state;
  if (is_live(e.status) || e.retiring || e.forgetting || e.unstored || e.undeleted ||
      e.remove_when_done || st.outbox.pending(e.status.uid))
    return;
  e.retiring = true;
  auto me = caf::actor_cast<NodeImpl>(self);
  auto uid = e.status.uid;
  // How it ended is all that is kept (its containers' names are in it, for its logs).
  st.env.store->commit({Write{Family::NodeRetired, record_key(st.env, uid), report_bytes(e.status)},
                        Write{Family::NodePods, record_key(st.env, uid), std::nullopt}},
                       [me, uid](std::string error) {
                         caf::anon_send(me, retired_atom::value, uid, std::move(error));
                       });
}

void on_retired(NodeSelf* self, const std::string& uid, const std::string& error) {
  auto& st = self->state;
  auto it = st.pods.find(uid);
  if (it == st.pods.end() || !it->second.retiring) return;
  if (!error.empty()) {
    // It stays (a restart reads its record, reports it and retires it then).
    it->second.retiring = false;
    return;
  }
  // A removal that came meanwhile forgets it (its delete reaches both records).
  if (it->second.forgetting) return;
  st.accounting.release(uid);
  st.pods.erase(it);
  count_pods(st);
}

// A retired pod's record (its last PodReport), read back: nullopt when there is none.
std::optional<Pod> retired_pod(NodeSelf* self, const std::string& uid) {
  auto& st = self->state;
  auto row = st.env.store->get(Family::NodeRetired, record_key(st.env, uid));
  if (!row) return std::nullopt;
  try {
    FlatReader reader(*row);
    return decode(reader.root<cluster::PodReport>().getPod());
  } catch (const kj::Exception& ex) {
    spdlog::error("node={} pod={} unreadable retired record: {}", st.env.name, uid,
                  ex.getDescription().cStr());
    return std::nullopt;
  }
}

// Its job goes: the retired pod's logs and record with it.
void forget_retired(NodeSelf* self, const std::string& uid) {
  auto& st = self->state;
  std::error_code ec;
  fs::remove_all(pod_dir(st, uid), ec);
  st.env.store->commit({Write{Family::NodeRetired, record_key(st.env, uid), std::nullopt}},
                       [name = st.env.name, uid](std::string error) {
                         if (!error.empty())
                           spdlog::error("node={} pod={} retired record not deleted: {}", name, uid,
                                         error);
                       });
}

void on_forgotten(NodeSelf* self, const std::string& uid, const std::string& error) {
  auto& st = self->state;
  auto it = st.pods.find(uid);
  if (it == st.pods.end()) return;
  st.accounting.release(uid);
  if (!error.empty()) {
    std::error_code ec;
    fs::remove_all(pod_dir(st, uid), ec);
    spdlog::error("node={} pod={} logs removed, record kept: the delete of its record failed: {}",
                  st.env.name, uid, error);
    it->second.forgetting = false;
    it->second.undeleted = true;
    schedule_restore(self);
    return;
  }
  std::error_code ec;
  fs::remove_all(pod_dir(st, uid), ec);
  if (ec)
    spdlog::warn("node={} pod={} cannot remove {}: {}", st.env.name, uid, pod_dir(st, uid),
                 ec.message());
  st.pods.erase(it);
  count_pods(st);
}

void finish_sim(NodeSelf* self, NodePodEntry& e, int32_t exit_code, int32_t signal,
                const std::string& reason, int64_t at_ms = system_now_ms()) {
  end_simulated(e.status, exit_code, signal, reason, at_ms);
  apply_eviction(e);
  persist_and_report(self, e);
  if (e.remove_when_done) forget(self, e.status.uid);
}

// Orders held at most: a coordinator of another cluster could send any number.
constexpr size_t kMaxHeldOrders = 100000;

// An order of a coordinator whose word this node does not take (see identity_atom) is held.
bool hold_order(NodeSelf* self, caf::atom_value what, const std::string& bytes) {
  auto& st = self->state;
  if (!st.foreign_coordinator) return false;
  if (st.held_orders.size() < 10)
    spdlog::warn("node={} holds a {} from a coordinator it does not take orders from", st.env.name,
                 to_string(what));
  const auto& sender = self->current_sender();
  if (st.held_orders.size() < kMaxHeldOrders)
    st.held_orders.push_back({what, bytes, sender ? sender->node() : caf::node_id{}});
  return true;
}

bool lease_held(const NodeState& st) {
  return st.env.lease_file.empty() || lease_file::monotonic_ms() < st.lease_deadline;
}

void start_pod(NodeSelf* self, NodePodEntry& e) {
  auto& st = self->state;
  if (e.started) return;
  // Nothing starts without a lease: the coordinator may be replacing this node's pods already.
  if (!lease_held(st)) {
    st.held.push_back(e.status.uid);
    return;
  }
  e.started = true;
  if (e.sim_duration_ms >= 0) {
    const int64_t now = system_now_ms();
    start_simulated(e.status, now);
    // A pod that runs for no time ends as it starts (at the same instant): one write and one
    // report, as a kubelet that saw it only once it had ended would report it.
    if (e.sim_duration_ms == 0) {
      finish_sim(self, e, e.sim_exit_code, 0, e.sim_exit_code == 0 ? "Completed" : "Error", now);
      return;
    }
    persist_and_report(self, e);
    self->delayed_send(self, std::chrono::milliseconds(e.sim_duration_ms), sim_atom::value,
                       e.status.uid);
    return;
  }
  PodProcessSpec spec;
  spec.uid = e.status.uid;
  spec.pod_dir = pod_dir(st, e.status.uid);
  spec.containers = e.containers;
  spec.grace_ms = e.grace_ms;
  spec.lease_stop_grace_ms = e.lease_stop_grace_ms;
  spec.log_max_bytes = st.env.container_log_max_size;
  spec.log_max_files = st.env.container_log_max_files;
  spec.open_files_limit = st.env.container_open_files_limit;
  spec.lease_file = st.env.lease_file;
  std::map<std::string, std::string> views;
  try {
    FlatReader reader(e.launch);
    spec.files = decode_map(reader.root<cluster::PodLaunch>().getFiles());
    views = decode_map(reader.root<cluster::PodLaunch>().getViews());
  } catch (const kj::Exception&) {
    // The launch was read once already (entry_from_launch); it cannot be malformed here.
  }
  // A launch from before launches named their views: Volcano's svc and mpi files at /etc/volcano.
  if (views.empty() && std::any_of(spec.files.begin(), spec.files.end(),
                                   [](const auto& f) { return f.first.rfind("volcano/", 0) == 0; }))
    views.emplace("/etc/volcano", "volcano");
  if (st.env.etc_volcano) spec.views.assign(views.begin(), views.end());
  // Kubernetes expands $(VAR) in env values; the pod's own directory is the one caldera offers.
  for (auto& c : spec.containers) {
    for (auto& v : c.env) {
      const std::string ref = "$(VC_POD_DIR)";
      for (auto at = v.value.find(ref); at != std::string::npos; at = v.value.find(ref, at))
        v.value.replace(at, ref.size(), spec.pod_dir);
    }
    c.env.push_back({"VC_POD_DIR", spec.pod_dir});
  }
  st.runner->launch(std::move(spec));
}

// A running pod's plugin files, written again as its job says (its task's hosts changed). A pod
// that is not running here, or only simulated, has none to change.
void rewrite_files(NodeSelf* self, const std::string& bytes) {
  auto& st = self->state;
  try {
    FlatReader reader(bytes);
    auto order = reader.root<cluster::PodFiles>();
    auto it = st.pods.find(order.getUid().cStr());
    if (it == st.pods.end() || !is_live(it->second.status) || it->second.sim_duration_ms >= 0 ||
        st.env.hollow)
      return;
    const auto dir = pod_dir(st, it->first);
    for (const auto& [path, content] : decode_map(order.getFiles()))
      if (auto error = replace_pod_file(dir, path, content))
        spdlog::warn("node={} pod={} plugin file not rewritten: {}", st.env.name, it->first,
                     *error);
  } catch (const kj::Exception& e) {
    spdlog::error("node={} malformed pod files order: {}", st.env.name, e.getDescription().cStr());
  }
}

void on_process_status(NodeSelf* self, const PodProcessStatus& ps) {
  auto& st = self->state;
  auto it = st.pods.find(ps.uid);
  if (it == st.pods.end()) return;
  auto& e = it->second;
  if (is_terminal(e.status.phase)) return;
  e.shim_pid = ps.shim_pid ? ps.shim_pid : e.shim_pid;
  e.shim_start_ticks = ps.shim_start_ticks ? ps.shim_start_ticks : e.shim_start_ticks;
  apply_containers(e.status, ps.containers, ps.create_error, system_now_ms());
  apply_eviction(e);
  if (is_terminal(e.status.phase) && !ps.create_error.empty())
    spdlog::error("node={} pod={} failed to create: {}", st.env.name, ps.uid, ps.create_error);
  persist_and_report(self, e);
  if (is_terminal(e.status.phase) && e.remove_when_done) forget(self, ps.uid);
}

void kill_pod(NodeSelf* self, NodePodEntry& e, int64_t grace_ms) {
  if (!is_live(e.status)) return;
  if (!e.started) {
    e.started = true;
    finish_sim(self, e, 128 + 15, 15, "Killed");  // never ran: it ends here
    return;
  }
  if (e.sim_duration_ms >= 0) {
    finish_sim(self, e, 128 + 15, 15, "Signaled");
    return;
  }
  self->state.runner->kill(e.status.uid, grace_ms);
}

// A pod whose launch was recorded but not its supervisor: the previous run may have died after
// spawning the shim, which then says who it is in the pod dir. An evicted one must never run: the
// node claims its dir first, so that a shim still on its way runs nothing.
void adopt_unrecorded_shim(NodeState& st, const std::string& uid, NodePodEntry& e, bool evicted) {
  const auto dir = pod_dir(st, uid);
  auto claimed = evicted ? pod_dir::claim_for_node(dir) : pod_dir::Claim::Taken;
  if (claimed == pod_dir::Claim::Made) return;
  if (claimed == pod_dir::Claim::Failed)
    spdlog::error(
        "node={} pod={} cannot claim {} for its eviction: a supervisor spawned before "
        "the restart could still run it",
        st.env.name, uid, dir);
  auto read_claim = [&] {
    auto text = pod_dir::read_file(dir + "/state");
    return pod_dir::parse_state(text ? *text : "", e.containers.size());
  };
  auto claim = read_claim();
  // A shim makes the file, then writes who it is at once. An evicted pod's shim, adopted only to
  // be killed, is waited for (up to 2 s, should it have been descheduled in between): the node
  // must know whom to kill. Only a restart that found a shim mid-claim waits.
  auto waited = std::chrono::milliseconds(0);
  for (auto step = std::chrono::milliseconds(1);
       claimed == pod_dir::Claim::Taken && evicted && claim.shim_pid == 0 &&
       waited < std::chrono::seconds(2);
       step = std::min(2 * step, std::chrono::milliseconds(100))) {
    std::this_thread::sleep_for(step);
    waited += step;
    claim = read_claim();
  }
  if (claimed == pod_dir::Claim::Taken && evicted && claim.shim_pid == 0)
    spdlog::error(
        "node={} pod={} was claimed by a supervisor that does not say who it is: it may "
        "run on, unwatched",
        st.env.name, uid);
  if (claim.shim_pid > 0) {
    e.started = true;
    e.shim_pid = claim.shim_pid;
    e.shim_start_ticks = claim.shim_start_ticks;
  }
}

// Re-reads the pods of an earlier run: finished ones stay for their logs, running supervisors
// are adopted, simulated pods continue with the time they have left.
void recover(NodeSelf* self) {
  auto& st = self->state;
  std::vector<std::string> stale;
  auto read = [&](std::string_view key, std::string_view value) {
    if (!owns_record(st.env, key)) {
      // A hollow node's record on a real node's data dir (the entry had a count once): it was
      // simulated, nothing of it runs.
      if (!st.env.hollow) stale.emplace_back(key);
      return;
    }
    try {
      FlatReader reader(value);
      auto np = reader.root<store::NodePod>();
      std::string launch;
      if (np.hasLaunchBytes()) {
        auto bytes = np.getLaunchBytes();
        launch.assign(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
      } else {  // written before launchBytes
        SmallMessageBuilder b;
        b.setRoot(np.getLaunch());
        launch = to_bytes(b);
      }
      NodePodEntry e = entry_from_launch(std::move(launch), st.env.name);
      if (st.env.hollow && e.sim_duration_ms < 0) e.sim_duration_ms = 0;
      e.status = decode(np.getStatus());
      e.status.node = st.env.name;
      e.shim_pid = np.getShimPid();
      e.shim_start_ticks = np.getShimStartTicks();
      e.started = np.getStartedMs() != 0 || e.shim_pid != 0;
      e.evict_reason = np.getEvictReason();
      e.evict_message = np.getEvictMessage();
      e.evict_grace_ms = np.getEvictGraceMs();
      // A run numbers at most a few statuses per pod per second that never become durable (a
      // full disk retried every second): 2^32 is past them for any run, and leaves room for
      // 2^32 restarts.
      e.seq_floor = e.status.status_seq + (uint64_t{1} << 32);
      e.counted_start = e.status.started_ms > 0;  // the previous run counted them
      e.counted_failure = e.status.phase == PodPhase::Failed;
      st.pods.emplace(e.status.uid, std::move(e));
      count_pods(st);
    } catch (const kj::Exception& ex) {
      spdlog::error("node={} unreadable pod record {}: {}", st.env.name, std::string(key),
                    ex.getDescription().cStr());
      stale.emplace_back(key);
    }
  };
  if (st.env.records) {
    for (const auto& [key, value] : *st.env.records) read(key, value);
  } else {
    st.env.store->scan(Family::NodePods, read);
  }
  for (const auto& k : stale) st.env.store->commit({Write{Family::NodePods, k, std::nullopt}}, {});
  size_t adopted = 0;
  for (auto& [uid, e] : st.pods) {
    if (!is_live(e.status)) continue;
    st.accounting.adopt({uid, e.requests});
    const bool evicted = !e.evict_reason.empty();
    if (!e.started && e.sim_duration_ms < 0) adopt_unrecorded_shim(st, uid, e, evicted);
    if (!e.started) {
      // Evicted before its launch: it never runs (kill_pod ends it at once).
      if (!evicted) start_pod(self, e);
    } else if (e.sim_duration_ms >= 0) {
      auto left = std::max<int64_t>(0, e.status.started_ms + e.sim_duration_ms - system_now_ms());
      if (!evicted) self->delayed_send(self, std::chrono::milliseconds(left), sim_atom::value, uid);
    } else {
      st.runner->adopt(uid, pod_dir(st, uid), e.containers.size(), e.shim_pid, e.shim_start_ticks);
      ++adopted;
    }
    // Evicted by the previous run, which may not have got its kill through: killed again, with
    // the eviction's grace (counted anew: the shim does not say how much of it has passed).
    if (evicted) kill_pod(self, e, e.evict_grace_ms > 0 ? e.evict_grace_ms : e.grace_ms);
  }
  if (!st.pods.empty())
    spdlog::info("node={} recovered pods={} adopted={}", st.env.name, st.pods.size(), adopted);
}

std::string registration_bytes(NodeSelf* self) {
  auto& st = self->state;
  SmallMessageBuilder b;
  auto r = b.initRoot<cluster::NodeRegistration>();
  NodeInfo info;
  info.name = st.env.name;
  info.address = st.env.address;
  info.ready = true;
  info.capacity = st.env.capacity;
  info.allocatable = st.env.capacity;
  info.coordinator = st.env.is_coordinator;
  info.labels = st.env.labels;
  encode(info, r.initNode());
  auto pods = r.initPods(static_cast<unsigned>(st.pods.size()));
  unsigned i = 0;
  for (const auto& [uid, e] : st.pods) {
    encode(e.status, pods[i++].initPod());
  }
  r.setIncarnation(st.incarnation);
  r.setToken(st.env.token);
  r.setClusterId(st.cluster_id);
  r.setGeneration(st.cluster_generation);
  return to_bytes(b);
}

NodeImpl::behavior_type node_behavior(NodeSelf* self);

NodeImpl::behavior_type node_actor(NodeSelf* self, NodeActorEnv env) {
  auto& st = self->state;
  st.env = std::move(env);
  st.accounting = NodeAccounting(st.env.capacity);
  st.incarnation = std::random_device{}();
  std::error_code ec;
  fs::create_directories(st.env.data_dir + "/pods", ec);
  if (auto id = st.env.store->get(Family::Meta, kClusterIdKey)) st.cluster_id = *id;
  if (auto g = st.env.store->get(Family::Meta, kClusterGenerationKey))
    st.cluster_generation = std::strtoull(g->c_str(), nullptr, 10);
  // The previous run's lease holds for the pods it left running, until it is renewed or over.
  if (!st.env.lease_file.empty()) st.lease_deadline = lease_file::read(st.env.lease_file);
  caf::weak_actor_ptr weak = caf::actor_cast<caf::weak_actor_ptr>(self->ctrl());
  // A hollow node runs no process (a runner is a thread and a libuv loop each).
  if (!st.env.hollow)
    st.runner = ProcessRunner::create(st.env.shim_path, [weak](PodProcessStatus s) {
      if (auto strong = weak.lock())
        caf::anon_send(caf::actor_cast<NodeImpl>(strong), process_atom::value, std::move(s));
    });
  if (!st.runner && !st.env.hollow) {
    spdlog::error("node={} cannot start its process runner (libuv loop)", st.env.name);
    self->quit(caf::sec::runtime_error);
    return node_behavior(self);  // never runs: the actor has quit
  }
  recover(self);
  // Anonymous: the membership's answer goes to the link on a worker, and is not needed here.
  caf::anon_send(st.env.membership ? st.env.membership : st.env.coordinator, register_atom::value,
                 registration_bytes(self), caf::actor_cast<caf::actor>(self));
  spdlog::info("node={} registered capacity cpu={} memory={} pods={}", st.env.name,
               format_quantity(st.env.capacity.get("cpu")),
               format_quantity(st.env.capacity.get("memory")),
               format_quantity(st.env.capacity.get("pods")));
  return node_behavior(self);
}

NodeImpl::behavior_type node_behavior(NodeSelf* self) {
  return {
      [=](register_atom) { return registration_bytes(self); },
      [=](prepare_atom, const std::string& bytes) -> caf::result<std::vector<std::string>> {
        auto& st = self->state;
        std::vector<std::string> verdicts;
        try {
          FlatReader reader(bytes);
          for (auto r : reader.root<cluster::PodReservations>().getGangs()) {
            std::vector<NodeAccounting::Ask> asks;
            for (auto p : r.getPods())
              asks.push_back({p.getUid(), decode_resources(p.getRequests())});
            auto why = st.accounting.reserve(asks, system_now_ms() + r.getTtlMs());
            if (why)
              spdlog::info("node={} gang={} reservation of {} pods refused: {}", st.env.name,
                           r.getGang().cStr(), asks.size(), *why);
            verdicts.push_back(why ? *why : std::string());
          }
        } catch (const kj::Exception& ex) {
          // The gangs reserved before the bad one expire unbound; the scheduler cancels all.
          return caf::make_error(
              caf::sec::invalid_argument,
              std::string("malformed reservation: ") + ex.getDescription().cStr());
        }
        arm_expiry(self);
        return verdicts;
      },
      [=](cancel_atom, const std::string& bytes) {
        auto& st = self->state;
        try {
          FlatReader reader(bytes);
          for (auto p : reader.root<cluster::PodReservation>().getPods())
            if (st.accounting.reserved(p.getUid())) st.accounting.release(p.getUid());
        } catch (const kj::Exception& ex) {
          spdlog::error("node={} malformed reservation cancel: {}", st.env.name,
                        ex.getDescription().cStr());
        }
      },
      [=](timer_atom, int64_t armed) {
        auto& st = self->state;
        if (st.expiry_at == armed) st.expiry_at.reset();
        auto gone = st.accounting.expire(system_now_ms());
        if (!gone.empty())
          spdlog::info("node={} released {} reservations never bound", st.env.name, gone.size());
        arm_expiry(self);
      },
      [=](launch_atom, const std::string& bytes) {
        auto& st = self->state;
        if (hold_order(self, launch_atom::value, bytes)) return;
        NodePodEntry e;
        try {
          e = entry_from_launch(bytes, st.env.name);
          if (st.env.hollow && e.sim_duration_ms < 0) e.sim_duration_ms = 0;
        } catch (const kj::Exception& ex) {
          spdlog::error("node={} malformed launch: {}", st.env.name, ex.getDescription().cStr());
          return;
        }
        auto uid = e.status.uid;
        auto it = st.pods.find(uid);
        if (it != st.pods.end()) {  // a repeat: say where it stands
          caf::anon_send(st.env.coordinator, report_atom::value, report_bytes(it->second.status));
          return;
        }
        // Never over-committed: the pod takes its reservation, or room that is free now.
        if (auto why = st.accounting.bind({uid, e.requests})) {
          spdlog::warn("node={} pod={} refused: {}", st.env.name, uid, *why);
          Pod status = e.status;
          status.phase = PodPhase::Failed;
          status.reason = std::string(kFailedCreate);
          status.message = "the node would be over-committed: " + *why;
          status.finished_ms = system_now_ms();
          ++status.status_seq;  // not recorded: a lost report leaves the pod unlaunched, which
                                // the job sees when the node registers (on_node_up)
          caf::anon_send(st.env.coordinator, report_atom::value, report_bytes(status));
          return;
        }
        e.status.phase = PodPhase::Pending;
        auto [pos, _] = st.pods.emplace(uid, std::move(e));
        count_pods(st);
        // A simulated pod starts nothing outside the node, so its first record is its start.
        if (pos->second.sim_duration_ms >= 0) {
          start_pod(self, pos->second);
          return;
        }
        // Durable before it starts: after a crash the node knows every pod it may have started.
        auto me = caf::actor_cast<NodeImpl>(self);
        st.env.store->commit(
            {Write{Family::NodePods, record_key(st.env, uid), record_bytes(pos->second)}},
            [me, uid](std::string error) {
              notify_committed(caf::actor_cast<caf::actor>(me), uid, std::move(error));
            });
      },
      [=](committed_atom, const std::string& uid, const std::string& error) {
        auto it = self->state.pods.find(uid);
        if (it == self->state.pods.end()) return;
        if (!error.empty()) {
          // Not durable, so not started: the controller hears that the pod was not created
          // (straight away, as there is no record to report from) and makes it again.
          auto& st = self->state;
          spdlog::error("node={} pod={} failed to create, write failed: {}", st.env.name, uid,
                        error);
          Pod status = it->second.status;
          status.phase = PodPhase::Failed;
          status.reason = std::string(kFailedCreate);
          status.message = "the node could not record the pod: " + error;
          status.finished_ms = system_now_ms();
          ++status.status_seq;
          caf::anon_send(st.env.coordinator, report_atom::value, report_bytes(status));
          st.accounting.release(uid);
          st.pods.erase(it);
          count_pods(st);
          return;
        }
        start_pod(self, it->second);
      },
      [=](process_atom, const PodProcessStatus& ps) { on_process_status(self, ps); },
      [=](unstored_atom, const std::string& uid, const std::string& error) {
        auto it = self->state.pods.find(uid);
        if (it == self->state.pods.end() || it->second.unstored) return;
        spdlog::error("node={} pod={} status not recorded, written again once the store can: {}",
                      self->state.env.name, uid, error);
        it->second.unstored = true;
        schedule_restore(self);
      },
      [=](restore_atom) { restore_unstored(self); },
      [=](stored_atom, const std::string& uid, uint64_t seq) {
        auto& st = self->state;
        st.outbox.stored(uid, seq, system_now_ms());
        arm_resend(self);
      },
      [=](ack_atom, const std::string& bytes) {
        auto& st = self->state;
        try {
          FlatReader reader(bytes);
          for (auto a : reader.root<cluster::PodAcks>().getPods()) {
            std::string uid = a.getUid().cStr();
            st.outbox.acknowledged(uid, a.getSeq());
            if (auto it = st.pods.find(uid); it != st.pods.end()) retire(self, it->second);
          }
        } catch (const kj::Exception& ex) {
          spdlog::error("node={} malformed acknowledgements: {}", st.env.name,
                        ex.getDescription().cStr());
        }
      },
      [=](resend_atom) { resend_unacked(self); },
      [=](forgotten_atom, const std::string& uid, const std::string& error) {
        on_forgotten(self, uid, error);
      },
      [=](retired_atom, const std::string& uid, const std::string& error) {
        on_retired(self, uid, error);
      },
      [=](lookup_atom, const std::vector<std::string>& uids) {
        std::vector<std::string> reports;
        for (const auto& uid : uids) {
          if (self->state.pods.count(uid)) continue;  // held: its registration told
          if (auto pod = retired_pod(self, uid)) reports.push_back(report_bytes(*pod));
        }
        return reports;
      },
      [=](lease_atom, int64_t deadline) {
        auto& st = self->state;
        if (st.env.lease_file.empty() || deadline <= st.lease_deadline) return;
        const auto& sender = self->current_sender();
        if (!sender || sender->node() != self->node()) return;  // only its own link renews it
        st.lease_deadline = deadline;
        auto error = lease_file::write(st.env.lease_file, deadline);
        if (!error.empty() && !st.lease_write_failed)
          spdlog::error("node={} cannot renew its lease on disk, its pods stop when it is over: {}",
                        st.env.name, error);
        else if (error.empty() && st.lease_write_failed)
          spdlog::info("node={} renews its lease on disk again", st.env.name);
        st.lease_write_failed = !error.empty();
        auto held = std::move(st.held);
        st.held.clear();
        for (const auto& uid : held)
          if (auto it = st.pods.find(uid); it != st.pods.end() && is_live(it->second.status))
            start_pod(self, it->second);
        auto left = std::max<int64_t>(0, deadline - lease_file::monotonic_ms());
        self->delayed_send(self, std::chrono::milliseconds(left + 1), lapse_atom::value, deadline);
      },
      [=](identity_atom, const std::string& cluster, uint64_t generation,
          const caf::node_id& coordinator) {
        auto& st = self->state;
        const auto& sender = self->current_sender();
        if (!sender || sender->node() != self->node()) return;  // only its own link says this
        const bool foreign =
            cluster.empty() || (!st.cluster_id.empty() && cluster != st.cluster_id);
        if (foreign && !st.foreign_coordinator)
          spdlog::error(
              "node={} the coordinator {}: its orders to launch, kill or remove pods are held, "
              "and the pods run on",
              st.env.name,
              cluster.empty() ? std::string("acts on nothing (its store was lost)")
                              : "is of cluster " + cluster + ", this node of " + st.cluster_id);
        st.foreign_coordinator = foreign;
        if (foreign) return;
        auto held = std::move(st.held_orders);
        st.held_orders.clear();
        size_t dropped = 0;
        for (auto& [what, bytes, from] : held) {
          if (from != coordinator)
            ++dropped;
          else if (what == launch_atom::value)
            self->send(self, launch_atom::value, std::move(bytes));
          else if (what == kill_atom::value)
            self->send(self, kill_atom::value, std::move(bytes));
          else if (what == files_atom::value)
            self->send(self, files_atom::value, std::move(bytes));
          else
            self->send(self, remove_atom::value, std::move(bytes));
        }
        if (dropped > 0)
          spdlog::warn("node={} dropped {} held orders of a coordinator process that is gone",
                       st.env.name, dropped);
        if (cluster == st.cluster_id && generation == st.cluster_generation) return;
        if (st.cluster_id.empty())
          spdlog::info("node={} joined cluster={} generation={}", st.env.name, cluster, generation);
        st.cluster_id = cluster;
        st.cluster_generation = generation;
        st.env.store->commit(
            {Write{Family::Meta, kClusterIdKey, cluster},
             Write{Family::Meta, kClusterGenerationKey, std::to_string(generation)}},
            [](std::string error) {
              if (!error.empty()) spdlog::error("cannot write the cluster's identity: {}", error);
            });
      },
      [=](lapse_atom, int64_t deadline) {
        // Real pods are stopped by their supervisors; simulated ones run here.
        auto& st = self->state;
        if (deadline != st.lease_deadline || lease_held(st)) return;
        size_t ended = 0;
        for (auto& [uid, e] : st.pods) {
          if (!is_live(e.status) || !e.started || e.sim_duration_ms < 0) continue;
          finish_sim(self, e, 128 + 9, 9, std::string(kLeaseExpired));
          ++ended;
        }
        if (ended)
          spdlog::warn("node={} lease over: stopped simulated pods={}", st.env.name, ended);
      },
      [=](sim_atom, const std::string& uid) {
        auto it = self->state.pods.find(uid);
        if (it == self->state.pods.end() || !is_live(it->second.status)) return;
        auto& e = it->second;
        finish_sim(self, e, e.sim_exit_code, 0, e.sim_exit_code == 0 ? "Completed" : "Error");
      },
      [=](kill_atom, const std::string& bytes) {
        if (hold_order(self, kill_atom::value, bytes)) return;
        std::string uid, evict_reason, why;
        int64_t grace = 10000;
        try {
          FlatReader reader(bytes);
          auto k = reader.root<cluster::PodKill>();
          uid = k.getUid();
          grace = k.getGraceMs();
          evict_reason = k.getEvictReason();
          why = k.getReason();
        } catch (const kj::Exception& ex) {
          spdlog::error("node={} malformed kill: {}", self->state.env.name,
                        ex.getDescription().cStr());
          return;
        }
        auto it = self->state.pods.find(uid);
        if (it == self->state.pods.end()) return;
        if (!evict_reason.empty() && is_live(it->second.status) &&
            it->second.evict_reason.empty()) {
          it->second.evict_reason = std::move(evict_reason);
          it->second.evict_message = std::move(why);
          it->second.evict_grace_ms = grace;
          // Durable before the grace period runs: a restart meanwhile still ends it evicted (its
          // job hears PodEvicted, not a failure that would use up a retry). A failed write is
          // made with the pod's next status.
          // (A simulated pod, or one not started, ends at once and is written so.)
          auto& st = self->state;
          const auto& e = it->second;
          if (e.started && e.sim_duration_ms < 0 && !e.forgetting)
            st.env.store->commit(
                {Write{Family::NodePods, record_key(st.env, uid), record_bytes(e)}}, {});
        }
        kill_pod(self, it->second, grace);
      },
      [=](files_atom, const std::string& bytes) {
        if (hold_order(self, files_atom::value, bytes)) return;
        rewrite_files(self, bytes);
      },
      [=](remove_atom, const std::string& uid) {
        if (hold_order(self, remove_atom::value, uid)) return;
        auto it = self->state.pods.find(uid);
        if (it == self->state.pods.end()) {
          forget_retired(self, uid);
          return;
        }
        if (is_live(it->second.status)) {
          it->second.remove_when_done = true;
          kill_pod(self, it->second, it->second.grace_ms);  // its job's deletion: its own grace
        } else {
          forget(self, uid);
        }
      },
      [=](log_atom, const std::string& uid, const std::string& container, int64_t offset,
          int64_t max_bytes) -> caf::result<std::string, int64_t, bool> {
        using Chunk = caf::result<std::string, int64_t, bool>;
        auto& st = self->state;
        auto it = st.pods.find(uid);
        std::optional<Pod> retired;
        if (it == st.pods.end()) retired = retired_pod(self, uid);
        if (it == st.pods.end() && !retired)
          return caf::make_error(caf::sec::runtime_error, "pod not on node");
        // A retired pod's status names its containers (a simulated one has no log files).
        const Pod& status = retired ? *retired : it->second.status;
        std::string name = container;
        if (name.empty() && !status.containers.empty()) name = status.containers[0].name;
        bool known = false;
        for (const auto& c : status.containers) known = known || c.name == name;
        if (!known) return caf::make_error(caf::sec::runtime_error, "no such container");
        constexpr int64_t kMaxChunk = 1 << 20;  // replies stay far below Cap'n Proto's limits
        max_bytes = std::clamp<int64_t>(max_bytes, 0, kMaxChunk);
        if (max_bytes == 0) max_bytes = kMaxChunk;
        bool ended = !is_live(status);
        if (!retired && it->second.sim_duration_ms >= 0) return Chunk{std::string{}, offset, ended};
        std::ifstream in(pod_dir(st, uid) + "/" + name + ".log", std::ios::binary);
        if (!in) return Chunk{std::string{}, offset, ended};
        in.seekg(0, std::ios::end);
        int64_t size = in.tellg();
        if (size < 0) return Chunk{std::string{}, offset, ended};
        // Past the end: the file was rotated since the last chunk (what followed the reader's
        // offset is in .log.1 now). The new file is read from its start, which a next offset
        // below the one asked for tells the reader; waiting for the new file to grow past the
        // old offset would skip its beginning, or all of it once the pod has ended.
        if (offset > size) offset = 0;
        offset = std::max<int64_t>(offset, 0);
        int64_t n = std::min<int64_t>(size - offset, max_bytes);
        std::string data(static_cast<size_t>(n), '\0');
        in.seekg(offset);
        in.read(data.data(), n);
        return Chunk{std::move(data), offset + n, ended && offset + n >= size};
      },
  };
}

}  // namespace

protocol::node spawn_node_actor(caf::actor_system& sys, NodeActorEnv env) {
  return sys.spawn(node_actor, std::move(env));
}

}  // namespace caldera
