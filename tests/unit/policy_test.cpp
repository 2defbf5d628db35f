// Policy matching, one row per box of seed 000 section 5.4's flow.
#include <gtest/gtest.h>

#include "actors/job/core/delayed_action.hpp"
#include "actors/job/core/policy.hpp"
#include "tests/unit/job_test_support.hpp"

namespace caldera {
namespace {

using namespace caldera::testing;

struct Row {
  const char* name;
  std::vector<LifecyclePolicy> task_policies;  // on task "w"
  std::vector<LifecyclePolicy> job_policies;
  EventRequest req;
  Action want;
  std::optional<int64_t> want_delay;
};

EventRequest pod_event(Event e, std::optional<int32_t> code = {}) {
  EventRequest r;
  r.event = e;
  r.task = "w";
  r.pod_name = "job-w-0";
  r.pod_uid = "p1";
  r.exit_code = code;
  r.job_uid = "u1";
  r.job_version = 2;
  return r;
}

EventRequest with(EventRequest r, std::function<void(EventRequest&)> f) {
  f(r);
  return r;
}

TEST(Policy, MatchingFollowsSection5_4) {
  const auto restart = policy(Event::PodFailed, Action::RestartJob);
  const auto any_abort = policy(Event::Any, Action::AbortJob);
  std::vector<Row> rows = {
      {"an explicit action wins over every policy",
       {restart},
       {restart},
       with(pod_event(Event::CommandIssued), [](auto& r) { r.action = Action::ResumeJob; }),
       Action::ResumeJob,
       {}},
      {"OutOfSync is internal: sync",
       {any_abort},
       {any_abort},
       pod_event(Event::OutOfSync),
       Action::SyncJob,
       {}},
      {"CommandIssued without action is internal: sync",
       {any_abort},
       {any_abort},
       pod_event(Event::CommandIssued),
       Action::SyncJob,
       {}},
      {"PodRunning is internal: sync",
       {any_abort},
       {any_abort},
       pod_event(Event::PodRunning),
       Action::SyncJob,
       {}},
      {"another job uid is stale: sync",
       {restart},
       {restart},
       with(pod_event(Event::PodFailed), [](auto& r) { r.job_uid = "old"; }),
       Action::SyncJob,
       {}},
      {"an older version is stale: sync",
       {restart},
       {restart},
       with(pod_event(Event::PodFailed), [](auto& r) { r.job_version = 1; }),
       Action::SyncJob,
       {}},
      {"task policy matches by event",
       {policy(Event::PodFailed, Action::RestartTask)},
       {restart},
       pod_event(Event::PodFailed),
       Action::RestartTask,
       {}},
      {"task policy misses: job policy",
       {policy(Event::PodEvicted, Action::RestartTask)},
       {restart},
       pod_event(Event::PodFailed),
       Action::RestartJob,
       {}},
      {"task PodPending without timeout falls to the job",
       {policy(Event::Any, Action::RestartPod)},
       {policy(Event::PodPending, Action::AbortJob, 5000)},
       pod_event(Event::PodPending),
       Action::AbortJob,
       5000},
      {"task PodPending with timeout: delayed",
       {policy(Event::PodPending, Action::RestartPod, 700)},
       {},
       pod_event(Event::PodPending),
       Action::RestartPod,
       700},
      {"job policy matches by event",
       {},
       {restart},
       pod_event(Event::PodFailed),
       Action::RestartJob,
       {}},
      {"job policy matches by *",
       {},
       {any_abort},
       pod_event(Event::PodEvicted),
       Action::AbortJob,
       {}},
      {"job policy matches by exit code",
       {},
       {exit_code_policy(3, Action::TerminateJob)},
       pod_event(Event::PodFailed, 3),
       Action::TerminateJob,
       {}},
      {"task policy matches by exit code",
       {exit_code_policy(137, Action::RestartPod)},
       {exit_code_policy(137, Action::AbortJob)},
       pod_event(Event::PodFailed, 137),
       Action::RestartPod,
       {}},
      {"another exit code: sync",
       {},
       {exit_code_policy(3, Action::TerminateJob)},
       pod_event(Event::PodFailed, 4),
       Action::SyncJob,
       {}},
      {"job PodPending without timeout: sync",
       {},
       {any_abort},
       pod_event(Event::PodPending),
       Action::SyncJob,
       {}},
      {"nothing matches: sync",
       {policy(Event::TaskCompleted, Action::CompleteJob)},
       {policy(Event::PodEvicted, Action::RestartJob)},
       pod_event(Event::PodFailed),
       Action::SyncJob,
       {}},
      {"a job-level event skips task policies",
       {policy(Event::JobUnknown, Action::RestartTask)},
       {policy(Event::JobUnknown, Action::AbortJob)},
       with(pod_event(Event::JobUnknown), [](auto& r) { r.task.clear(); }),
       Action::AbortJob,
       {}},
      {"the job policy's timeout delays it",
       {},
       {policy(Event::PodFailed, Action::RestartJob, 90)},
       pod_event(Event::PodFailed),
       Action::RestartJob,
       90},
  };
  for (const auto& row : rows) {
    auto spec = spec_with({{"w", 1}});
    spec.tasks[0].policies = row.task_policies;
    spec.policies = row.job_policies;
    auto d = apply_policies(spec, "u1", 2, row.req);
    EXPECT_EQ(d.action, row.want) << row.name;
    EXPECT_EQ(d.delay_ms, row.want_delay) << row.name;
  }
}

// ---- delayed-action cancellation (sections 6.3 and 6.4) ----

DelayedAction waiting(std::string pod, std::string uid, Event e, Action a, std::string task = "w",
                      int32_t partition = -1) {
  return DelayedAction{std::move(pod), std::move(uid), std::move(task), partition, e, a, 5000};
}

TEST(DelayedAction, CancellationOnEventsFollowsSection6_3) {
  struct CancelRow {
    const char* name;
    Event event;
    std::string pod, uid;
    std::vector<bool> kept;  // for each of the four waiting actions below
  };
  const std::vector<DelayedAction> start = {
      waiting("p0", "u0", Event::PodPending, Action::AbortJob),
      waiting("p0", "u0", Event::PodFailed, Action::RestartJob),
      waiting("p0", "u0", Event::PodEvicted, Action::RestartPod),
      waiting("p1", "u1", Event::PodPending, Action::AbortJob),
  };
  std::vector<CancelRow> rows = {
      {"PodRunning cancels the pod's PodPending, PodFailed and PodEvicted",
       Event::PodRunning,
       "p0",
       "u0",
       {false, false, false, true}},
      {"PodFailed cancels only the pod's PodPending",
       Event::PodFailed,
       "p0",
       "u0",
       {false, true, true, true}},
      {"PodPending cancels nothing", Event::PodPending, "p0", "u0", {true, true, true, true}},
      {"a new pod of the same name does not cancel the old one's PodPending",
       Event::PodRunning,
       "p0",
       "u9",
       {true, false, false, true}},
      {"another pod's events leave p0's actions",
       Event::PodRunning,
       "p1",
       "u1",
       {true, true, true, false}},
  };
  for (const auto& row : rows) {
    auto delayed = start;
    auto cancelled = cancel_on_event(delayed, row.event, row.pod, row.uid);
    std::vector<bool> kept;
    for (const auto& d : start)
      kept.push_back(std::find(delayed.begin(), delayed.end(), d) != delayed.end());
    EXPECT_EQ(kept, row.kept) << row.name;
    EXPECT_EQ(cancelled.size() + delayed.size(), start.size()) << row.name;
  }
}

TEST(DelayedAction, AFiredActionCancelsItsLevelFollowingSection6_4) {
  const std::vector<DelayedAction> start = {
      waiting("p0", "u0", Event::PodFailed, Action::RestartPod, "a", 0),
      waiting("p1", "u1", Event::PodFailed, Action::RestartPod, "a", 1),
      waiting("p2", "u2", Event::PodFailed, Action::RestartPod, "b", 0),
  };
  struct LevelRow {
    const char* name;
    DelayedAction fired;
    size_t left;
  };
  std::vector<LevelRow> rows = {
      {"job level: all", waiting("p9", "u9", Event::PodPending, Action::AbortJob, "a"), 0},
      {"task level: the task's", waiting("p9", "u9", Event::PodFailed, Action::RestartTask, "a"),
       1},
      {"pod level: the pod's", waiting("p1", "u1", Event::PodFailed, Action::RestartPod, "a", 1),
       2},
      {"partition level: the partition's",
       waiting("p9", "u9", Event::PodFailed, Action::RestartPartition, "a", 0), 2},
  };
  for (const auto& row : rows) {
    auto delayed = start;
    cancel_same_level(delayed, row.fired);
    EXPECT_EQ(delayed.size(), row.left) << row.name;
  }
}

// ---- delayed actions through the controller ----

TEST(DelayedAction, PodPendingTimeoutAbortsAPodThatNeverRuns) {
  auto c = test_clock(1000);
  auto spec = spec_with({{"w", 1}});
  spec.policies = {policy(Event::PodPending, Action::AbortJob, 2000)};
  auto m = new_job(spec, "u1", c);
  sync_job(m, c);
  ASSERT_EQ(m.delayed.size(), 1u);
  EXPECT_EQ(next_due_ms(m), 3000);
  auto early = on_tick(m, at(c, 2999));
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Pending);
  auto fx = on_tick(m, at(c, 3000));
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Aborted) << "never placed: nothing to wait for";
  EXPECT_EQ(m.job.status.state.reason, "PodPending");
  EXPECT_TRUE(m.delayed.empty());
  EXPECT_FALSE(fx.request_placement);
  EXPECT_EQ(fx.release.size(), 1u);
}

