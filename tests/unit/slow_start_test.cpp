// Slow-start pod creation on the pure controller: batches of 1, 2, 4, ..., a failed creation
// stops the round, the next round starts after a backoff (seed 003, manageJob).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "actors/job/core/job_controller.hpp"
#include "tests/unit/job_test_support.hpp"

namespace caldera {
namespace {

using namespace caldera::testing;

using Names = std::vector<std::string>;

JobModel placed_job(JobSpec spec, const Clock& c, Effects* first = nullptr) {
  auto m = new_job(std::move(spec), "u1", c);
  sync_job(m, c);
  auto fx = place_all(m, c);
  if (first) *first = fx;
  return m;
}

Effects created(JobModel& m, const Names& names, const Clock& c) {
  Effects fx;
  for (const auto& n : names) fx.merge(report(m, n, PodPhase::Running, c));
  return fx;
}

Effects failed_create(JobModel& m, const std::string& name, const Clock& c) {
  Pod r = m.pods.at(name);
  r.phase = PodPhase::Failed;
  r.reason = std::string(kFailedCreate);
  r.message = "cannot create pod dir: Not a directory";
  ContainerStatus cs;
  cs.name = "main";
  cs.state = ContainerState::Terminated;
  cs.exit_code = 127;
  cs.reason = "StartError: cannot create pod dir";
  r.containers = {cs};
  return on_pod_report(m, r, c);
}

int count_events(const JobModel& m, const std::string& reason) {
  return static_cast<int>(std::count_if(m.job.events.begin(), m.job.events.end(),
                                        [&](const JobEvent& e) { return e.reason == reason; }));
}

TEST(SlowStart, BatchesOfOneTwoFourEachOnceTheOneBeforeIsCreated) {
  auto c = test_clock();
  Effects fx;
  auto m = placed_job(spec_with({{"w", 8}}), c, &fx);
  EXPECT_EQ(fx.launch, Names{"job-w-0"});

  fx = created(m, {"job-w-0"}, c);
  EXPECT_EQ(fx.launch, (Names{"job-w-1", "job-w-2"}));

  fx = created(m, {"job-w-1"}, c);
  EXPECT_TRUE(fx.launch.empty()) << "job-w-2 of the same batch is not created yet";
  fx = created(m, {"job-w-2"}, c);
  EXPECT_EQ(fx.launch, (Names{"job-w-3", "job-w-4", "job-w-5", "job-w-6"}));

  fx = created(m, {"job-w-3", "job-w-4", "job-w-5", "job-w-6"}, c);
  EXPECT_EQ(fx.launch, Names{"job-w-7"}) << "the last batch is what is left";
  created(m, {"job-w-7"}, c);
  EXPECT_EQ(m.job.status.running, 8);
  EXPECT_EQ(m.creation, SlowStart{}) << "the round is over";
  ASSERT_EQ(count_events(m, "SuccessfulCreate"), 1);
  EXPECT_EQ(m.job.events.back().message, "created 8 pods in 4 batches (slow start)");
}

TEST(SlowStart, APodThatEndsBeforeItIsSeenRunningIsCreatedToo) {
  auto c = test_clock();
  auto m = placed_job(spec_with({{"w", 3}}), c);
  auto fx = report(m, "job-w-0", PodPhase::Succeeded, c);
  EXPECT_EQ(fx.launch, (Names{"job-w-1", "job-w-2"}));
}

TEST(SlowStart, BatchesFollowTheTasksInSpecOrderAndIndexesInNumberOrder) {
  auto c = test_clock();
  Effects fx;
  auto m = placed_job(spec_with({{"ps", 1}, {"worker", 11}}), c, &fx);
  EXPECT_EQ(fx.launch, Names{"job-ps-0"});
  fx = created(m, {"job-ps-0"}, c);
  EXPECT_EQ(fx.launch, (Names{"job-worker-0", "job-worker-1"}));
  fx = created(m, fx.launch, c);
  EXPECT_EQ(fx.launch, (Names{"job-worker-2", "job-worker-3", "job-worker-4", "job-worker-5"}));
  fx = created(m, fx.launch, c);
  EXPECT_EQ(fx.launch, (Names{"job-worker-6", "job-worker-7", "job-worker-8", "job-worker-9",
                              "job-worker-10"}));
}

TEST(SlowStart, AOnePodJobLaunchesAtOnceAndLeavesNoEvent) {
  auto c = test_clock();
  Effects fx;
  auto m = placed_job(spec_with({{"w", 1}}), c, &fx);
  EXPECT_EQ(fx.launch, Names{"job-w-0"});
  created(m, {"job-w-0"}, c);
  EXPECT_EQ(count_events(m, "SuccessfulCreate"), 0);
}

TEST(SlowStart, AFailedCreationStopsTheRound) {
  auto c = test_clock();
  auto m = placed_job(spec_with({{"w", 8}}), c);
  created(m, {"job-w-0"}, c);  // batch 2: job-w-1, job-w-2
  const auto old_uid = m.pods.at("job-w-1").uid;

  auto fx = failed_create(m, "job-w-1", c);
  EXPECT_TRUE(fx.launch.empty());
  EXPECT_EQ(fx.release, Names{old_uid});
  ASSERT_EQ(fx.remove.size(), 1u);
  EXPECT_EQ(fx.remove[0].uid, old_uid) << "the node forgets what it could not create";
  // Not a pod failure: the pod is made again (new uid, to be placed anew), no policy ran.
  EXPECT_NE(m.pods.at("job-w-1").uid, old_uid);
  EXPECT_TRUE(m.pods.at("job-w-1").node.empty());
  EXPECT_TRUE(fx.request_placement);
  EXPECT_EQ(m.job.status.failed, 0);
  EXPECT_EQ(count_events(m, "PodFailed"), 0);
  ASSERT_EQ(count_events(m, "FailedCreate"), 1);
  EXPECT_NE(m.job.events.back().message.find("5 pod(s) wait for the next round in 1s"),
            std::string::npos)
      << m.job.events.back().message;

  // The rest of the batch is still created, but no further batch goes out.
  fx = created(m, {"job-w-2"}, c);
  EXPECT_TRUE(fx.launch.empty());
  EXPECT_EQ(m.creation.resume_at_ms, c.now_ms + 1000);
  EXPECT_EQ(next_due_ms(m), c.now_ms + 1000);
}

TEST(SlowStart, AStoppedRoundResumesAfterItsBackoffFromABatchOfOne) {
  auto c = test_clock();
  auto m = placed_job(spec_with({{"w", 8}}), c);
  created(m, {"job-w-0"}, c);
  failed_create(m, "job-w-1", c);
  created(m, {"job-w-2"}, c);
  auto fx = place_all(m, c);  // the replacement of job-w-1 is placed, and waits too
  EXPECT_TRUE(fx.launch.empty());

  fx = on_tick(m, at(c, c.now_ms + 999));
  EXPECT_TRUE(fx.launch.empty());
  fx = on_tick(m, at(c, c.now_ms + 1000));
  EXPECT_EQ(fx.launch, Names{"job-w-1"});
  EXPECT_EQ(m.creation.resume_at_ms, 0);
  fx = created(m, {"job-w-1"}, at(c, c.now_ms + 1000));
  EXPECT_EQ(fx.launch, (Names{"job-w-3", "job-w-4"}));
  EXPECT_EQ(m.creation.stopped_rounds, 0) << "a created pod starts the backoff over";
  fx = created(m, fx.launch, at(c, c.now_ms + 1000));
  EXPECT_EQ(fx.launch, (Names{"job-w-5", "job-w-6", "job-w-7"}));
  created(m, fx.launch, at(c, c.now_ms + 1000));
  EXPECT_EQ(m.job.status.running, 8);
  EXPECT_EQ(m.job.events.back().message, "created 6 pods in 3 batches (slow start)");
}

TEST(SlowStart, ABatchNotCreatedInTimeIsSentAgain) {
  // A launch (or the node's answer) lost on the way must not hold the round forever.
  auto c = test_clock();
  auto m = placed_job(spec_with({{"w", 3}}), c);
  created(m, {"job-w-0"}, c);  // batch 2: job-w-1, job-w-2
  EXPECT_EQ(next_due_ms(m), c.now_ms + kRelaunchAfterMs);
  EXPECT_TRUE(on_tick(m, at(c, c.now_ms + kRelaunchAfterMs - 1)).launch.empty());
  report(m, "job-w-1", PodPhase::Running, c);
  auto later = at(c, c.now_ms + kRelaunchAfterMs);
  auto fx = on_tick(m, later);
  EXPECT_EQ(fx.launch, Names{"job-w-2"});
  EXPECT_TRUE(fx.changed);
  EXPECT_EQ(next_due_ms(m), later.now_ms + kRelaunchAfterMs);
  created(m, {"job-w-2"}, later);
  EXPECT_EQ(next_due_ms(m), std::nullopt);
}

TEST(SlowStart, ALeftoverOfAStoppedBatchDoesNotResetTheBackoff) {
  auto c = test_clock();
  auto m = placed_job(spec_with({{"w", 4}}), c);
  created(m, {"job-w-0"}, c);  // batch 2: job-w-1, job-w-2
  failed_create(m, "job-w-1", c);
  created(m, {"job-w-2"}, c);
  EXPECT_EQ(m.creation.stopped_rounds, 1);
}

TEST(SlowStart, BackoffDoublesFromOneSecondToAMinute) {
  EXPECT_EQ(slow_start_backoff_ms(1), 1000);
  EXPECT_EQ(slow_start_backoff_ms(2), 2000);
  EXPECT_EQ(slow_start_backoff_ms(3), 4000);
  EXPECT_EQ(slow_start_backoff_ms(6), 32000);
  EXPECT_EQ(slow_start_backoff_ms(7), 60000);
  EXPECT_EQ(slow_start_backoff_ms(100), 60000);
}

TEST(SlowStart, RoundsStoppedInARowWaitLonger) {
  auto c = test_clock();
  auto m = placed_job(spec_with({{"w", 3}}), c);
  failed_create(m, "job-w-0", c);
  EXPECT_EQ(m.creation.resume_at_ms, c.now_ms + 1000);
  place_all(m, c);
  auto later = at(c, c.now_ms + 1000);
  auto fx = on_tick(m, later);
  ASSERT_EQ(fx.launch, Names{"job-w-0"});
  failed_create(m, "job-w-0", later);
  EXPECT_EQ(m.creation.stopped_rounds, 2);
  EXPECT_EQ(m.creation.resume_at_ms, later.now_ms + 2000);
}

TEST(SlowStart, FailuresInOneBatchStopTheRoundOnce) {
  auto c = test_clock();
  auto m = placed_job(spec_with({{"w", 4}}), c);
  created(m, {"job-w-0"}, c);  // batch 2: job-w-1, job-w-2
  failed_create(m, "job-w-1", c);
  failed_create(m, "job-w-2", c);
  EXPECT_EQ(m.creation.stopped_rounds, 1);
  EXPECT_EQ(m.creation.resume_at_ms, c.now_ms + 1000);
  EXPECT_EQ(count_events(m, "FailedCreate"), 2);
}

TEST(SlowStart, AFailedCreationRunsNoPolicy) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 2}});
  spec.policies = {policy(Event::PodFailed, Action::AbortJob)};
  auto m = placed_job(spec, c);
  failed_create(m, "job-w-0", c);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Pending);
  EXPECT_EQ(m.job.status.retry_count, 0);
}

