// Every arrow of seed 000 section 3.3 not covered in job_controller_test.cpp, one test each,
// named after the arrow, on the pure controller.
#include <gtest/gtest.h>

#include "actors/job/core/job_controller.hpp"
#include "tests/unit/job_test_support.hpp"

namespace caldera {
namespace {

using namespace caldera::testing;

JobPhase phase(const JobModel& m) {
  return m.job.status.state.phase;
}

std::vector<JobPhase> condition_phases(const JobModel& m) {
  std::vector<JobPhase> out;
  for (const auto& c : m.job.status.conditions) out.push_back(c.status);
  return out;
}

// ---- Pending -> ... ----

TEST(JobPhases, Pending_to_Restarting_OnRestartJob) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 2}});
  spec.policies = {policy(Event::PodFailed, Action::RestartJob)};
  spec.min_available = 2;
  auto m = pending_job(spec, c);
  place_all(m, c);
  report(m, "job-w-0", PodPhase::Running, c);
  ASSERT_EQ(phase(m), JobPhase::Pending);
  auto fx = report(m, "job-w-0", PodPhase::Failed, c, 1);
  EXPECT_EQ(phase(m), JobPhase::Restarting);
  EXPECT_EQ(m.job.status.retry_count, 1);
  EXPECT_EQ(m.job.status.version, 1);
  EXPECT_EQ(fx.kill.size(), 1u);  // job-w-1 was placed: its node stops it
  EXPECT_TRUE(m.pods.at("job-w-1").out_of_sync);
}

TEST(JobPhases, Pending_to_Restarting_OnRestartTaskOrPod) {
  for (auto action : {Action::RestartTask, Action::RestartPod}) {
    auto c = test_clock();
    auto spec = spec_with({{"a", 1}, {"b", 1}});
    spec.min_available = 2;
    spec.tasks[0].policies = {policy(Event::PodFailed, action)};
    auto m = pending_job(spec, c);
    place_all(m, c);
    report(m, "job-a-0", PodPhase::Failed, c, 1);
    EXPECT_EQ(phase(m), JobPhase::Pending) << "killed pod gone at once, so it passes Restarting";
    EXPECT_EQ(condition_phases(m),
              (std::vector<JobPhase>{JobPhase::Pending, JobPhase::Restarting, JobPhase::Pending}));
    EXPECT_EQ(m.job.status.retry_count, 1);
    EXPECT_EQ(m.job.status.version, 0) << "a targeted restart keeps the version";
    EXPECT_EQ(m.task_retries["a"], 1);
    EXPECT_EQ(m.pods.at("job-a-0").phase, PodPhase::Pending) << "recreated";
    EXPECT_EQ(m.pods.at("job-a-0").uid, "uid-3");
    EXPECT_FALSE(m.pods.at("job-b-0").out_of_sync) << "the other task is untouched";
  }
}

TEST(JobPhases, Pending_to_Aborting_OnAbortJob) {
  auto c = test_clock();
  auto m = pending_job(spec_with({{"w", 2}}), c);
  place_all(m, c);
  auto fx = on_command(m, Action::AbortJob, "cmd-1", c);
  EXPECT_EQ(phase(m), JobPhase::Aborting);
  EXPECT_EQ(m.job.status.state.reason, "CommandIssued");
  // The first batch (job-w-0) went to its node and is killed there; job-w-1 waited for the
  // next batch, so nothing of it runs and it ends at once.
  ASSERT_EQ(fx.kill.size(), 1u);
  EXPECT_EQ(fx.kill[0].uid, m.pods.at("job-w-0").uid);
  EXPECT_EQ(m.pods.at("job-w-1").phase, PodPhase::Failed);
  EXPECT_EQ(fx.release, std::vector<std::string>{m.pods.at("job-w-1").uid});
  // Its node reserved it when it was bound: it lets that go now, not when the reservation
  // expires.
  ASSERT_EQ(fx.unreserve.size(), 1u);
  EXPECT_EQ(fx.unreserve[0].uid, m.pods.at("job-w-1").uid);
  EXPECT_EQ(fx.unreserve[0].node, "n1");
  EXPECT_EQ(m.job.status.terminating, 1);
}

TEST(JobPhases, Pending_to_Completing_OnCompleteJob) {
  auto c = test_clock();
  auto m = pending_job(spec_with({{"w", 1}}), c);
  place_all(m, c);
  on_command(m, Action::CompleteJob, "cmd-1", c);
  EXPECT_EQ(phase(m), JobPhase::Completing);
}

TEST(JobPhases, Pending_to_Terminating_OnTerminateJob) {
  auto c = test_clock();
  auto m = pending_job(spec_with({{"w", 1}}), c);
  place_all(m, c);
  on_command(m, Action::TerminateJob, "cmd-1", c);
  EXPECT_EQ(phase(m), JobPhase::Terminating);
}