TEST(DelayedAction, APodThatStartsRunningCancelsItsPodPendingTimeout) {
  auto c = test_clock(1000);
  auto spec = spec_with({{"w", 1}});
  spec.policies = {policy(Event::PodPending, Action::AbortJob, 2000)};
  auto m = new_job(spec, "u1", c);
  sync_job(m, c);
  place_all(m, c);
  report(m, "job-w-0", PodPhase::Running, at(c, 1500));
  EXPECT_TRUE(m.delayed.empty());
  EXPECT_EQ(next_due_ms(m), std::nullopt);
  on_tick(m, at(c, 5000));
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Running);
  ASSERT_FALSE(m.job.events.empty());
  bool cancelled = false;
  for (const auto& e : m.job.events) cancelled |= e.reason == "DelayedActionCancelled";
  EXPECT_TRUE(cancelled);
}

TEST(DelayedAction, PodFailedTimeoutIsCancelledWhenThePodRunsAgain) {
  auto c = test_clock(1000);
  auto spec = spec_with({{"w", 2}});
  spec.tasks[0].policies = {policy(Event::PodFailed, Action::RestartJob, 10000)};
  spec.min_available = 1;
  auto m = running_job(spec, c);
  report(m, "job-w-0", PodPhase::Failed, c, 1);
  ASSERT_EQ(m.delayed.size(), 1u);
  EXPECT_EQ(m.delayed[0].due_ms, 11000);
  // The pod's fresh incarnation (same name) runs: the failure no longer matters.
  m.pods.at("job-w-0").phase = PodPhase::Pending;
  m.pods.at("job-w-0").uid = "again";
  m.pods.at("job-w-0").containers.clear();
  report(m, "job-w-0", PodPhase::Running, c);
  EXPECT_TRUE(m.delayed.empty());
}

