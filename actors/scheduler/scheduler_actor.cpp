#include "actors/scheduler/scheduler_actor.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/protocol/atoms.hpp"
#include "actors/protocol/job.hpp"
#include "actors/protocol/local_types.hpp"
#include "actors/protocol/membership.hpp"
#include "actors/scheduler/core/reservation.hpp"
#include "messages/cluster.capnp.h"
#include "messages/codec/codec.hpp"
#include "messages/codec/flat.hpp"
#include "messages/codec/pod_kill.hpp"

namespace caldera {
namespace {

using namespace std::chrono_literals;

// How long nodes have to answer a prepare; a reservation they hold lasts longer, so that the
// job actor can make the binding durable and launch before it expires.
constexpr auto kPrepareTimeout = 2s;
constexpr int64_t kReservationTtlMs = 30000;
// A gang whose reservation failed waits this long before the next session tries it again.
constexpr auto kRetryAfterCancel = 500ms;
// How long a preempted pod of a job that never asked this coordinator (its pods were adopted
// after a restart) has between SIGTERM and SIGKILL; other jobs kill with their pods' own.
constexpr int64_t kEvictionGraceMs = 10000;

// How often a waiting gang's job hears a new reason at most: the reason counts nodes, which
// change with the pods that come and go, and each new reason is a durable write of the job. The
// first reason goes at once; a newer one within the interval waits for its end (the latest wins).
constexpr auto kReasonInterval = 1s;
using tell_atom = caf::atom_constant<caf::atom("tellwhy")>;

// The scheduler's own wake-up for prepares past kPrepareTimeout: one timer for all of them, as a
// timeout per request would cost CAF's clock a push for every prepare.
using expire_atom = caf::atom_constant<caf::atom("prepexpire")>;

struct PendingGang {
  GangReservation reservation;
  protocol::job requester;
  std::chrono::steady_clock::time_point started;
};

// Prepare-to-bound times of committed gangs, for the summary logged at exit (the cluster
// benchmark reads it): the latest ones, at most this many.
constexpr size_t kKeptCommitTimes = 100000;

struct SchedulerState {
  Placer placer;
  std::shared_ptr<Metrics> metrics;  // session times; may be null
  protocol::membership
      membership;  // the way to the nodes; unset: bindings need no reservation (tests)
  std::map<std::string, GangRequest> asked;   // job key -> its latest request, to queue again
  std::map<uint64_t, PendingGang> reserving;  // gangs whose nodes are asked to reserve
  uint64_t next_reservation = 0;
  bool retry_armed = false;
  bool expiry_armed = false;    // an expire_atom is on its way
  bool session_wanted = false;  // a session_atom is on its way
  std::vector<double> commit_ms;
  uint64_t committed = 0, cancelled = 0;
  std::map<std::string, protocol::job> requesters;  // job key -> the job waiting for bindings
  // job key -> the unplaced message sent last, and when: a session runs on every release, and
  // the same message again would only cost the job actor an event.
  struct Told {
    std::string why;
    bool enqueued = true;
    std::chrono::steady_clock::time_point at = {};
  };
  std::map<std::string, Told> told;
  std::map<std::string, Told> held_reasons;  // job key -> a newer one, not yet due
  bool tell_armed = false;                   // a tell_atom is on its way
  static inline const char* name = "scheduler";
};

using SchedSelf = caf::stateful_actor<SchedulerState>;

void run_session(SchedSelf* self);

// The job waits again later, or was placed: whatever it hears next is news.
void forget_reason(SchedSelf* self, const std::string& key) {
  self->state.told.erase(key);
  self->state.held_reasons.erase(key);
}

// Tells the job `key` waits for why, and whether its pod group is admitted, unless it was told
// so already; a change within kReasonInterval of the last one waits for the interval's end.
void tell_reason(SchedSelf* self, const std::string& key, std::string why, bool enqueued) {
  auto& st = self->state;
  auto requester = st.requesters.find(key);
  if (requester == st.requesters.end()) return;
  const auto now = std::chrono::steady_clock::now();
  auto told = st.told.find(key);
  if (told != st.told.end() && told->second.why == why && told->second.enqueued == enqueued) {
    st.held_reasons.erase(key);
    return;
  }
  if (told == st.told.end() || now - told->second.at >= kReasonInterval) {
    st.told[key] = {why, enqueued, now};
    st.held_reasons.erase(key);
    self->send(requester->second, unsched_atom::value, std::move(why), enqueued);
    return;
  }
  st.held_reasons[key] = {std::move(why), enqueued};
  if (st.tell_armed) return;
  st.tell_armed = true;
  self->delayed_send(self, told->second.at + kReasonInterval - now, tell_atom::value);
}

void fill_reservation(cluster::PodReservation::Builder r, const std::string& gang,
                      const std::vector<Binding>& pods) {
  r.setGang(gang);
  r.setTtlMs(kReservationTtlMs);
  auto list = r.initPods(static_cast<unsigned>(pods.size()));
  for (unsigned i = 0; i < pods.size(); ++i) {
    list[i].setUid(pods[i].uid);
    encode(pods[i].requests, list[i].initRequests(pods[i].requests.values.size()));
  }
}

std::string reservation_bytes(const std::string& gang, const std::vector<Binding>& pods) {
  SmallMessageBuilder b;
  fill_reservation(b.initRoot<cluster::PodReservation>(), gang, pods);
  return to_bytes(b);
}

// A gang whose reservation failed is tried again by a session a little later.
void want_retry(SchedSelf* self) {
  auto& st = self->state;
  if (st.retry_armed) return;
  st.retry_armed = true;
  self->delayed_send(self, kRetryAfterCancel, retry_atom::value);
}

void finish_reservation(SchedSelf* self, uint64_t id) {
  auto& st = self->state;
  auto it = st.reserving.find(id);
  if (it == st.reserving.end()) return;
  auto& g = it->second;
  const auto& r = g.reservation;
  if (r.outcome() == ReservationOutcome::Pending) return;
  auto current = st.requesters.find(r.job_key());
  const bool wanted = current != st.requesters.end() && current->second == g.requester;
  std::string gone_node;
  for (const auto& b : r.bindings())
    if (!st.placer.ready(b.node)) gone_node = b.node;
  if (r.outcome() == ReservationOutcome::Commit && (!wanted || !gone_node.empty())) {
    // Confirmed, but the job was deleted (or replaced) meanwhile, or a node of the gang went
    // NotReady after it confirmed: nothing is bound, every node lets its reservation go.
    auto by_node = r.by_node();
    for (const auto& [node, pods] : by_node)
      self->send(st.membership, cancel_atom::value, node, reservation_bytes(r.job_key(), pods));
    for (const auto& b : r.bindings()) st.placer.release(b.uid);
    ++st.cancelled;
    st.reserving.erase(it);
    if (wanted) {
      spdlog::info("job={} gang not bound: node {} is not Ready", r.job_key(), gone_node);
      auto asked = st.asked.find(r.job_key());
      if (asked != st.asked.end()) st.placer.request(asked->second, true);  // it was admitted
      want_retry(self);
    }
    return;
  }
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
  // It was admitted, and stays so. A job replaced meanwhile has its own request queued already.
  if (wanted && asked != st.asked.end()) st.placer.request(asked->second, true);
  self->send(g.requester, unsched_atom::value, r.why(), true);
  forget_reason(self, r.job_key());
  st.reserving.erase(it);
  want_retry(self);
}

// DESIGN rule 6: a gang's pods are bound only once every node involved has reserved them.
// Returns the reservation's id; its prepares go out with the session's others (send_prepares).
uint64_t open_reservation(SchedSelf* self, const std::string& key, std::vector<Binding> list,
                          const protocol::job& requester) {
  auto& st = self->state;
  auto id = ++st.next_reservation;
  st.reserving.emplace(id, PendingGang{GangReservation(key, std::move(list)), requester,
                                       std::chrono::steady_clock::now()});
  return id;
}

// Arms the wake-up for the oldest reservation's prepare timeout, unless one is on its way.
void arm_expiry(SchedSelf* self) {
  auto& st = self->state;
  if (st.expiry_armed || st.reserving.empty()) return;
  auto oldest = st.reserving.begin()->second.started;  // ids rise with time
  auto due = oldest + kPrepareTimeout - std::chrono::steady_clock::now();
  st.expiry_armed = true;
  self->delayed_send(self, std::max<std::chrono::steady_clock::duration>(due, 10ms),
                     expire_atom::value);
}

// Reservations whose nodes have not all answered within kPrepareTimeout: the silent ones count
// as refusals (a later answer finds the reservation gone).
void expire_prepares(SchedSelf* self) {
  auto& st = self->state;
  st.expiry_armed = false;
  const auto now = std::chrono::steady_clock::now();
  std::vector<uint64_t> expired;
  for (const auto& [id, g] : st.reserving) {
    if (g.started + kPrepareTimeout > now) break;
    expired.push_back(id);
  }
  for (auto id : expired) {
    auto g = st.reserving.find(id);
    if (g == st.reserving.end()) continue;
    g->second.reservation.timed_out();
    finish_reservation(self, id);
  }
  arm_expiry(self);
}

// One prepare per node for all the gangs a session placed there, not one per gang: under load a
// session places many, and the node answers each on its own.
void send_prepares(SchedSelf* self, const std::map<std::string, std::vector<uint64_t>>& asks) {
  auto& st = self->state;
  for (const auto& [node, ids] : asks) {
    SmallMessageBuilder b;
    auto gangs =
        b.initRoot<cluster::PodReservations>().initGangs(static_cast<unsigned>(ids.size()));
    for (unsigned i = 0; i < ids.size(); ++i) {
      const auto& r = st.reserving.at(ids[i]).reservation;
      fill_reservation(gangs[i], r.job_key(), r.by_node()[node]);
    }
    auto answer = [=](uint64_t id, const std::function<void(GangReservation&)>& f) {
      auto g = self->state.reserving.find(id);
      if (g == self->state.reserving.end()) return;
      f(g->second.reservation);
      finish_reservation(self, id);
    };
    // No timeout of its own (expire_prepares times prepares out, with one timer for all): a
    // prepare a node that died never answers leaves only its small handler behind.
    self->request(st.membership, caf::infinite, prepare_atom::value, node, to_bytes(b))
        .then(
            [=](const std::vector<std::string>& verdicts) {
              for (size_t i = 0; i < ids.size(); ++i)
                answer(ids[i], [&](GangReservation& r) {
                  if (i >= verdicts.size())
                    r.refused(node, "no verdict for this gang");
                  else if (verdicts[i].empty())
                    r.confirmed(node);
                  else
                    r.refused(node, verdicts[i]);
                });
            },
            [=](caf::error& e) {
              for (auto id : ids)
                answer(id, [&](GangReservation& r) { r.refused(node, self->system().render(e)); });
            });
  }
  arm_expiry(self);
}

// Sessions are coalesced: a change asks for one, which runs once the messages already in the
// mailbox are handled, so that many submissions arriving together are decided in one session
// (and their nodes asked in one prepare each), never one session per message.
void want_session(SchedSelf* self) {
  auto& st = self->state;
  if (st.session_wanted) return;
  st.session_wanted = true;
  self->send(self, session_atom::value);
}

// A victim of preemption or reclaim is killed on its node with the eviction's reason: it ends
// Failed, reason Preempted or Reclaimed, and its job hears PodEvicted. Its room is free once it
// has ended (its job releases it), and the gang it made room for is bound then.
void evict(SchedSelf* self, const Eviction& e) {
  auto& st = self->state;
  const bool reclaimed = e.reason == kReclaimed;
  const auto why =
      reclaimed ? "reclaimed for job " + e.preemptor + ", whose queue holds less than its share"
                : "preempted by job " + e.preemptor + " of higher priority";
  spdlog::info("job={} pod={} node={} {} by job={}", e.job_key, e.uid, e.node,
               reclaimed ? "reclaimed" : "preempted", e.preemptor);
  // Its job ends it, on its node or, not launched yet, at once: the launch and the kill go the
  // same way, in order. A job that never asked this coordinator (its pods adopted after a
  // restart) is reached through the node.
  if (auto job = st.requesters.find(e.job_key); job != st.requesters.end()) {
    self->send(job->second, evict_atom::value, e.uid, e.reason, why);
    return;
  }
  if (!st.membership) return;  // tests without nodes
  self->send(st.membership, kill_atom::value, e.node,
             pod_kill_bytes(e.uid, kEvictionGraceMs, why, e.reason));
}

// One scheduling session: place what fits, reserve each placed gang on its nodes (bound once
// they all confirm), and tell the job actors whose gangs do not fit why not.
void run_session(SchedSelf* self) {
  auto& st = self->state;
  auto session = st.placer.session();
  for (auto& [key, why] : session.unplaced)
    tell_reason(self, key, std::move(why), !session.not_enqueued.count(key));
  for (const auto& e : session.evictions) evict(self, e);
  if (session.bindings.empty()) return;
  std::map<std::string, std::vector<uint64_t>> asks;  // node -> the gangs it is asked to reserve
  std::map<std::string, std::vector<Binding>> by_job;
  for (auto& b : session.bindings) by_job[b.job_key].push_back(std::move(b));
  for (auto& [key, list] : by_job) {
    forget_reason(self, key);  // placed: if it waits again later, that is news
    auto it = self->state.requesters.find(key);
    if (it == self->state.requesters.end()) {
      for (const auto& b : list) self->state.placer.release(b.uid);
      continue;
    }
    if (!st.membership) {
      self->send(it->second, placed_atom::value, std::move(list));
      continue;
    }
    auto id = open_reservation(self, key, std::move(list), it->second);
    for (const auto& [node, pods] : st.reserving.at(id).reservation.by_node())
      asks[node].push_back(id);
  }
  send_prepares(self, asks);
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  auto at = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  std::nth_element(v.begin(), v.begin() + static_cast<long>(at), v.end());
  return v[at];
}

caf::behavior scheduler(caf::stateful_actor<SchedulerState>* self, std::shared_ptr<Metrics> metrics,
                        sched::Policy policy, NodeTaints taints) {
  self->state.metrics = std::move(metrics);
  self->state.placer = Placer(std::move(policy));
  self->state.placer.set_node_taints(std::move(taints));
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
      [=](session_atom) {
        self->state.session_wanted = false;
        const auto started = std::chrono::steady_clock::now();
        run_session(self);
        if (self->state.metrics)
          self->state.metrics->scheduler_session(std::chrono::steady_clock::now() - started);
      },
      [=](membership_atom, const caf::actor& membership) {
        self->state.membership = caf::actor_cast<protocol::membership>(membership);
      },
      [=](retry_atom) {
        self->state.retry_armed = false;
        want_session(self);
      },
      [=](expire_atom) { expire_prepares(self); },
      [=](tell_atom) {
        auto& st = self->state;
        st.tell_armed = false;
        auto due = std::move(st.held_reasons);
        st.held_reasons.clear();
        for (auto& [key, held] : due) tell_reason(self, key, std::move(held.why), held.enqueued);
      },
      [=](place_atom, GangRequest& r) {
        auto key = r.job_key;
        bool cancel = r.pods.empty();
        if (cancel)
          self->state.asked.erase(key);
        else
          self->state.asked[key] = r;
        self->state.requesters[key] = caf::actor_cast<protocol::job>(self->current_sender());
        self->state.placer.request(std::move(r));
        // A new request may follow a restart that reset the job's reason: say why again.
        forget_reason(self, key);
        if (cancel) self->state.requesters.erase(key);
        want_session(self);
      },
      [=](forget_atom, const std::string& key) {
        auto& st = self->state;
        if (st.asked.count(key) || st.requesters.count(key)) {
          st.asked.erase(key);
          st.requesters.erase(key);
          // A session only if the cancel took a gang out of the queue (others may fit now).
          const size_t waiting = st.placer.waiting();
          st.placer.request(GangRequest{key, {}, 0, {}});
          forget_reason(self, key);
          if (st.placer.waiting() != waiting) want_session(self);
        }
        return caf::ok_atom::value;
      },
      [=](reserve_atom, const std::string& key, const std::string& uid, const std::string& node,
          const ResourceList& requests, const PodGroupInfo& group) {
        self->state.placer.reserve(key, uid, node, requests, group);
      },
      [=](queues_atom, const std::vector<Queue>& queues,
          const std::vector<PriorityClass>& classes) {
        self->state.placer.set_queues(queues, classes);
        want_session(self);
      },
      [=](queues_atom) { return self->state.placer.queue_status(); },
      [=](release_atom, const std::vector<std::string>& uids) {
        for (const auto& uid : uids) self->state.placer.release(uid);
        want_session(self);
      },
      [=](capacity_atom, const std::string& node, const ResourceList& capacity, bool ready,
          const std::string& host_ip, const std::map<std::string, std::string>& labels) {
        self->state.placer.upsert_node(node, capacity, ready, host_ip, labels);
        want_session(self);
      },
      [=](nodes_atom) { return self->state.placer.nodes(); },
  };
}

}  // namespace

protocol::scheduler spawn_scheduler(caf::actor_system& sys, std::shared_ptr<Metrics> metrics,
                                    sched::Policy policy, NodeTaints taints) {
  // Dynamically typed inside (it sends to job actors and the membership as itself); its handle
  // is typed, so what its senders send is checked.
  return caf::actor_cast<protocol::scheduler>(
      sys.spawn(scheduler, std::move(metrics), std::move(policy), std::move(taints)));
}

}  // namespace caldera