// ---- Running -> ... ----

TEST(JobPhases, Running_to_Restarting_OnRestartJob) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 2}});
  spec.policies = {policy(Event::PodFailed, Action::RestartJob)};
  auto m = running_job(spec, c);
  ASSERT_EQ(phase(m), JobPhase::Running);
  auto fx = report(m, "job-w-0", PodPhase::Failed, c, 2);
  EXPECT_EQ(phase(m), JobPhase::Restarting);
  EXPECT_EQ(m.job.status.state.reason, "PodFailed");
  EXPECT_EQ(m.job.status.retry_count, 1);
  EXPECT_EQ(m.job.status.version, 1);
  ASSERT_EQ(fx.kill.size(), 1u);
  EXPECT_EQ(fx.kill[0].uid, m.pods.at("job-w-1").uid);
  EXPECT_TRUE(m.pods.at("job-w-0").out_of_sync) << "retain None: the failed pod goes too";
}

TEST(JobPhases, Running_to_Aborting_OnAbortJob) {
  auto c = test_clock();
  auto m = running_job(spec_with({{"w", 2}}), c);
  on_command(m, Action::AbortJob, "cmd-1", c);
  EXPECT_EQ(phase(m), JobPhase::Aborting);
}

TEST(JobPhases, Running_to_Completing_OnCompleteJob) {
  auto c = test_clock();
  auto spec = spec_with({{"driver", 1}, {"worker", 2}});
  spec.tasks[0].policies = {policy(Event::TaskCompleted, Action::CompleteJob)};
  auto m = running_job(spec, c);
  auto fx = report(m, "job-driver-0", PodPhase::Succeeded, c);
  EXPECT_EQ(phase(m), JobPhase::Completing);
  EXPECT_EQ(m.job.status.state.reason, "TaskCompleted");
  EXPECT_EQ(fx.kill.size(), 2u);
  EXPECT_FALSE(m.pods.at("job-driver-0").out_of_sync) << "retain Soft keeps the succeeded pod";
}

TEST(JobPhases, Running_to_Terminating_OnTerminateJob) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 2}});
  spec.policies = {exit_code_policy(3, Action::TerminateJob)};
  auto m = running_job(spec, c);
  report(m, "job-w-0", PodPhase::Failed, c, 3);
  EXPECT_EQ(phase(m), JobPhase::Terminating);
  EXPECT_EQ(m.job.status.retry_count, 0);
}

// ---- transient phases ----

TEST(JobPhases, Restarting_to_Pending_WhenTheKilledPodsAreGone) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 2}});
  spec.policies = {policy(Event::PodFailed, Action::RestartJob)};
  auto m = running_job(spec, c);
  report(m, "job-w-0", PodPhase::Failed, c, 1);
  ASSERT_EQ(phase(m), JobPhase::Restarting);
  auto old_uid = m.pods.at("job-w-1").uid;
  auto fx = report(m, "job-w-1", PodPhase::Failed, c, 143);
  EXPECT_EQ(phase(m), JobPhase::Pending);
  EXPECT_EQ(m.job.status.state.reason, "Restarted");
  EXPECT_NE(m.pods.at("job-w-1").uid, old_uid) << "a fresh pod of the new version";
  EXPECT_EQ(m.pods.at("job-w-1").job_version, 1);
  EXPECT_EQ(fx.remove.size(), 2u) << "the nodes forget the replaced pods";
  EXPECT_TRUE(fx.request_placement);
}

TEST(JobPhases, Restarting_to_Failed_WhenRetriesAreUsedUp) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 1}});
  spec.max_retry = 1;
  spec.policies = {policy(Event::PodFailed, Action::RestartJob)};
  auto m = running_job(spec, c);
  report(m, "job-w-0", PodPhase::Failed, c, 1);  // restart 1 of 1
  place_all(m, c);
  report(m, "job-w-0", PodPhase::Running, c);
  ASSERT_EQ(phase(m), JobPhase::Running);
  report(m, "job-w-0", PodPhase::Failed, c, 1);  // no retry left
  EXPECT_EQ(phase(m), JobPhase::Failed);
  EXPECT_EQ(m.job.status.state.reason, "MaxRetryExceeded");
  EXPECT_EQ(m.job.status.retry_count, 1);
  EXPECT_EQ(m.job.status.version, 1);
  EXPECT_FALSE(m.pods.at("job-w-0").out_of_sync) << "the last run's pod is kept (retain Soft)";
  EXPECT_EQ(m.job.status.failed, 1);
}

