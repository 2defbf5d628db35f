#include "actors/cluster/membership_actor.hpp"

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <kj/exception.h>
#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/protocol/atoms.hpp"
#include "actors/protocol/local_types.hpp"
#include "actors/protocol/node.hpp"
#include "messages/cluster.capnp.h"
#include "messages/codec/codec.hpp"
#include "messages/codec/flat.hpp"
#include "messages/model/node_info.hpp"

namespace caldera {
namespace {

using namespace std::chrono_literals;

// Its own: the acknowledgements gathered so far go out, one message per node.
using flush_atom = caf::atom_constant<caf::atom("flush")>;

// The core's clock: monotonic, as leases must be (a wall clock may step).
int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

// A monotonic time shown to users as a wall-clock one.
int64_t wall_ms(int64_t monotonic) {
  using namespace std::chrono;
  auto wall = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
  return monotonic ? wall - (now_ms() - monotonic) : 0;
}

// "10.0.0.7:7170" -> "10.0.0.7", "[::1]:7170" -> "::1": a pod's hostIP is its node's host.
std::string host_of(const std::string& address) {
  auto colon = address.rfind(':');
  std::string host = colon == std::string::npos ? address : address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  return host;
}

// "cpu=16 memory=64Gi pods=110", for the log.
std::string describe(const ResourceList& r) {
  std::string out;
  for (const auto& [k, v] : r.values)
    out += (out.empty() ? "" : " ") + k + "=" + format_quantity(v);
  return out.empty() ? "nothing" : out;
}

// The very proxy `handle` is, not only the same remote actor: after a reconnect CAF makes a new
// proxy with the same address, and the old one's down message, arriving late, must not be taken
// for the new connection's.
bool same_proxy(const protocol::node& handle, const caf::actor_addr& addr) {
  return handle && caf::actor_cast<caf::actor_control_block*>(handle) == addr.get();
}

struct NodeHandle {
  protocol::node actor;
  NodeInfo info;  // as registered: capacity, labels, address
};

struct MembershipState {
  explicit MembershipState() : core(MembershipOptions{}), identity({}, "", true, false, false) {}
  MembershipEnv env;
  Membership core;
  IdentityKeeper identity;
  caf::actor directory;  // the job directory: node events and admitted registrations
  caf::actor router;     // the API router: a worker's link forwards client requests there
  caf::actor reports;    // the report port: a worker's link sends its pod reports there
  std::map<std::string, NodeHandle> nodes;
  bool told_halt = false;           // the router knows the coordinator acts on nothing
  std::optional<int64_t> timer_at;  // when the expiry check is armed for
  uint64_t refused_senders = 0;     // messages refused for coming from another process
  // Report acknowledgements by node, gathered until the flush this actor sent itself comes up:
  // under load one message carries many, when idle it leaves at once.
  std::map<std::string, std::vector<std::pair<std::string, uint64_t>>> acks;
  static inline const char* name = "membership";
};

using MemberSelf = caf::stateful_actor<MembershipState>;

// Other processes reach it only through the port published on the cluster port (registrations,
// which need the token, and heartbeats; protocol::membership_port). What reaches into nodes
// (launch, kill, logs, ...) must come from the coordinator's own actors: checked here as well,
// should a handle of this actor ever leave the process.
bool from_here(MemberSelf* self) {
  const auto& sender = self->current_sender();
  if (sender && sender->node() == self->node()) return true;
  if (self->state.refused_senders++ < 10)
    spdlog::warn(
        "membership: a message from another process refused (only registrations and "
        "heartbeats are taken from there): {}",
        sender ? to_string(sender->node()) : std::string("anonymous"));
  return false;
}

// The node's actor for a message from this process to pass on; nullptr when the sender is not
// local or the node is unknown.
const protocol::node* route(MemberSelf* self, const std::string& node) {
  if (!from_here(self)) return nullptr;
  auto it = self->state.nodes.find(node);
  return it == self->state.nodes.end() ? nullptr : &it->second.actor;
}

// The promise of a request from this process; a request from elsewhere is refused. Checked
// first: making the promise takes the sender out of the current message.
std::optional<caf::response_promise> local_promise(MemberSelf* self);

// A request for the node `node` to answer (its answer goes to the requester), or why not.
template <class... Ts>
void ask_node(MemberSelf* self, const std::string& node, Ts&&... xs) {
  auto rp = local_promise(self);
  if (!rp) return;
  auto it = self->state.nodes.find(node);
  if (it == self->state.nodes.end()) {
    rp->deliver(caf::make_error(caf::sec::runtime_error, "node " + node + " is not known"));
    return;
  }
  rp->delegate(it->second.actor, std::forward<Ts>(xs)...);
}

std::optional<caf::response_promise> local_promise(MemberSelf* self) {
  const bool local = from_here(self);
  auto rp = self->make_response_promise();
  if (local) return rp;
  rp.deliver(caf::make_error(caf::sec::unexpected_message, "not from this process"));
  return std::nullopt;
}

void flush_acks(MemberSelf* self) {
  auto& st = self->state;
  for (auto& [node, acks] : st.acks) {
    auto it = st.nodes.find(node);
    if (it == st.nodes.end()) continue;  // a node not known: its next registration heals
    SmallMessageBuilder b;
    auto list = b.initRoot<cluster::PodAcks>().initPods(static_cast<unsigned>(acks.size()));
    for (unsigned i = 0; i < acks.size(); ++i) {
      list[i].setUid(acks[i].first);
      list[i].setSeq(acks[i].second);
    }
    self->send(it->second.actor, ack_atom::value, to_bytes(b));
  }
  st.acks.clear();
}

void tell_capacity(MemberSelf* self, const std::string& name, bool ready) {
  auto& st = self->state;
  auto it = st.nodes.find(name);
  if (it == st.nodes.end()) return;
  const auto& info = it->second.info;
  auto host = host_of(info.address);
  self->send(st.env.scheduler, capacity_atom::value, name, info.capacity, ready, host, info.labels);
  if (st.directory)
    self->send(st.directory, capacity_atom::value, name, info.capacity, ready, host, info.labels);
}

// Nothing new goes to it; its pods are replaced once its lease is over (lose_nodes), or now for
// the jobs that would rather have them replaced at once.
void went_not_ready(MemberSelf* self, const std::string& name) {
  auto& st = self->state;
  const Member* m = st.core.find(name);
  std::string reason = m ? m->reason : "";
  if (st.core.leases() && m)
    spdlog::warn(
        "node={} NotReady reason=\"{}\"; its pods are replaced once its lease is over, "
        "in {}ms",
        name, reason, std::max<int64_t>(0, st.core.lease_over_ms(*m) - now_ms()));
  else
    spdlog::warn("node={} NotReady reason=\"{}\"", name, reason);
  tell_capacity(self, name, false);
  if (st.directory && st.core.leases())
    self->send(st.directory, node_lost_atom::value, name, reason, false);
}

void lose_nodes(MemberSelf* self) {
  auto& st = self->state;
  for (const auto& name : st.core.lose(now_ms())) {
    const Member* m = st.core.find(name);
    std::string reason = m ? m->reason : "";
    if (st.core.leases())
      spdlog::warn("node={} lost: its lease is over, its pods are replaced", name);
    if (st.directory) self->send(st.directory, node_lost_atom::value, name, reason, true);
  }
}

void arm(MemberSelf* self) {
  auto& st = self->state;
  auto due = st.core.next_expiry_ms();
  if (!due || (st.timer_at && *st.timer_at <= *due)) return;
  st.timer_at = due;
  auto delay = std::max<int64_t>(0, *due - now_ms());
  self->delayed_send(self, std::chrono::milliseconds(delay), timer_atom::value, *due);
}

using RegisterResult = caf::result<std::string, caf::actor, caf::actor, std::string, uint64_t>;

// A settled identity is written once; the store's writer says if it could not.
void store_identity(MemberSelf* self) {
  auto& st = self->state;
  auto settled = st.identity.take_to_store();
  if (!settled) return;
  spdlog::info("cluster id={} generation={} (written to the coordinator's store)", settled->id,
               settled->generation);
  if (!st.env.store) return;
  st.env.store->commit(
      {Write{Family::Meta, kClusterIdKey, settled->id},
       Write{Family::Meta, kClusterGenerationKey, std::to_string(settled->generation)}},
      [](std::string error) {
        if (!error.empty()) spdlog::error("cannot write the cluster's identity: {}", error);
      });
}

RegisterResult on_register(MemberSelf* self, const std::string& bytes, const caf::actor& node) {
  auto& st = self->state;
  NodeInfo info;
  Registration r;
  ClusterIdentity presented;
  size_t pods = 0;
  try {
    FlatReader reader(bytes);
    auto reg = reader.root<cluster::NodeRegistration>();
    info = decode(reg.getNode());
    r.name = info.name;
    r.address = info.address;
    r.incarnation = reg.getIncarnation();
    r.token = reg.getToken();
    presented.id = reg.getClusterId();
    presented.generation = reg.getGeneration();
    pods = reg.getPods().size();
  } catch (const kj::Exception& e) {
    spdlog::error("malformed node registration: {}", e.getDescription().cStr());
    return caf::make_error(caf::sec::invalid_argument, "malformed node registration");
  }
  if (!node) return caf::make_error(caf::sec::invalid_argument, "registration without a node");
  r.local = node.node() == self->node();
  // The coordinator's own node shares its store: it says nothing about the cluster's identity.
  auto verdict = r.local ? IdentityVerdict::Admit : st.identity.on_node(r.name, presented);
  if (verdict == IdentityVerdict::Foreign) {
    spdlog::warn("node={} refused address={} reason=\"{}\"", r.name, r.address,
                 st.identity.refusal());
    return {st.identity.refusal(), caf::actor{}, caf::actor{}, std::string(), uint64_t{0}};
  }
  const bool halted = verdict == IdentityVerdict::Halt;
  if (halted && st.router && !st.told_halt) {
    spdlog::error("coordinator halted: {}", st.identity.halt_reason());
    self->send(st.router, halt_atom::value, st.identity.halt_reason());
    st.told_halt = true;
  }
  store_identity(self);
  auto now = now_ms();
  auto admission = st.core.on_register(r, now);
  if (!admission.accepted) {
    spdlog::warn("node={} refused address={} reason=\"{}\"", r.name, r.address, admission.refusal);
    return {admission.refusal, caf::actor{}, caf::actor{}, std::string(), uint64_t{0}};
  }
  // The config is the truth: a node restarted with other figures (a config of its own) is told
  // apart, not believed. Only the ephemeral-storage a config leaves out is the node's to say: the
  // size of its own data dir's file system, measured where it runs.
  if (auto it = st.env.resources.find(r.name); it != st.env.resources.end()) {
    ResourceList configured = it->second;
    constexpr const char* kMeasured = "ephemeral-storage";
    if (auto measured = info.capacity.values.find(kMeasured);
        !configured.values.count(kMeasured) && measured != info.capacity.values.end())
      configured.values.insert(*measured);
    if (!(info.capacity == configured)) {
      spdlog::warn("node={} presents {} but the cluster config says {}: the config's are used",
                   r.name, describe(info.capacity), describe(configured));
      info.presented = std::move(info.capacity);
    }
    info.capacity = std::move(configured);
  }
  auto& h = st.nodes[r.name];
  if (!same_proxy(h.actor, node.address())) {
    if (h.actor) self->demonitor(h.actor.address());
    self->monitor(node);
    h.actor = caf::actor_cast<protocol::node>(node);
  }
  h.info = info;
  if (halted) {
    // Its heartbeats renew its lease, so its pods run on; nothing of it reaches the scheduler or
    // the jobs, which would take its pods for strays: not its registration, and not its reports
    // (no report port: its outbox keeps them for a coordinator that acts).
    spdlog::warn(
        "node={} admitted for its heartbeats only (the coordinator is halted) pods={} "
        "cluster={} generation={}",
        r.name, pods, presented.id, presented.generation);
    arm(self);
    return {std::string(), caf::actor{}, st.router, std::string(), uint64_t{0}};
  }
  spdlog::info("node={} {} address={} incarnation={} pods={}", r.name,
               admission.restarted       ? "rejoined after a restart"
               : admission.was_not_ready ? "is back"
                                         : "joined",
               r.address, r.incarnation, pods);
  tell_capacity(self, r.name, true);
  if (st.directory) self->send(st.directory, register_atom::value, bytes, node);
  arm(self);
  const auto& id = st.identity.identity();
  return {std::string(), st.reports, st.router, id.id, id.generation};
}

caf::behavior membership(MemberSelf* self, MembershipEnv env) {
  self->state.env = std::move(env);
  self->state.core = Membership(self->state.env.options);
  {
    auto& e = self->state.env;
    self->state.identity =
        IdentityKeeper(e.identity, e.candidate_id, e.alone, e.accept_empty_store, e.restored);
    if (e.identity.id.empty() && !e.alone)
      spdlog::info(
          "cluster: a new store; the nodes' registrations tell a new cluster from a "
          "lost store");
    store_identity(self);
  }
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& st = self->state;
    for (const auto& [name, h] : st.nodes) {
      if (!same_proxy(h.actor, dm.source)) continue;
      const Member* m = st.core.find(name);
      if (m && st.core.on_disconnect(name, m->incarnation,
                                     "connection lost: " + self->system().render(dm.reason)))
        went_not_ready(self, name);
    }
    lose_nodes(self);
    arm(self);
  });
  return {
      [=](coordinator_atom, const caf::actor& directory, const caf::actor& router,
          const caf::actor& reports) {
        if (!from_here(self)) return;
        self->state.directory = directory;
        self->state.router = router;
        self->state.reports = reports;
      },
      [=](listen_atom) {
        // A node that died while the coordinator was down never registers again: once the
        // others have had time to, and its lease is surely over (a worker refused a connection
        // holds its lease: it may have been renewed until the port opened), its pods are lost
        // like those of any node that goes NotReady.
        if (!from_here(self)) return;
        self->delayed_send(self,
                           std::chrono::milliseconds(startup_wait_ms(self->state.env.options)),
                           recover_atom::value);
      },
      [=](register_atom, const std::string& bytes, const caf::actor& node) -> RegisterResult {
        return on_register(self, bytes, node);
      },
      [=](heartbeat_atom, const std::string& name, uint64_t incarnation) {
        auto verdict = self->state.core.on_heartbeat(name, incarnation, now_ms());
        if (verdict == Heartbeat::Stale)
          spdlog::warn("node={} heartbeat of a replaced incarnation={}", name, incarnation);
        return verdict == Heartbeat::Ok;
      },
      [=](recover_atom) {
        auto& st = self->state;
        for (const auto& name : st.env.options.allowed) {
          if (st.core.find(name)) continue;
          auto why = fmt::format("did not register within {}ms of the coordinator's start",
                                 startup_wait_ms(st.env.options));
          spdlog::warn("node={} NotReady reason=\"{}\"", name, why);
          if (st.directory) self->send(st.directory, node_lost_atom::value, name, why, true);
        }
      },
      [=](timer_atom, int64_t armed) {
        auto& st = self->state;
        if (st.timer_at == armed) st.timer_at.reset();
        // Late by more than a quarter of the timeout: we did not run (a pause, an overloaded
        // machine), so heartbeats may wait in the mailbox behind this. Judge nobody by them.
        auto now = now_ms();
        if (now - armed > st.env.options.heartbeat_timeout_ms / 4) {
          spdlog::warn(
              "membership: the coordinator did not run for {}ms (paused or overloaded): every "
              "node gets a fresh heartbeatTimeout before any is judged",
              now - armed);
          st.core.on_stall(now);
        }
        for (const auto& name : st.core.expire(now)) went_not_ready(self, name);
        lose_nodes(self);
        arm(self);
      },
      [=](launch_atom a, const std::string& node, const std::string& bytes) {
        if (auto* to = route(self, node)) self->send(*to, a, bytes);
      },
      [=](kill_atom a, const std::string& node, const std::string& bytes) {
        if (auto* to = route(self, node)) self->send(*to, a, bytes);
      },
      [=](remove_atom a, const std::string& node, const std::string& uid) {
        if (auto* to = route(self, node)) self->send(*to, a, uid);
      },
      [=](files_atom a, const std::string& node, const std::string& bytes) {
        if (auto* to = route(self, node)) self->send(*to, a, bytes);
      },
      [=](prepare_atom a, const std::string& node, const std::string& bytes) {
        auto rp = local_promise(self);
        if (!rp) return;
        auto it = self->state.nodes.find(node);
        const Member* m = self->state.core.find(node);
        if (it == self->state.nodes.end() || !m || !m->ready) {
          rp->deliver(caf::make_error(caf::sec::runtime_error, "node " + node + " is not Ready"));
          return;
        }
        rp->delegate(it->second.actor, a, bytes);
      },
      [=](cancel_atom a, const std::string& node, const std::string& bytes) {
        if (auto* to = route(self, node)) self->send(*to, a, bytes);
      },
      [=](ack_atom, const std::string& node, const std::string& uid, uint64_t seq) {
        if (!route(self, node)) return;
        auto& st = self->state;
        if (st.acks.empty()) self->send(self, flush_atom::value);
        st.acks[node].emplace_back(uid, seq);
      },
      [=](flush_atom) { flush_acks(self); },
      [=](log_atom a, const std::string& node, const std::string& uid, const std::string& container,
          int64_t offset,
          int64_t max_bytes) { ask_node(self, node, a, uid, container, offset, max_bytes); },
      [=](lookup_atom a, const std::string& node, const std::vector<std::string>& uids) {
        ask_node(self, node, a, uids);
      },
      [=](nodes_atom) {
        auto& st = self->state;
        std::vector<NodeInfo> out;
        if (!from_here(self)) return out;
        for (const auto& [name, h] : st.nodes) {
          NodeInfo info = h.info;
          if (const Member* m = st.core.find(name)) {
            info.ready = m->ready;
            info.reason = m->reason;
            info.incarnation = m->incarnation;
            info.joined_ms = wall_ms(m->joined_ms);
            info.last_heartbeat_ms = wall_ms(m->local ? now_ms() : m->last_heartbeat_ms);
            info.address = m->address;
          }
          out.push_back(std::move(info));
        }
        for (const auto& name : st.env.options.allowed) {
          if (st.nodes.count(name)) continue;
          NodeInfo info;
          info.name = name;
          info.reason = "has not registered";
          out.push_back(std::move(info));
        }
        return out;
      },
  };
}

}  // namespace

protocol::membership spawn_membership(caf::actor_system& sys, MembershipEnv env) {
  // Dynamically typed inside (it sends to the scheduler, the directory and node actors as itself);
  // its handle is typed, so what its senders send is checked.
  return caf::actor_cast<protocol::membership>(sys.spawn(membership, std::move(env)));
}

}  // namespace caldera