TEST(SlowStart, AFailedCreationDropsThePodsPendingTimeout) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 1}});
  spec.policies = {policy(Event::PodPending, Action::AbortJob, 5000)};
  auto m = placed_job(spec, c);
  const auto old_uid = m.pods.at("job-w-0").uid;
  failed_create(m, "job-w-0", c);
  for (const auto& d : m.delayed) EXPECT_NE(d.pod_uid, old_uid);
  ASSERT_EQ(m.delayed.size(), 1u) << "the new pod waits with its own timeout";
  EXPECT_EQ(m.delayed[0].pod_uid, m.pods.at("job-w-0").uid);
}

TEST(SlowStart, AKilledPodStillInItsNodesHandsIsNotAFailedCreation) {
  auto c = test_clock();
  auto m = placed_job(spec_with({{"w", 2}}), c);
  on_command(m, Action::AbortJob, "cmd-1", c);
  ASSERT_TRUE(m.pods.at("job-w-0").out_of_sync);
  failed_create(m, "job-w-0", c);
  EXPECT_EQ(m.pods.at("job-w-0").phase, PodPhase::Failed);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Aborted);
  EXPECT_EQ(m.creation, SlowStart{}) << "a stopped job has no round";
}

TEST(SlowStart, ARestartEndsTheRoundAndTheNewVersionStartsAtOne) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 4}});
  spec.policies = {policy(Event::PodFailed, Action::RestartJob)};
  auto m = placed_job(spec, c);
  created(m, {"job-w-0"}, c);                    // batch 2 in flight: job-w-1, job-w-2
  report(m, "job-w-0", PodPhase::Failed, c, 1);  // RestartJob
  ASSERT_EQ(m.job.status.state.phase, JobPhase::Restarting);
  finish_killed(m, c);
  ASSERT_EQ(m.job.status.state.phase, JobPhase::Pending);
  auto fx = place_all(m, c);
  EXPECT_EQ(fx.launch, Names{"job-w-0"});
  EXPECT_EQ(m.creation.next_batch, 2);
}