TEST(JobPhases, Restarting_to_Failed_WaitsForThePodsStillRunning) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 2}});
  spec.max_retry = 0;
  spec.policies = {policy(Event::PodFailed, Action::RestartJob)};
  auto m = running_job(spec, c);
  report(m, "job-w-0", PodPhase::Failed, c, 1);
  EXPECT_EQ(phase(m), JobPhase::Restarting);
  finish_killed(m, c);
  EXPECT_EQ(phase(m), JobPhase::Failed);
}

TEST(JobPhases, Completing_to_Completed_WhenNoPodIsLeft) {
  auto c = test_clock();
  auto m = running_job(spec_with({{"w", 2}}), c);
  on_command(m, Action::CompleteJob, "cmd-1", c);
  report(m, "job-w-0", PodPhase::Failed, c, 143);
  EXPECT_EQ(phase(m), JobPhase::Completing);
  report(m, "job-w-1", PodPhase::Failed, c, 143);
  EXPECT_EQ(phase(m), JobPhase::Completed);
  EXPECT_EQ(m.job.status.state.reason, "CommandIssued") << "the reason of Completing carries on";
}

TEST(JobPhases, Terminating_to_Terminated_WhenNoPodIsLeft) {
  auto c = test_clock();
  auto m = running_job(spec_with({{"w", 2}}), c);
  on_command(m, Action::TerminateJob, "cmd-1", c);
  finish_killed(m, c);
  EXPECT_EQ(phase(m), JobPhase::Terminated);
  EXPECT_EQ(m.job.status.terminating, 0);
}

TEST(JobPhases, Aborting_to_Aborted_WhenNoPodIsLeft) {
  auto c = test_clock();
  auto m = running_job(spec_with({{"w", 2}}), c);
  on_command(m, Action::AbortJob, "cmd-1", c);
  report(m, "job-w-0", PodPhase::Failed, c, 143);
  EXPECT_EQ(phase(m), JobPhase::Aborting);
  report(m, "job-w-1", PodPhase::Failed, c, 143);
  EXPECT_EQ(phase(m), JobPhase::Aborted);
}

TEST(JobPhases, Aborting_to_Restarting_OnResumeJob) {
  auto c = test_clock();
  auto m = running_job(spec_with({{"w", 2}}), c);
  on_command(m, Action::AbortJob, "cmd-1", c);
  on_command(m, Action::ResumeJob, "cmd-2", c);
  EXPECT_EQ(phase(m), JobPhase::Restarting);
  EXPECT_EQ(m.job.status.retry_count, 0) << "a user's resume consumes no retry";
  finish_killed(m, c);
  EXPECT_EQ(phase(m), JobPhase::Pending);
  EXPECT_EQ(m.job.status.version, 1);
}

TEST(JobPhases, Aborted_to_Restarting_OnResumeJob) {
  auto c = test_clock();
  auto m = running_job(spec_with({{"w", 1}}), c);
  on_command(m, Action::AbortJob, "cmd-1", c);
  finish_killed(m, c);
  ASSERT_EQ(phase(m), JobPhase::Aborted);
  auto fx = on_command(m, Action::ResumeJob, "cmd-2", c);
  // Nothing is left to kill, so Restarting passes on to Pending in the same step.
  EXPECT_EQ(condition_phases(m).back(), JobPhase::Pending);
  ASSERT_GE(fx.phase_changes.size(), 2u);
  EXPECT_EQ(fx.phase_changes[0].from, JobPhase::Aborted);
  EXPECT_EQ(fx.phase_changes[0].to, JobPhase::Restarting);
  EXPECT_EQ(m.job.status.retry_count, 0);
  EXPECT_EQ(m.pods.at("job-w-0").job_version, 1);
  EXPECT_TRUE(fx.request_placement);
}

// ---- what the phases refuse ----

TEST(JobPhases, AbortedIgnoresEverythingButResume) {
  auto c = test_clock();
  auto m = running_job(spec_with({{"w", 1}}), c);
  on_command(m, Action::AbortJob, "cmd-1", c);
  finish_killed(m, c);
  for (auto a : {Action::RestartJob, Action::TerminateJob, Action::CompleteJob, Action::SyncJob}) {
    on_command(m, a, "", c);
    EXPECT_EQ(phase(m), JobPhase::Aborted) << to_string(a);
  }
}

TEST(JobPhases, FinishedPhasesIgnoreCommands) {
  auto c = test_clock();
  auto m = running_job(spec_with({{"w", 1}}), c);
  report(m, "job-w-0", PodPhase::Succeeded, c);
  ASSERT_EQ(phase(m), JobPhase::Completed);
  for (auto a : {Action::RestartJob, Action::AbortJob, Action::ResumeJob}) {
    auto fx = on_command(m, a, "", c);
    EXPECT_EQ(phase(m), JobPhase::Completed);
    EXPECT_TRUE(fx.kill.empty());
  }
}