TEST(DelayedAction, ActiveDeadlineTerminatesTheJob) {
  auto c = test_clock(1000);
  auto spec = spec_with({{"w", 1}});
  spec.active_deadline_seconds = 2;
  auto m = running_job(spec, c);
  EXPECT_EQ(next_due_ms(m), 3000);
  auto fx = on_tick(m, at(c, 3000));
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Terminating);
  EXPECT_EQ(fx.kill.size(), 1u);
  finish_killed(m, at(c, 3100));
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Terminated);
  EXPECT_EQ(m.job.status.state.reason, "DeadlineExceeded");
  EXPECT_EQ(next_due_ms(m), std::nullopt);
}

TEST(DelayedAction, TtlAfterFinishedExpiresEveryTerminalPhaseIncludingAborted) {
  for (bool abort : {false, true}) {
    auto c = test_clock(1000);
    auto spec = spec_with({{"w", 1}});
    spec.ttl_seconds_after_finished = 5;
    auto m = running_job(spec, c);
    if (abort) {
      on_command(m, Action::AbortJob, "a", at(c, 2000));
      finish_killed(m, at(c, 2000));
    } else {
      report(m, "job-w-0", PodPhase::Succeeded, at(c, 2000));
    }
    EXPECT_EQ(next_due_ms(m), 7000);
    EXPECT_FALSE(on_tick(m, at(c, 6999)).expired);
    EXPECT_TRUE(on_tick(m, at(c, 7000)).expired);
  }
}

}  // namespace
}  // namespace caldera
