#include "actors/scheduler/scheduler_actor.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "actors/local_types.hpp"
#include "actors/scheduler/core/reservation.hpp"
#include "messages/cluster.capnp.h"
#include "messages/codec.hpp"
#include "messages/flat.hpp"

namespace caldera {
namespace {

using namespace std::chrono_literals;

// How long nodes have to answer a prepare; a reservation they hold lasts longer, so that the
// job actor can make the binding durable and launch before it expires.
constexpr auto kPrepareTimeout = 2s;
constexpr int64_t kReservationTtlMs = 30000;
// A gang whose reservation failed waits this long before the next session tries it again.
constexpr auto kRetryAfterCancel = 500ms;

struct PendingGang {
  GangReservation reservation;
  caf::actor requester;
  std::chrono::steady_clock::time_point started;
};

// Prepare-to-bound times of committed gangs, for the summary logged at exit (the cluster
// benchmark reads it): the latest ones, at most this many.
constexpr size_t kKeptCommitTimes = 100000;

struct SchedulerState {
  Placer placer;
  caf::actor membership;  // the way to the nodes; unset: bindings need no reservation (tests)
  std::map<std::string, GangRequest> asked;   // job key -> its latest request, to queue again
  std::map<uint64_t, PendingGang> reserving;  // gangs whose nodes are asked to reserve
  uint64_t next_reservation = 0;
  bool retry_armed = false;
  std::vector<double> commit_ms;
  uint64_t committed = 0, cancelled = 0;
  std::map<std::string, caf::actor> requesters;  // job key -> the job actor waiting for bindings
  // job key -> the unplaced message sent last: a session runs on every release, and the same
  // message again would only cost the job actor an event.
  std::map<std::string, std::string> told;
  static inline const char* name = "scheduler";
};

using SchedSelf = caf::stateful_actor<SchedulerState>;

void run_session(SchedSelf* self);

std::string reservation_bytes(const std::string& gang, const std::vector<Binding>& pods) {
  SmallMessageBuilder b;
  auto r = b.initRoot<cluster::PodReservation>();
  r.setGang(gang);
  r.setTtlMs(kReservationTtlMs);
  auto list = r.initPods(static_cast<unsigned>(pods.size()));
  for (unsigned i = 0; i < pods.size(); ++i) {
    list[i].setUid(pods[i].uid);
    encode(pods[i].requests, list[i].initRequests(pods[i].requests.values.size()));
  }
  return to_bytes(b);
}

void finish_reservation(SchedSelf* self, uint64_t id) {
  auto& st = self->state;
  auto it = st.reserving.find(id);
  if (it == st.reserving.end()) return;
  auto& g = it->second;
  const auto& r = g.reservation;
  if (r.outcome() == ReservationOutcome::Pending) return;
  if (r.outcome() == ReservationOutcome::Commit) {
    ++st.committed;
    if (st.commit_ms.size() < kKeptCommitTimes)
      st.commit_ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - g.started)
              .count());
    self->send(g.requester, placed_atom::value, r.bindings());
    st.reserving.erase(it);
    return;
  }
  // Cancel: every node that may hold a reservation lets it go, the pods' room is free in the
  // placer again, and the gang waits in the queue for a later session.
  auto by_node = r.by_node();
  for (const auto& node : r.to_release())
    self->send(st.membership, cancel_atom::value, node,
               reservation_bytes(r.job_key(), by_node[node]));
  for (const auto& b : r.bindings()) st.placer.release(b.uid);
  ++st.cancelled;
  spdlog::info("job={} gang not bound: {}", r.job_key(), r.why());
  auto asked = st.asked.find(r.job_key());
  if (asked != st.asked.end()) st.placer.request(asked->second);
  self->send(g.requester, unsched_atom::value, r.why());
  st.told.erase(r.job_key());
  st.reserving.erase(it);
  if (!st.retry_armed) {
    st.retry_armed = true;
    self->delayed_send(self, kRetryAfterCancel, retry_atom::value);
  }
}

