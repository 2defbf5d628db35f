#include "actors/job/core/slow_start.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "actors/job/core/job_steps.hpp"

namespace caldera {
namespace {

bool in_flight(const SlowStart& s, const std::string& name) {
  return s.in_flight.count(name) > 0;
}

// Placed pods that wait for their batch, in the order the spec lists them.
std::vector<const Pod*> waiting_pods(const JobModel& m) {
  std::vector<const Pod*> out;
  for (const Pod* p : m.pods.placed_pending())
    if (!in_flight(m.creation, p->name)) out.push_back(p);
  auto task_pos = [&](const Pod* p) {
    const auto& tasks = m.job.spec.tasks;
    for (size_t i = 0; i < tasks.size(); ++i)
      if (tasks[i].name == p->task_name) return i;
    return tasks.size();
  };
  std::sort(out.begin(), out.end(), [&](const Pod* a, const Pod* b) {
    auto ta = task_pos(a), tb = task_pos(b);
    return ta != tb ? ta < tb : a->index < b->index;
  });
  return out;
}

void end_round(SlowStart& s) {
  s.next_batch = 1;
  s.round_created = 0;
  s.round_batches = 0;
}

// Pods killed, replaced or reported since they were sent are no longer in flight. A pod leaves
// flight only by changing, and every change since the last write is in the pod table's changed
// names (each event ends here, before its write): only those are looked at, not the whole flight.
// Returns whether any left.
bool purge_in_flight(JobModel& m) {
  auto& flight = m.creation.in_flight;
  const size_t before = flight.size();
  auto gone = [&](const std::string& name) {
    auto it = std::as_const(m.pods).find(name);
    return it == m.pods.cend() || !is_placed_pending(it->second);
  };
  const auto& changed = m.pods.changed_names();
  if (m.pods.all_changed() || flight.size() <= changed.size()) {
    std::erase_if(flight, gone);
  } else {
    for (const auto& name : changed) {
      auto it = flight.find(name);
      if (it != flight.end() && gone(name)) flight.erase(it);
    }
  }
  return flight.size() != before;
}

// The fields of a round besides its pods in flight, to tell whether an event changed them.
auto round_fields(const SlowStart& s) {
  return std::make_tuple(s.next_batch, s.round_created, s.round_batches, s.resume_at_ms,
                         s.stopped_rounds, s.batch_sent_ms);
}

}  // namespace

int64_t slow_start_backoff_ms(int32_t stopped_rounds) {
  constexpr int64_t kFirst = 1000, kMost = 60000;
  if (stopped_rounds <= 0) return 0;
  return std::min(kMost, kFirst << std::min(stopped_rounds - 1, 6));
}

bool launched(const JobModel& m, const Pod& p) {
  if (p.node.empty()) return false;
  return p.phase != PodPhase::Pending || in_flight(m.creation, p.name);
}

void launch_next_batch(JobModel& m, const Clock& clock, Effects& fx) {
  auto& s = m.creation;
  // Not a copy of the round: its pods in flight are a whole batch, and this runs on every event.
  const auto before = round_fields(s);
  bool flight_changed = purge_in_flight(m);
  if (s.in_flight.empty()) s.batch_sent_ms = 0;
  if (s.resume_at_ms && s.resume_at_ms <= clock.now_ms) s.resume_at_ms = 0;
  if (!is_active(m.job.status.state.phase)) {
    // A job that restarts, stops or ends has no round under way; its next one starts afresh.
    end_round(s);
    s.resume_at_ms = 0;
  } else if (s.in_flight.empty()) {
    auto waiting = waiting_pods(m);
    if (waiting.empty()) {
      if (s.round_batches > 1)
        add_event(m, clock, "Normal", "SuccessfulCreate",
                  fmt::format("created {} pods in {} batches (slow start)", s.round_created,
                              s.round_batches));
      end_round(s);
    } else if (s.resume_at_ms == 0) {
      auto n = std::min<size_t>(static_cast<size_t>(s.next_batch), waiting.size());
      for (size_t i = 0; i < n; ++i) {
        fx.launch.push_back(waiting[i]->name);
        flight_changed |= s.in_flight.insert(waiting[i]->name).second;
        m.pods.find(waiting[i]->name);  // its row says it is in flight: rewritten
      }
      ++s.round_batches;
      s.batch_sent_ms = clock.now_ms;
      s.next_batch = static_cast<int32_t>(std::min<int64_t>(int64_t{2} * s.next_batch, 1 << 30));
    }
  }
  if (flight_changed || round_fields(s) != before) fx.changed = true;
}

void relaunch_overdue(JobModel& m, const Clock& clock, Effects& fx) {
  auto due = relaunch_due_ms(m);
  if (!due || clock.now_ms < *due) return;
  purge_in_flight(m);
  fx.launch.insert(fx.launch.end(), m.creation.in_flight.begin(), m.creation.in_flight.end());
  m.creation.batch_sent_ms = clock.now_ms;
  fx.changed = true;
}

std::optional<int64_t> relaunch_due_ms(const JobModel& m) {
  if (m.creation.in_flight.empty()) return std::nullopt;
  return m.creation.batch_sent_ms + kRelaunchAfterMs;
}

void pod_created(JobModel& m, const Pod& p) {
  auto& s = m.creation;
  auto it = s.in_flight.find(p.name);
  if (it == s.in_flight.end() || s.round_batches == 0) {
    // Not a pod of the round under way (a leftover of a stopped one): it proves little.
    if (it != s.in_flight.end()) s.in_flight.erase(it);
    return;
  }
  s.in_flight.erase(it);
  ++s.round_created;
  s.stopped_rounds = 0;
}

void pod_creation_failed(JobModel& m, const Pod& p, const Clock& clock, Effects& fx) {
  auto& s = m.creation;
  s.in_flight.erase(p.name);
  // One stop per round: the other failures of the same batch do not lengthen the wait.
  if (s.resume_at_ms <= clock.now_ms) {
    ++s.stopped_rounds;
    s.resume_at_ms = clock.now_ms + slow_start_backoff_ms(s.stopped_rounds);
  }
  end_round(s);
  std::erase_if(m.delayed, [&](const DelayedAction& d) { return d.pod_uid == p.uid; });
  fx.release.push_back(p.uid);
  fx.remove.push_back({p.uid, p.node, "failed to create"});
  const std::string name = p.name, node = p.node, message = p.message;
  m.pods.erase(name);  // `p` may be the erased entry: only the copies are used below
  add_event(m, clock, "Warning", "FailedCreate",
            fmt::format("pod {} on node {}: {}; {} pod(s) wait for the next round in {}s", name,
                        node, message.empty() ? "the node could not create it" : message,
                        waiting_pods(m).size(), (s.resume_at_ms - clock.now_ms) / 1000));
  fx.changed = true;
}

}  // namespace caldera