// Every event ends in launch_next_batch, so it must tell whether the round changed without
// copying the batch in flight (a copy per event made a 10,000-pod job cost five times as much per
// pod as a one-pod job): an event that touches no pod of the round changes nothing; a pod that
// leaves flight does.
TEST(SlowStart, ARoundIsChangedOnlyByAPodLeavingFlightOrABatchSent) {
  auto c = test_clock();
  auto m = placed_job(spec_with({{"w", 8}}), c);
  report(m, "job-w-0", PodPhase::Running, c);  // the batch {w-1, w-2} is in flight
  ASSERT_EQ(m.creation.in_flight, (std::set<std::string>{"job-w-1", "job-w-2"}));
  m.pods.take_changes();  // as the write after each event does

  Effects quiet;
  launch_next_batch(m, c, quiet);
  EXPECT_FALSE(quiet.changed);
  EXPECT_TRUE(quiet.launch.empty());

  m.pods.at("job-w-1").phase = PodPhase::Running;  // created: it leaves flight
  Effects left;
  launch_next_batch(m, c, left);
  EXPECT_TRUE(left.changed);
  EXPECT_TRUE(left.launch.empty()) << "job-w-2 is still in flight";
  EXPECT_EQ(m.creation.in_flight, std::set<std::string>{"job-w-2"});
  m.pods.take_changes();

  m.pods.at("job-w-2").phase = PodPhase::Running;
  Effects next;
  launch_next_batch(m, c, next);
  EXPECT_TRUE(next.changed);
  EXPECT_EQ(next.launch.size(), 4u);
}

}  // namespace
}  // namespace caldera
