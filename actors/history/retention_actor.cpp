#include "actors/history/retention_actor.hpp"

#include <array>
#include <chrono>
#include <map>
#include <set>
#include <string>

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/job/job_record.hpp"
#include "actors/protocol/atoms.hpp"

namespace caldera {
namespace {

using tick_atom = caf::atom_constant<caf::atom("histtick")>;

// Deletes under way at once: each wakes a job from the store and removes its pods' records on
// their nodes, so retention never crowds out live work.
constexpr size_t kMaxInFlight = 64;

// A row the directory refused (its job has an actor, or cannot be read) is looked at again after
// this long; meanwhile the passes go past it, so that it holds up nothing behind it.
constexpr std::chrono::seconds kRefusedFor{10};

struct RetentionState {
  RetentionEnv env;
  std::set<std::string> in_flight;    // History rows the directory is deleting
  std::array<uint64_t, 2> deleted{};  // since the last log line, by PurgeReason
  std::string last_error;             // the last refusal logged, so a repeat is not
  // Rows refused, and until when they are passed over.
  std::map<std::string, std::chrono::steady_clock::time_point> refused;
};

using RetentionSelf = caf::stateful_actor<RetentionState>;

void recount(RetentionSelf* self) {
  auto& env = self->state.env;
  auto counted = env.store->count_with(Family::History, kFinishedJobsCounter);
  if (!counted) {
    spdlog::error("history: cannot count the settled jobs: {}", counted.error());
    return;
  }
  auto [rows, counter] = *counted;
  if (rows == counter) return;
  spdlog::warn("history: {} settled jobs are stored where the count said {}: corrected", rows,
               counter);
  // An addition, not a put: the writes since the snapshot added their own. The first pass
  // reads the count: it waits for the correction (this actor has a thread of its own).
  env.store->commit({counter_add(kFinishedJobsCounter, rows - counter)}, [](std::string error) {
    if (!error.empty()) spdlog::error("history: correcting the count failed: {}", error);
  });
  env.store->flush();
}

void log_deleted(RetentionSelf* self, int64_t kept) {
  auto& st = self->state;
  auto by_count = st.deleted[static_cast<size_t>(PurgeReason::Count)];
  auto by_age = st.deleted[static_cast<size_t>(PurgeReason::Age)];
  if (by_count + by_age == 0) return;
  spdlog::info("history: deleted {} settled jobs (maxFinishedJobs: {}, maxAge: {}), kept {}",
               by_count + by_age, by_count, by_age, kept);
  st.deleted = {};
}

void purge(RetentionSelf* self, const std::string& row, const std::string& uid,
           PurgeReason reason) {
  self->state.in_flight.insert(row);
  self->request(self->state.env.directory, std::chrono::seconds(60), purge_atom::value, row, uid)
      .then(
          [self, row, reason](const std::string& error) {
            auto& st = self->state;
            st.in_flight.erase(row);
            if (error.empty()) {
              ++st.deleted[static_cast<size_t>(reason)];
              if (st.env.metrics) st.env.metrics->history_deleted(to_string(reason), 1);
            } else if (error != kPurgedStale) {
              // Live again (a resume) is no failure: a later pass looks again.
              st.refused[row] = std::chrono::steady_clock::now() + kRefusedFor;
              if (error != st.last_error)
                spdlog::debug("history: row={} not deleted: {}", row, error);
              st.last_error = error;
            }
          },
          [self, row](caf::error& err) {
            self->state.in_flight.erase(row);
            spdlog::warn("history: deleting row={} failed: {}", row, self->system().render(err));
          });
}

void pass(RetentionSelf* self) {
  auto& st = self->state;
  auto counter = st.env.store->get(Family::Meta, kFinishedJobsCounter);
  const int64_t kept = counter ? counter_value(*counter) : 0;
  if (st.env.metrics) st.env.metrics->history_jobs(kept);
  log_deleted(self, kept);
  if (st.env.policy.max_finished_jobs == 0 && st.env.policy.max_age_ms == 0) return;
  RetentionPass plan(st.env.policy, kept, st.env.clock.now_ms());
  const auto now = std::chrono::steady_clock::now();
  std::erase_if(st.refused, [&](const auto& r) { return r.second <= now; });
  st.env.store->scan_from(Family::History, {}, [&](std::string_view k, std::string_view uid) {
    auto parsed = parse_history_key(k);
    const std::string row(k);
    // Not ours, or refused a moment ago: it stays, and the rows after it are looked at.
    if (!parsed || st.refused.count(row)) return true;
    auto reason = plan.next(parsed->first);
    if (!reason) return false;
    if (st.in_flight.count(row)) return true;
    if (st.in_flight.size() >= kMaxInFlight) return false;
    purge(self, row, std::string(uid), *reason);
    return true;
  });
}

caf::behavior retention(RetentionSelf* self, RetentionEnv env) {
  self->state.env = std::move(env);
  recount(self);
  self->send(self, tick_atom::value);
  return {
      [=](tick_atom) {
        pass(self);
        self->delayed_send(self, self->state.env.interval, tick_atom::value);
      },
  };
}

}  // namespace

caf::actor spawn_retention(caf::actor_system& sys, RetentionEnv env) {
  return sys.spawn<caf::detached>(retention, std::move(env));
}

}  // namespace caldera
