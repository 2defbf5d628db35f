#include "actors/node/coordinator_link.hpp"

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include <kj/exception.h>
#include <spdlog/spdlog.h>
#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/api/responses.hpp"
#include "actors/node/core/lease.hpp"
#include "actors/node/lease_file.hpp"
#include "actors/node/port_probe.hpp"
#include "actors/protocol/atoms.hpp"
#include "actors/protocol/membership_port.hpp"
#include "actors/protocol/node.hpp"
#include "messages/api.capnp.h"
#include "messages/cluster.capnp.h"
#include "messages/codec/flat.hpp"

namespace caldera {
namespace {

using namespace std::chrono_literals;

enum class LinkState { Unconnected, Connecting, Registering, Running };

struct Forwarded {
  caf::response_promise rp;  // the client bridge's request
  std::string request;
};

// Reconnect attempts start fast (a coordinator restarting takes a moment) and back off to this:
// a worker is back within about a second of the coordinator's return (each wait is drawn between
// half and all of the backoff, so that the workers do not come all at once).
constexpr std::chrono::milliseconds kFirstRetry{100};
constexpr std::chrono::milliseconds kMaxRetry{1000};
// A coordinator that refused the node (a wrong token, a name not in its config) is asked less
// often: an operator has to act first.
constexpr std::chrono::milliseconds kRefusedRetry{5000};
// How long a refused connection is waited for, after CAF's connect failed: a refusal comes at
// once, and anything slower is not one.
constexpr std::chrono::milliseconds kProbeWait{100};
// Reports kept while a registration is answered; past this many (a registration of minutes) the
// rest are dropped: the next registration carries every pod's status anyway.
constexpr size_t kMaxHeldReports = 100000;

struct LinkData {
  LinkData() : lease(0) {}
  CoordinatorLinkEnv env;
  Lease lease;
  std::minstd_rand jitter{std::random_device{}()};
  LinkState state = LinkState::Unconnected;
  protocol::node node;
  uint64_t incarnation = 0;
  protocol::membership_port membership;  // the coordinator's, over the network
  caf::actor reports;                    // the report port: takes the node's pod reports
  caf::actor router;                     // the API router: takes forwarded client requests
  uint64_t generation = 0;  // of the current connection: older callbacks and timers are stale
  std::chrono::milliseconds backoff = kFirstRetry;
  caf::timestamp last_answer;  // the membership's last answer to a heartbeat
  bool said_waiting = false;   // "waiting for the coordinator" is logged once per outage
  std::map<uint64_t, Forwarded> forwarded;  // client requests the coordinator has not answered
  // Reports made while a registration is on its way: its snapshot may be older than they are.
  std::vector<std::string> held_reports;
  uint64_t next_forward = 0;
  // Client bridges with watches through this link: told when the coordinator is lost, since
  // the watches it served are gone with it. A coordinator that was only out of reach may still
  // hold them: after the next registration it is told to forget them (`forget`).
  std::vector<caf::actor> watching_bridges, forget;
  static inline const char* name = "coordinator_link";
};

using LinkSelf = caf::stateful_actor<LinkData>;

void connect(LinkSelf* self);
void fail_forwarded(LinkSelf* self, const std::string& why);

void retry_later(LinkSelf* self, const std::string& why) {
  auto& st = self->state;
  st.state = LinkState::Unconnected;
  st.held_reports.clear();  // the next registration's snapshot has them
  fail_forwarded(self, "the coordinator was lost (" + why + ") while it had the request; retry");
  if (st.membership) self->demonitor(st.membership.address());
  st.membership = nullptr;
  st.reports = nullptr;
  st.router = nullptr;
  auto gen = ++st.generation;
  if (!st.said_waiting) {
    spdlog::warn("node={} coordinator at {}:{} unreachable ({}); retrying with backoff",
                 st.env.node_name, st.env.host, st.env.port, why);
    st.said_waiting = true;
  } else {
    spdlog::debug("node={} coordinator unreachable ({}); next try in {}ms", st.env.node_name, why,
                  st.backoff.count());
  }
  auto half = st.backoff.count() / 2;
  auto wait = std::chrono::milliseconds(
      half + std::uniform_int_distribution<int64_t>(0, st.backoff.count() - half)(st.jitter));
  self->delayed_send(self, wait, caf::connect_atom::value, gen);
  st.backoff = std::max(st.backoff, std::min(st.backoff * 2, kMaxRetry));
}

// How long the coordinator may be silent before the link gives up on the connection: a whole
// lease (a late answer still renews it), or the heartbeat timeout without one.
std::chrono::milliseconds patience(const CoordinatorLinkEnv& env) {
  return std::max(env.heartbeat_timeout, env.lease_timeout);
}

// The coordinator answered something sent at `sent_ms` (monotonic): the node's lease runs on.
void renew(LinkSelf* self, int64_t sent_ms) {
  auto& st = self->state;
  if (st.lease.timeout_ms() <= 0 || !st.node) return;
  if (st.lease.renew(sent_ms))
    self->send(caf::actor_cast<caf::actor>(st.node), lease_atom::value, st.lease.deadline_ms());
}

void schedule_heartbeat(LinkSelf* self) {
  auto& st = self->state;
  self->delayed_send(self, st.env.heartbeat_interval, heartbeat_atom::value, st.generation);
}

void do_register(LinkSelf* self) {
  auto& st = self->state;
  st.state = LinkState::Registering;
  auto gen = st.generation;
  // Fresh bytes: the pods as they are now, not as they were at the node's start.
  self->request(st.node, 10s, register_atom::value)
      .then(
          [=](const std::string& bytes) {
            auto& st = self->state;
            if (gen != st.generation) return;
            const auto sent = lease_file::monotonic_ms();
            self->request(st.membership, st.env.heartbeat_timeout, register_atom::value, bytes,
                          caf::actor_cast<caf::actor>(st.node))
                .then(
                    [=](const std::string& refusal, const caf::actor& reports,
                        const caf::actor& router, const std::string& cluster,
                        uint64_t cluster_generation) {
                      auto& st = self->state;
                      if (gen != st.generation) return;
                      if (!refusal.empty()) {
                        spdlog::error("node={} refused by the coordinator: {}", st.env.node_name,
                                      refusal);
                        st.backoff = kRefusedRetry;
                        return retry_later(self, "refused: " + refusal);
                      }
                      // Before the lease: the node must know whose word it takes before it
                      // may take any.
                      self->send(caf::actor_cast<caf::actor>(st.node), identity_atom::value,
                                 cluster, cluster_generation, st.membership.node());
                      renew(self, sent);
                      st.reports = reports;
                      st.router = router;
                      st.state = LinkState::Running;
                      // Stream 0: every watch of the bridge, before any new one is passed on.
                      for (auto& bridge : st.forget)
                        self->send(st.router, unwatch_atom::value, bridge, uint64_t{0});
                      st.forget.clear();
                      // A halted coordinator takes none (its outbox keeps them for later).
                      if (st.reports)
                        for (auto& report : st.held_reports)
                          self->send(st.reports, report_atom::value, std::move(report));
                      st.held_reports.clear();
                      st.backoff = kFirstRetry;
                      st.said_waiting = false;
                      st.last_answer = caf::make_timestamp();
                      spdlog::info("node={} registered with the coordinator at {}:{}",
                                   st.env.node_name, st.env.host, st.env.port);
                      schedule_heartbeat(self);
                    },
                    [=](caf::error& e) {
                      if (gen != self->state.generation) return;
                      retry_later(self, "registration: " + self->system().render(e));
                    });
          },
          [=](caf::error& e) {
            if (gen != self->state.generation) return;
            retry_later(self, "the node did not answer: " + self->system().render(e));
          });
}

void connect(LinkSelf* self) {
  auto& st = self->state;
  st.state = LinkState::Connecting;
  auto gen = st.generation;
  const auto attempt = lease_file::monotonic_ms();
  auto mm = self->system().middleman().actor_handle();
  self->request(mm, st.env.heartbeat_timeout + 3s, caf::connect_atom::value, st.env.host,
                st.env.port)
      .then(
          [=](const caf::node_id&, caf::strong_actor_ptr& ptr, const std::set<std::string>& ifs) {
            auto& st = self->state;
            if (gen != st.generation) return;
            if (!ptr) return retry_later(self, "no actor published on the cluster port");
            if (!self->system().assignable<protocol::membership_port>(ifs))
              return retry_later(self,
                                 "the actor on the cluster port is not a caldera coordinator's");
            st.membership = caf::actor_cast<protocol::membership_port>(std::move(ptr));
            self->monitor(st.membership);
            do_register(self);
          },
          [=](caf::error& e) {
            auto& st = self->state;
            if (gen != st.generation) return;
            // Nothing listens on the coordinator's port: no coordinator runs, so none replaces
            // this node's pods, and one that starts waits a whole lease before it does.
            if (e == caf::sec::cannot_connect_to_node && st.lease.timeout_ms() > 0 &&
                connection_refused(st.env.host, st.env.port, kProbeWait))
              renew(self, attempt);
            retry_later(self, self->system().render(e));
          });
}

std::string unavailable(const std::string& request, const std::string& why);

// Not delegated: the answer comes back to this actor over the link's own connection (a response
// delegated across processes never reached the bridge). CAF fails no request when the peer's
// process goes away, so the link answers those in flight itself (fail_forwarded).
template <class... Ts>
void forward(LinkSelf* self, caf::response_promise rp, const std::string& bytes, Ts&&... xs) {
  auto& st = self->state;
  auto key = ++st.next_forward;
  st.forwarded.emplace(key, Forwarded{rp, bytes});
  self->request(st.router, caf::infinite, std::forward<Ts>(xs)...)
      .then(
          [=](std::string& response) {
            auto it = self->state.forwarded.find(key);
            if (it == self->state.forwarded.end()) return;
            it->second.rp.deliver(std::move(response));
            self->state.forwarded.erase(it);
          },
          [=](caf::error& e) {
            auto it = self->state.forwarded.find(key);
            if (it == self->state.forwarded.end()) return;
            it->second.rp.deliver(unavailable(
                it->second.request,
                "the coordinator did not answer: " + self->system().render(e) + "; retry"));
            self->state.forwarded.erase(it);
          });
}

void fail_forwarded(LinkSelf* self, const std::string& why) {
  for (auto& [key, f] : self->state.forwarded) f.rp.deliver(unavailable(f.request, why));
  self->state.forwarded.clear();
  auto& st = self->state;
  for (auto& bridge : st.watching_bridges) {
    self->send(bridge, unwatch_atom::value);
    if (std::find(st.forget.begin(), st.forget.end(), bridge) == st.forget.end())
      st.forget.push_back(bridge);
  }
  st.watching_bridges.clear();
}

std::string unavailable(const std::string& request, const std::string& why) {
  uint64_t id = 0;
  try {
    FlatReader reader(request);
    id = reader.root<api::Request>().getId();
  } catch (const kj::Exception&) {
    // The coordinator would have said it is malformed; without it, the id is unknown.
  }
  return error_response(id, api::Error::Code::UNAVAILABLE, why);
}

caf::behavior coordinator_link(LinkSelf* self, CoordinatorLinkEnv env) {
  self->state.env = std::move(env);
  self->state.lease = Lease(self->state.env.lease_timeout.count());
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& st = self->state;
    // The very proxy: a late down message of an earlier connection's proxy (same address) must
    // not end the current one.
    if (st.membership &&
        caf::actor_cast<caf::actor_control_block*>(st.membership) == dm.source.get())
      retry_later(self, "connection lost: " + self->system().render(dm.reason));
  });
  return {
      [=](register_atom, const std::string& bytes, const caf::actor& node) {
        auto& st = self->state;
        st.node = caf::actor_cast<protocol::node>(node);
        try {
          FlatReader reader(bytes);
          st.incarnation = reader.root<cluster::NodeRegistration>().getIncarnation();
        } catch (const kj::Exception& e) {
          spdlog::error("node={} malformed registration: {}", st.env.node_name,
                        e.getDescription().cStr());
          return;
        }
        if (st.state == LinkState::Unconnected) {
          ++st.generation;
          connect(self);
        }
      },
      [=](caf::connect_atom, uint64_t gen) {
        if (gen != self->state.generation || self->state.state != LinkState::Unconnected) return;
        connect(self);
      },
      [=](heartbeat_atom, uint64_t gen) {
        auto& st = self->state;
        if (gen != st.generation || st.state != LinkState::Running) return;
        // A coordinator that is merely slow (paused, overloaded) is waited for while the lease
        // holds: its late answers to the heartbeats sent meanwhile renew it.
        auto silent = caf::make_timestamp() - st.last_answer;
        if (silent > patience(st.env)) {
          spdlog::warn("node={} coordinator lost: no heartbeat answer for {}ms", st.env.node_name,
                       std::chrono::duration_cast<std::chrono::milliseconds>(silent).count());
          return retry_later(self, "no heartbeat answer");
        }
        const auto sent = lease_file::monotonic_ms();
        self->request(st.membership, patience(st.env), heartbeat_atom::value, st.env.node_name,
                      st.incarnation)
            .then(
                [=](bool ok) {
                  auto& st = self->state;
                  if (gen != st.generation || st.state != LinkState::Running) return;
                  st.last_answer = caf::make_timestamp();
                  if (ok) renew(self, sent);
                  if (!ok) {
                    spdlog::info("node={} the coordinator asks for a new registration",
                                 st.env.node_name);
                    ++st.generation;  // this heartbeat chain ends; the registration starts one
                    do_register(self);
                  }
                },
                [](caf::error&) {
                  // The next tick sees how long the coordinator has been silent.
                });
        schedule_heartbeat(self);
      },
      [=](report_atom a, const std::string& bytes) {
        auto& st = self->state;
        if (st.state == LinkState::Running && st.reports)
          self->send(st.reports, a, bytes);
        else if (st.state == LinkState::Registering && st.held_reports.size() < kMaxHeldReports)
          st.held_reports.push_back(bytes);
      },
      [=](api_atom a, const std::string& bytes) {
        auto& st = self->state;
        auto rp = self->make_response_promise();
        if (st.state != LinkState::Running)
          rp.deliver(unavailable(bytes, "the coordinator cannot be reached from node " +
                                            st.env.node_name + "; retry"));
        else
          forward(self, std::move(rp), bytes, a, bytes);
      },
      [=](watch_atom a, const std::string& bytes, uint64_t stream, const caf::actor& bridge) {
        auto& st = self->state;
        auto rp = self->make_response_promise();
        if (st.state != LinkState::Running) {
          rp.deliver(unavailable(bytes, "the coordinator cannot be reached from node " +
                                            st.env.node_name + "; retry"));
          return;
        }
        if (std::find(st.watching_bridges.begin(), st.watching_bridges.end(), bridge) ==
            st.watching_bridges.end())
          st.watching_bridges.push_back(bridge);
        forward(self, std::move(rp), bytes, a, bytes, stream, bridge);
      },
      [=](unwatch_atom a, const caf::actor& bridge, uint64_t stream) {
        if (self->state.state == LinkState::Running)
          self->send(self->state.router, a, bridge, stream);
      },
  };
}

}  // namespace

caf::actor spawn_coordinator_link(caf::actor_system& sys, CoordinatorLinkEnv env) {
  return sys.spawn(coordinator_link, std::move(env));
}

}  // namespace caldera