TEST(JobPhases, ACommandThePhaseIgnoresIsRefusedAndChangesNothing) {
  auto c = test_clock();
  auto m = running_job(spec_with({{"w", 1}}), c);
  report(m, "job-w-0", PodPhase::Succeeded, c);
  ASSERT_EQ(phase(m), JobPhase::Completed);
  auto events = m.job.events.size();
  auto fx = on_command(m, Action::AbortJob, "late-1", c);
  EXPECT_EQ(fx.refused, "job job is Completed: AbortJob does nothing in this phase");
  EXPECT_FALSE(fx.changed);
  EXPECT_EQ(m.job.events.size(), events);
  // Not remembered: the same id is refused again rather than taken for a command that acted.
  EXPECT_FALSE(on_command(m, Action::AbortJob, "late-1", c).refused.empty());
  EXPECT_EQ(on_command(m, Action::ResumeJob, "", c).refused,
            "job job is Completed: ResumeJob does nothing in this phase");
}

TEST(JobPhases, ResumeOfARunningJobIsRefusedButARetryOfAnActedCommandIsNot) {
  auto c = test_clock();
  auto m = running_job(spec_with({{"w", 1}}), c);
  EXPECT_EQ(on_command(m, Action::ResumeJob, "r-1", c).refused,
            "job job is Running: ResumeJob does nothing in this phase");
  auto fx = on_command(m, Action::AbortJob, "a-1", c);
  EXPECT_TRUE(fx.refused.empty());
  finish_killed(m, c);
  ASSERT_EQ(phase(m), JobPhase::Aborted);
  // The client retried after a lost answer: the abort acted once, so the answer is still "done".
  fx = on_command(m, Action::AbortJob, "a-1", c);
  EXPECT_TRUE(fx.refused.empty());
  EXPECT_FALSE(fx.changed);
  EXPECT_FALSE(on_command(m, Action::AbortJob, "a-2", c).refused.empty());
}

TEST(JobPhases, ACommandIdActsOnce) {
  auto c = test_clock();
  auto m = running_job(spec_with({{"w", 1}}), c);
  on_command(m, Action::AbortJob, "same", c);
  finish_killed(m, c);
  on_command(m, Action::ResumeJob, "resume-1", c);
  auto version = m.job.status.version;
  auto fx = on_command(m, Action::ResumeJob, "resume-1", c);  // the client retried
  EXPECT_FALSE(fx.changed);
  EXPECT_EQ(m.job.status.version, version);
}

TEST(JobPhases, MaxRetryCountsRestarts) {
  // volcano#2012: maxRetry 2 means two restarts after the first run.
  auto c = test_clock();
  auto spec = spec_with({{"w", 1}});
  spec.max_retry = 2;
  spec.policies = {policy(Event::PodFailed, Action::RestartJob)};
  auto m = running_job(spec, c);
  int runs = 1;
  while (true) {
    report(m, "job-w-0", PodPhase::Failed, c, 1);
    if (phase(m) != JobPhase::Pending) break;
    place_all(m, c);
    report(m, "job-w-0", PodPhase::Running, c);
    ++runs;
  }
  EXPECT_EQ(runs, 3);
  EXPECT_EQ(phase(m), JobPhase::Failed);
  EXPECT_EQ(m.job.status.retry_count, 2);
  EXPECT_EQ(m.job.status.version, 2);
}

TEST(JobPhases, OutOfSyncDeathsAreNotEvictionsOrFailures) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 2}});
  spec.policies = {policy(Event::Any, Action::RestartJob)};
  auto m = running_job(spec, c);
  on_command(m, Action::AbortJob, "cmd-1", c);
  finish_killed(m, c);  // exit 143 after SIGTERM, but the controller did it
  EXPECT_EQ(phase(m), JobPhase::Aborted);
  EXPECT_EQ(m.job.status.retry_count, 0);
}

TEST(JobPhases, StalePodEventsOnlySync) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 2}});
  spec.policies = {policy(Event::PodFailed, Action::RestartJob)};
  auto m = running_job(spec, c);
  // A pod that ended before the restart and reports late is of the old version: SyncJob.
  Pod late = m.pods.at("job-w-1");
  report(m, "job-w-0", PodPhase::Failed, c, 1);
  finish_killed(m, c);
  ASSERT_EQ(phase(m), JobPhase::Pending);
  late.phase = PodPhase::Failed;
  late.containers = {{"main", ContainerState::Terminated, 1, 0, "Error", 0, 0}};
  on_pod_report(m, late, c);
  EXPECT_EQ(phase(m), JobPhase::Pending);
  EXPECT_EQ(m.job.status.retry_count, 1);
}

}  // namespace
}  // namespace caldera
