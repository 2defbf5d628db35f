// A Kubernetes Job's controller through whole lives, event by event (the ported Kubernetes tables
// check single syncs): each test is named after what a user of the kind sees happen.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "actors/job/core/batch_job_controller.hpp"
#include "actors/job/core/pod_failure_policy.hpp"
#include "actors/job/core/pod_template.hpp"
#include "messages/model/batch_job.hpp"
#include "tests/unit/job_test_support.hpp"

namespace caldera {
namespace {

using testing::at;
using testing::place_all;
using testing::report;
using testing::test_clock;

BatchJobSpec batch_spec(int32_t parallelism, std::optional<int32_t> completions) {
  BatchJobSpec s;
  s.name = "pi";
  s.namespace_ = "default";
  s.parallelism = parallelism;
  s.completions = completions;
  s.template_.restart_policy = "Never";
  s.template_.containers.push_back(Container{"main", "", {"true"}, {}, {}, {}, {}, {}});
  return s;
}

JobModel started(BatchJobSpec spec, const Clock& c) {
  auto m = new_batch_job(to_job_spec(std::move(spec)), "u1", c);
  sync_job(m, c);
  return m;
}

std::vector<std::string> live_pods(const JobModel& m) {
  std::vector<std::string> out;
  for (const auto& [name, p] : m.pods.map())
    if (is_live(p) && !p.out_of_sync) out.push_back(name);
  return out;
}

const BatchJobStatus& status(const JobModel& m) {
  return *m.job.status.batch;
}

// The reason of the job's condition of this type; "(none)" without one.
std::string reason_of(const JobModel& m, const char* type) {
  const auto* c = find_condition(status(m), type);
  return c ? c->reason : "(none)";
}

std::vector<std::string> condition_types(const JobModel& m) {
  std::vector<std::string> out;
  for (const auto& c : status(m).conditions) out.push_back(c.type + "=" + c.status);
  return out;
}

// Places the waiting pods and reports each live one Running, then `phase` for the first `n`.
void run_and_end(JobModel& m, const Clock& c, size_t n, PodPhase phase, int32_t exit_code = 0) {
  place_all(m, c);
  auto names = live_pods(m);
  for (const auto& name : names)
    if (m.pods.at(name).phase == PodPhase::Pending) report(m, name, PodPhase::Running, c);
  for (size_t i = 0; i < n && i < names.size(); ++i) report(m, names[i], phase, c, exit_code);
}

TEST(BatchJobController, AnIndexedJobRunsEachIndexOnceNeverMoreThanParallelismAndCompletes) {
  auto c = test_clock();
  auto spec = batch_spec(2, 5);
  spec.completion_mode = "Indexed";
  auto m = started(spec, c);
  std::multiset<int32_t> ran;
  int64_t now = 1000;
  while (!batch_job_finished(m) && now < 100'000) {
    auto t = at(c, now += 100);
    auto live = live_pods(m);
    ASSERT_LE(live.size(), 2u) << "never more than parallelism at once";
    ASSERT_FALSE(live.empty());
    ran.insert(m.pods.at(live.front()).index);
    run_and_end(m, t, 1, PodPhase::Succeeded);
  }
  EXPECT_TRUE(batch_job_finished(m));
  EXPECT_EQ(ran, (std::multiset<int32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(status(m).completed_indexes, "0-4");
  EXPECT_EQ(status(m).succeeded, 5);
  EXPECT_EQ(condition_types(m),
            (std::vector<std::string>{"SuccessCriteriaMet=True", "Complete=True"}));
  EXPECT_EQ(reason_of(m, kJobComplete), "CompletionsReached");
  EXPECT_GT(status(m).completion_ms, 0);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Completed);
  EXPECT_TRUE(is_settled(m));
}

TEST(BatchJobController, AnIndexedPodIsNamedAndToldItsIndex) {
  auto c = test_clock();
  auto spec = batch_spec(1, 3);
  spec.completion_mode = "Indexed";
  auto m = started(spec, c);
  auto live = live_pods(m);
  ASSERT_EQ(live.size(), 1u);
  const Pod& p = m.pods.at(live.front());
  EXPECT_EQ(p.index, 0);
  EXPECT_EQ(p.name.rfind("pi-0-", 0), 0u) << p.name;
  EXPECT_EQ(p.name.size(), std::string("pi-0-").size() + 5);
  auto rt = pod_runtime(m.job.spec, p, m.pods);
  ASSERT_TRUE(rt);
  std::map<std::string, std::string> env;
  for (const auto& e : rt->containers.at(0).env) env[e.name] = e.value;
  EXPECT_EQ(env["JOB_COMPLETION_INDEX"], "0");
  EXPECT_EQ(env["HOSTNAME"], "pi-0");
  EXPECT_EQ(env.count("VC_TASK_INDEX"), 0u) << "no Volcano variables in a Kubernetes Job's pod";
}

TEST(BatchJobController, ANonIndexedPodIsNamedJobDashSuffix) {
  auto c = test_clock();
  auto m = started(batch_spec(1, 1), c);
  auto live = live_pods(m);
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live.front().rfind("pi-", 0), 0u);
  EXPECT_EQ(live.front().size(), std::string("pi-").size() + 5);
  EXPECT_EQ(m.pods.at(live.front()).index, -1);
}

TEST(BatchJobController, AFailedPodIsReplacedOnlyAfterTheBackOffAndTheLimitFailsTheJob) {
  auto c = test_clock(1000);
  auto spec = batch_spec(1, 1);
  spec.backoff_limit = 1;
  auto m = started(spec, c);
  run_and_end(m, c, 1, PodPhase::Failed, 1);
  EXPECT_EQ(status(m).failed, 1);
  EXPECT_TRUE(live_pods(m).empty()) << "the replacement waits for the back-off";
  ASSERT_EQ(next_due_ms(m), 1000 + 10'000);
  on_tick(m, at(c, 10'999));
  EXPECT_TRUE(live_pods(m).empty());
  on_tick(m, at(c, 11'000));
  ASSERT_EQ(live_pods(m).size(), 1u) << "created once 10 s have passed";
  run_and_end(m, at(c, 12'000), 1, PodPhase::Failed, 1);
  EXPECT_EQ(status(m).failed, 2);
  EXPECT_EQ(condition_types(m), (std::vector<std::string>{"FailureTarget=True", "Failed=True"}));
  EXPECT_EQ(reason_of(m, kJobFailed), "BackoffLimitExceeded");
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Failed);
  EXPECT_EQ(status(m).completion_ms, 0) << "a failed job has no completion time";
}

TEST(BatchJobController, TheBackOffDoublesWithEachFailureAndASuccessResetsIt) {
  auto c = test_clock(1000);
  auto spec = batch_spec(1, 2);
  spec.backoff_limit = 10;
  auto m = started(spec, c);
  run_and_end(m, c, 1, PodPhase::Failed, 1);
  on_tick(m, at(c, 11'000));
  run_and_end(m, at(c, 11'000), 1, PodPhase::Failed, 1);
  EXPECT_EQ(next_due_ms(m), 11'000 + 20'000);
  on_tick(m, at(c, 31'000));
  run_and_end(m, at(c, 31'000), 1, PodPhase::Succeeded);
  EXPECT_EQ(live_pods(m).size(), 1u) << "after a success the next pod starts at once";
}

TEST(BatchJobController, PodFailurePolicyFailJobOnAnExitCodeFailsTheJobAfterOnePod) {
  auto c = test_clock();
  auto spec = batch_spec(2, 4);
  PodFailurePolicyRule rule;
  rule.action = "FailJob";
  rule.on_exit_codes = ExitCodeRequirement{"main", "In", {42}};
  spec.pod_failure_policy = std::vector<PodFailurePolicyRule>{rule};
  auto m = started(spec, c);
  run_and_end(m, c, 1, PodPhase::Failed, 42);
  EXPECT_EQ(status(m).failed, 2) << "the failed pod, and the running one deleted with the job";
  const auto* target = find_condition(status(m), kJobFailureTarget);
  ASSERT_TRUE(target);
  EXPECT_EQ(target->reason, "PodFailurePolicy");
  EXPECT_NE(target->message.find("failed with exit code 42 matching FailJob rule at index 0"),
            std::string::npos)
      << target->message;
  EXPECT_FALSE(batch_job_finished(m)) << "Failed waits for the deleted pod to end";
  testing::finish_killed(m, c);
  EXPECT_EQ(condition_types(m), (std::vector<std::string>{"FailureTarget=True", "Failed=True"}));
  EXPECT_EQ(status(m).failed, 2) << "its end is not counted twice";
}

TEST(BatchJobController, ASuspendedJobHasNoPodAndAResumeStartsItAndItsDeadlineAgain) {
  auto c = test_clock(1000);
  auto spec = batch_spec(2, 2);
  spec.suspend = true;
  spec.active_deadline_seconds = 30;
  auto m = started(spec, c);
  EXPECT_TRUE(m.pods.empty());
  EXPECT_EQ(condition_types(m), (std::vector<std::string>{"Suspended=True"}));
  EXPECT_EQ(status(m).start_ms, 0);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Aborted);
  EXPECT_EQ(next_due_ms(m), std::nullopt) << "no deadline runs while suspended";
  EXPECT_TRUE(is_settled(m)) << "nothing to wait for until it is resumed";
  m.job.spec.batch->suspend = false;
  sync_job(m, at(c, 50'000));
  EXPECT_EQ(live_pods(m).size(), 2u);
  EXPECT_EQ(condition_types(m), (std::vector<std::string>{"Suspended=False"}));
  EXPECT_EQ(reason_of(m, kJobSuspended), "JobResumed");
  EXPECT_EQ(status(m).start_ms, 50'000);
  EXPECT_EQ(next_due_ms(m), 80'000);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Pending);
  run_and_end(m, at(c, 51'000), 2, PodPhase::Succeeded);
  EXPECT_TRUE(has_true_condition(status(m), kJobComplete));
}

TEST(BatchJobController, SuspendingARunningJobDeletesItsPods) {
  auto c = test_clock();
  auto m = started(batch_spec(2, 4), c);
  run_and_end(m, c, 0, PodPhase::Running);
  m.job.spec.batch->suspend = true;
  auto fx = sync_job(m, c);
  EXPECT_EQ(fx.kill.size(), 2u);
  EXPECT_EQ(status(m).active, 0);
  EXPECT_EQ(status(m).terminating, 2);
  EXPECT_NE(m.job.status.state.phase, JobPhase::Aborted) << "suspended once its pods are gone";
  testing::finish_killed(m, c);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Aborted);
  EXPECT_EQ(status(m).failed, 2) << "Kubernetes counts a deleted pod as failed";
}

TEST(BatchJobController, TheActiveDeadlineFailsTheJobWithDeadlineExceeded) {
  auto c = test_clock(1000);
  auto spec = batch_spec(1, 1);
  spec.active_deadline_seconds = 5;
  auto m = started(spec, c);
  run_and_end(m, c, 0, PodPhase::Running);
  ASSERT_EQ(next_due_ms(m), 6000);
  auto fx = on_tick(m, at(c, 6000));
  EXPECT_EQ(fx.kill.size(), 1u);
  EXPECT_EQ(reason_of(m, kJobFailureTarget), "DeadlineExceeded");
  testing::finish_killed(m, at(c, 6500));
  EXPECT_EQ(reason_of(m, kJobFailed), "DeadlineExceeded");
  EXPECT_EQ(status(m).failed, 1);
}

TEST(BatchJobController, AResumeAfterALongSuspensionStartsTheDeadlineAfresh) {
  auto c = test_clock(1000);
  auto spec = batch_spec(1, 1);
  spec.active_deadline_seconds = 60;
  auto m = started(spec, c);
  run_and_end(m, at(c, 2000), 0, PodPhase::Running);
  m.job.spec.batch->suspend = true;
  sync_job(m, at(c, 30'000));
  testing::finish_killed(m, at(c, 31'000));
  // Suspended for ten minutes, far past the deadline counted from the start.
  m.job.spec.batch->suspend = false;
  sync_job(m, at(c, 631'000));
  EXPECT_EQ(reason_of(m, kJobFailureTarget), "(none)");
  EXPECT_EQ(live_pods(m).size(), 1u);
  EXPECT_EQ(next_due_ms(m), 631'000 + 60'000);
}

TEST(BatchJobController, AnEndingJobDoesNotWaitOnTheBackOffOfPodsItWillNotMake) {
  auto c = test_clock(1000);
  auto spec = batch_spec(3, 3);
  spec.backoff_limit = 1;
  auto m = started(spec, c);
  run_and_end(m, c, 1, PodPhase::Failed, 1);  // the back-off holds its replacement
  ASSERT_EQ(m.batch.create_at_ms, 11'000);
  auto names = live_pods(m);
  report(m, names.front(), PodPhase::Failed, at(c, 2000), 1);  // past the limit: the job fails
  ASSERT_EQ(reason_of(m, kJobFailureTarget), "BackoffLimitExceeded");
  ASSERT_FALSE(batch_job_finished(m)) << "its last pod is still stopping";
  EXPECT_EQ(next_due_ms(m), std::nullopt) << "a due time now would wake it again and again";
  EXPECT_EQ(m.batch.create_at_ms, 0);
}

TEST(BatchJobController, ALostNodesPodIsADisruptionTargetThatIgnoreDoesNotCount) {
  auto c = test_clock(1000);
  auto spec = batch_spec(1, 1);
  spec.completion_mode = "Indexed";
  spec.backoff_limit = 0;
  PodFailurePolicyRule rule;
  rule.action = "Ignore";
  rule.on_pod_conditions = {{kDisruptionTarget, "True"}};
  spec.pod_failure_policy = std::vector<PodFailurePolicyRule>{rule};
  auto m = started(spec, c);
  run_and_end(m, c, 0, PodPhase::Running);
  on_node_lost(m, "n1", "heartbeats stopped", at(c, 2000));
  EXPECT_EQ(status(m).failed, 0) << "ignored: backoffLimit 0 is not exceeded";
  EXPECT_TRUE(find_condition(status(m), kJobFailureTarget) == nullptr);
  on_tick(m, at(c, 12'000));
  auto live = live_pods(m);
  ASSERT_EQ(live.size(), 1u) << "index 0 is made again";
  EXPECT_EQ(m.pods.at(live.front()).index, 0);
}

TEST(BatchJobController, ALostNodesPodCountsAgainstTheLimitWithoutAPolicy) {
  auto c = test_clock(1000);
  auto spec = batch_spec(1, 1);
  spec.backoff_limit = 0;
  auto m = started(spec, c);
  run_and_end(m, c, 0, PodPhase::Running);
  on_node_lost(m, "n1", "heartbeats stopped", at(c, 2000));
  EXPECT_EQ(status(m).failed, 1);
  EXPECT_EQ(reason_of(m, kJobFailed), "BackoffLimitExceeded");
}

TEST(BatchJobController, AWorkQueueCompletesWithItsFirstSuccessOnceNoPodRuns) {
  auto c = test_clock();
  auto m = started(batch_spec(3, std::nullopt), c);
  run_and_end(m, c, 1, PodPhase::Succeeded);
  EXPECT_EQ(live_pods(m).size(), 2u) << "the others run on; none is started";
  EXPECT_FALSE(find_condition(status(m), kJobSuccessCriteriaMet));
  for (const auto& name : live_pods(m)) report(m, name, PodPhase::Succeeded, c);
  EXPECT_TRUE(has_true_condition(status(m), kJobComplete));
  EXPECT_EQ(status(m).succeeded, 3);
}

TEST(BatchJobController, TtlAfterFinishedExpiresTheJob) {
  auto c = test_clock(1000);
  auto spec = batch_spec(1, 1);
  spec.ttl_seconds_after_finished = 60;
  auto m = started(spec, c);
  run_and_end(m, at(c, 2000), 1, PodPhase::Succeeded);
  ASSERT_TRUE(batch_job_finished(m));
  EXPECT_FALSE(is_settled(m)) << "its TTL is still to pass";
  EXPECT_EQ(next_due_ms(m), 62'000);
  EXPECT_FALSE(on_tick(m, at(c, 61'999)).expired);
  EXPECT_TRUE(on_tick(m, at(c, 62'000)).expired);
}

TEST(BatchJobController, VolcanoCommandsAreRefusedWithWhatToDoInstead) {
  auto c = test_clock();
  auto m = started(batch_spec(1, 1), c);
  auto fx = on_command(m, Action::AbortJob, "", c);
  EXPECT_NE(fx.refused.find("Kubernetes Job"), std::string::npos) << fx.refused;
  EXPECT_NE(fx.refused.find("suspend"), std::string::npos) << fx.refused;
}

TEST(BatchJobController, LoweringParallelismDeletesTheHighestIndexes) {
  auto c = test_clock();
  auto spec = batch_spec(3, 6);
  spec.completion_mode = "Indexed";
  auto m = started(spec, c);
  run_and_end(m, c, 0, PodPhase::Running);
  m.job.spec.batch->parallelism = 1;
  auto fx = sync_job(m, c);
  ASSERT_EQ(fx.kill.size(), 2u);
  auto live = live_pods(m);
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(m.pods.at(live.front()).index, 0);
}

}  // namespace
}  // namespace caldera