// DESIGN rule 6: the gang's pods are bound only once every node involved has reserved them.
void start_reservation(SchedSelf* self, const std::string& key, std::vector<Binding> list,
                       const caf::actor& requester) {
  auto& st = self->state;
  auto id = ++st.next_reservation;
  auto [it, _] = st.reserving.emplace(id, PendingGang{GangReservation(key, std::move(list)),
                                                      requester, std::chrono::steady_clock::now()});
  for (auto& [node, pods] : it->second.reservation.by_node()) {
    self->request(st.membership, kPrepareTimeout, prepare_atom::value, node,
                  reservation_bytes(key, pods))
        .then(
            [=](const std::string& why) {
              auto g = self->state.reserving.find(id);
              if (g == self->state.reserving.end()) return;
              if (why.empty())
                g->second.reservation.confirmed(node);
              else
                g->second.reservation.refused(node, why);
              finish_reservation(self, id);
            },
            [=](caf::error& e) {
              auto g = self->state.reserving.find(id);
              if (g == self->state.reserving.end()) return;
              if (e == caf::sec::request_timeout)
                g->second.reservation.timed_out();
              else
                g->second.reservation.refused(node, self->system().render(e));
              finish_reservation(self, id);
            });
  }
}

// One scheduling session: place what fits, reserve each placed gang on its nodes (bound once
// they all confirm), and tell the job actors whose gangs do not fit why not.
void run_session(SchedSelf* self) {
  auto& st = self->state;
  auto session = st.placer.session();
  for (auto& [key, why] : session.unplaced) {
    auto it = st.requesters.find(key);
    if (it == st.requesters.end()) continue;
    auto& told = st.told[key];
    if (told == why) continue;
    told = why;
    self->send(it->second, unsched_atom::value, std::move(why));
  }
  if (session.bindings.empty()) return;
  std::map<std::string, std::vector<Binding>> by_job;
  for (auto& b : session.bindings) by_job[b.job_key].push_back(std::move(b));
  for (auto& [key, list] : by_job) {
    st.told.erase(key);  // placed: if it waits again later, that is news
    auto it = self->state.requesters.find(key);
    if (it == self->state.requesters.end()) {
      for (const auto& b : list) self->state.placer.release(b.uid);
      continue;
    }
    if (!st.membership) {
      self->send(it->second, placed_atom::value, std::move(list));
      continue;
    }
    start_reservation(self, key, std::move(list), it->second);
  }
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  auto at = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  std::nth_element(v.begin(), v.begin() + static_cast<long>(at), v.end());
  return v[at];
}

caf::behavior scheduler(caf::stateful_actor<SchedulerState>* self) {
  self->set_exit_handler([=](caf::exit_msg& msg) {
    const auto& st = self->state;
    if (st.committed + st.cancelled > 0)
      spdlog::info(
          "scheduler gangs_committed={} gangs_cancelled={} commit_ms_p50={:.2f} "
          "commit_ms_p99={:.2f}",
          st.committed, st.cancelled, percentile(st.commit_ms, 0.5),
          percentile(st.commit_ms, 0.99));
    self->quit(msg.reason);
  });
  return {
      [=](membership_atom, const caf::actor& membership) { self->state.membership = membership; },
      [=](retry_atom) {
        self->state.retry_armed = false;
        run_session(self);
      },
      [=](place_atom, GangRequest& r) {
        auto key = r.job_key;
        bool cancel = r.pods.empty();
        if (cancel)
          self->state.asked.erase(key);
        else
          self->state.asked[key] = r;
        self->state.requesters[key] = caf::actor_cast<caf::actor>(self->current_sender());
        self->state.placer.request(std::move(r));
        // A new request may follow a restart that reset the job's reason: say why again.
        self->state.told.erase(key);
        if (cancel) self->state.requesters.erase(key);
        run_session(self);
      },
      [=](reserve_atom, const std::string& key, const std::string& uid, const std::string& node,
          const ResourceList& requests) { self->state.placer.reserve(key, uid, node, requests); },
      [=](release_atom, const std::vector<std::string>& uids) {
        for (const auto& uid : uids) self->state.placer.release(uid);
        run_session(self);
      },
      [=](capacity_atom, const std::string& node, const ResourceList& capacity, bool ready,
          const std::string& host_ip) {
        self->state.placer.upsert_node(node, capacity, ready, host_ip);
        run_session(self);
      },
      [=](nodes_atom) { return self->state.placer.nodes(); },
  };
}

}  // namespace

caf::actor spawn_scheduler(caf::actor_system& sys) {
  return sys.spawn(scheduler);
}

}  // namespace caldera
