// The pure parts of a Kubernetes Job's controller: completion indexes, pod back-off, active pods,
// the pod failure policy.
#include <gtest/gtest.h>

#include <set>

#include "actors/job/core/active_pods.hpp"
#include "actors/job/core/batch_job_end.hpp"
#include "actors/job/core/pod_backoff.hpp"
#include "actors/job/core/pod_failure_policy.hpp"
#include "messages/model/completion_indexes.hpp"

namespace caldera {
namespace {

TEST(CompletionIndexes, AreReadInKubernetesIntervalForm) {
  auto ok = parse_index_intervals("0-3,5,7-9", 10);
  ASSERT_TRUE(ok) << ok.error();
  EXPECT_EQ(*ok, (IndexIntervals{{0, 3}, {5, 5}, {7, 9}}));
  auto adjacent = parse_index_intervals("0-2,3", 4);
  ASSERT_TRUE(adjacent) << adjacent.error();
  EXPECT_EQ(adjacent->size(), 2u);
  for (const char* bad : {"", "a", "1-", "-1", "3-1", "5,3", "0-3,2-5", "1,,2", "0-10", "1 ,2"})
    EXPECT_FALSE(parse_index_intervals(bad, 10)) << bad;
  auto beyond = parse_index_intervals("0-4", 4);
  ASSERT_FALSE(beyond);
  EXPECT_NE(beyond.error().find("not below completions (4)"), std::string::npos) << beyond.error();
}

TEST(CompletionIndexes, AreShownInKubernetesIntervalForm) {
  EXPECT_EQ(format_index_intervals({}), "");
  EXPECT_EQ(format_index_intervals({4}), "4");
  EXPECT_EQ(format_index_intervals({0, 1, 2, 3, 5, 7, 8}), "0-3,5,7,8");  // two: a pair
  EXPECT_EQ(format_index_intervals({0, 1, 2, 3, 4}), "0-4");
  // What is shown reads back as the same set.
  std::set<int32_t> some{1, 2, 6, 9, 10, 11};
  auto back = parse_index_intervals(format_index_intervals(some), 12);
  ASSERT_TRUE(back) << back.error();
  std::set<int32_t> read;
  for (auto [lo, hi] : *back)
    for (int32_t i = lo; i <= hi; ++i) read.insert(i);
  EXPECT_EQ(read, some);
}

TEST(PodBackoff, DoublesFromTenSecondsToSixMinutes) {
  EXPECT_EQ(pod_backoff_delay_ms(0), 0);
  EXPECT_EQ(pod_backoff_delay_ms(1), 10'000);
  EXPECT_EQ(pod_backoff_delay_ms(2), 20'000);
  EXPECT_EQ(pod_backoff_delay_ms(3), 40'000);
  EXPECT_EQ(pod_backoff_delay_ms(6), 320'000);
  EXPECT_EQ(pod_backoff_delay_ms(7), 360'000);
  EXPECT_EQ(pod_backoff_delay_ms(1'000'000), 360'000);
}

TEST(PodBackoff, CountsFailuresSinceTheLastSuccess) {
  PodBackoff b;
  EXPECT_EQ(pod_allowed_at_ms(b), 0);
  record_pod_end(b, false, 1'000);
  EXPECT_EQ(pod_allowed_at_ms(b), 11'000);
  record_pod_end(b, false, 12'000);
  EXPECT_EQ(pod_allowed_at_ms(b), 32'000);
  // A failure reported late does not move the last failure back.
  record_pod_end(b, false, 5'000);
  EXPECT_EQ(b.failures_since_success, 3);
  EXPECT_EQ(pod_allowed_at_ms(b), 52'000);
  record_pod_end(b, true, 60'000);
  EXPECT_EQ(b, PodBackoff{});
  EXPECT_EQ(pod_allowed_at_ms(b), 0);
}

BatchJobSpec job(std::optional<int32_t> parallelism, std::optional<int32_t> completions) {
  BatchJobSpec s;
  s.parallelism = parallelism;
  s.completions = completions;
  return s;
}

TEST(ActivePods, AreParallelismAtMostAndNeverMoreThanTheCompletionsMissing) {
  EXPECT_EQ(wanted_active(job(2, 5), 0, 0), 2);
  EXPECT_EQ(wanted_active(job(2, 5), 2, 4), 1);
  EXPECT_EQ(wanted_active(job(2, 5), 0, 5), 0);
  EXPECT_EQ(wanted_active(job(2, 5), 0, 7), 0);
  EXPECT_EQ(wanted_active(job(std::nullopt, std::nullopt), 0, 0), 1);  // both default to 1
  EXPECT_EQ(wanted_active(job(0, 5), 0, 0), 0);
  auto suspended = job(3, 5);
  suspended.suspend = true;
  EXPECT_EQ(wanted_active(suspended, 3, 0), 0);
}

TEST(ActivePods, AWorkQueueStartsNoMoreOnceOneSucceeded) {
  EXPECT_EQ(wanted_active(job(4, std::nullopt), 0, 0), 4);
  EXPECT_EQ(wanted_active(job(4, std::nullopt), 3, 1), 3);
  EXPECT_EQ(wanted_active(job(4, std::nullopt), 0, 1), 0);
}

TEST(ActivePods, TakeTheLowestIndexesNotDoneNotFailedNotRunning) {
  EXPECT_EQ(first_pending_indexes(5, {}, {}, {}, 2), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(first_pending_indexes(5, {0, 2}, {3}, {1}, 3), (std::vector<int32_t>{4}));
  EXPECT_EQ(first_pending_indexes(5, {0, 1, 2, 3, 4}, {}, {}, 2), std::vector<int32_t>{});
  EXPECT_EQ(first_pending_indexes(3, {}, {}, {}, 0), std::vector<int32_t>{});
}

Pod failed_pod(std::vector<std::pair<std::string, int32_t>> exits, std::string reason = "") {
  Pod p;
  p.name = "train-0-abcde";
  p.namespace_ = "ml";
  p.phase = PodPhase::Failed;
  p.reason = std::move(reason);
  for (auto& [name, code] : exits) {
    ContainerStatus c;
    c.name = name;
    c.state = ContainerState::Terminated;
    c.exit_code = code;
    p.containers.push_back(c);
  }
  return p;
}

std::vector<PodFailurePolicyRule> policy() {
  return {
      {"FailJob", ExitCodeRequirement{"main", "In", {42}}, {}},
      {"Ignore", std::nullopt, {{kDisruptionTarget, "True"}}},
      {"Count", ExitCodeRequirement{"", "NotIn", {1, 2}}, {}},
  };
}

TEST(PodFailurePolicy, TheFirstRuleAFailedPodMeetsDecides) {
  auto fail = match_pod_failure_policy(policy(), failed_pod({{"main", 42}}), "ml/train");
  ASSERT_TRUE(fail);
  EXPECT_EQ(fail->rule, 0u);
  EXPECT_EQ(fail->action, "FailJob");
  EXPECT_EQ(
      fail->message,
      "Container main for pod ml/train-0-abcde failed with exit code 42 matching FailJob rule "
      "at index 0");
  // Another container with 42 is not "main": the NotIn rule takes it.
  auto other = match_pod_failure_policy(policy(), failed_pod({{"side", 42}}), "ml/train");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->rule, 2u);
  EXPECT_EQ(other->action, "Count");
  // Exit codes the NotIn rule lists, and 0, match nothing: the failure counts as usual.
  EXPECT_FALSE(match_pod_failure_policy(policy(), failed_pod({{"main", 1}, {"side", 0}}), "ml/t"));
  // Only a Failed pod is matched.
  auto running = failed_pod({{"main", 42}});
  running.phase = PodPhase::Running;
  EXPECT_FALSE(match_pod_failure_policy(policy(), running, "ml/train"));
}

TEST(PodFailurePolicy, APodEvictedByALostNodeOrAPreemptionIsADisruptionTarget) {
  for (std::string_view reason : {kNodeLost, kPreempted, kReclaimed}) {
    auto pod = failed_pod({{"main", 137}}, std::string(reason));
    ASSERT_EQ(pod_conditions(pod).size(), 1u) << reason;
    // The exit code rule comes first and does not match 137: the condition rule does.
    auto m = match_pod_failure_policy(policy(), pod, "ml/train");
    ASSERT_TRUE(m) << reason;
    EXPECT_EQ(m->action, "Ignore") << reason;
    EXPECT_EQ(
        m->message,
        "Pod ml/train-0-abcde has condition DisruptionTarget matching Ignore rule at index 1");
  }
  auto lease = failed_pod({{"main", 143}});
  lease.containers[0].reason = std::string(kLeaseExpired);
  ASSERT_TRUE(match_pod_failure_policy(policy(), lease, "ml/train"));
  EXPECT_EQ(match_pod_failure_policy(policy(), lease, "ml/train")->action, "Ignore");
  EXPECT_TRUE(pod_conditions(failed_pod({{"main", 1}})).empty());
}

BatchJobSpec indexed(int32_t completions) {
  auto s = job(2, completions);
  s.completion_mode = "Indexed";
  return s;
}

TEST(BatchJobEnd, CompletesOnceTheCompletionsSucceededAndNothingRuns) {
  BatchJobProgress p;
  p.succeeded = 4;
  EXPECT_FALSE(batch_job_end(job(2, 5), p, 0));
  p.succeeded = 5;
  p.active = 1;
  EXPECT_FALSE(batch_job_end(job(2, 5), p, 0));
  p.active = 0;
  auto end = batch_job_end(job(2, 5), p, 0);
  ASSERT_TRUE(end);
  EXPECT_TRUE(end->complete);
  EXPECT_EQ(end->reason, "CompletionsReached");
  // A work queue: one success, once its other pods have ended.
  BatchJobProgress q;
  q.succeeded = 1;
  q.active = 2;
  EXPECT_FALSE(batch_job_end(job(3, std::nullopt), q, 0));
  q.active = 0;
  ASSERT_TRUE(batch_job_end(job(3, std::nullopt), q, 0));
  // Indexed: an index counts once, however many of its pods succeeded.
  BatchJobProgress r;
  r.succeeded = 5;
  r.succeeded_indexes = {0, 1, 2, 4};
  EXPECT_FALSE(batch_job_end(indexed(5), r, 0));
  r.succeeded_indexes.insert(3);
  ASSERT_TRUE(batch_job_end(indexed(5), r, 0));
}

TEST(BatchJobEnd, FailsPastItsBackoffLimitOrDeadlineOrByItsPolicy) {
  BatchJobProgress p;
  p.failed = 6;
  EXPECT_FALSE(batch_job_end(job(1, 1), p, 0));  // the default limit is 6
  p.failed = 7;
  auto backoff = batch_job_end(job(1, 1), p, 0);
  ASSERT_TRUE(backoff);
  EXPECT_FALSE(backoff->complete);
  EXPECT_EQ(backoff->reason, "BackoffLimitExceeded");
  auto limited = job(1, 1);
  limited.backoff_limit = 0;
  p.failed = 1;
  EXPECT_EQ(batch_job_end(limited, p, 0)->reason, "BackoffLimitExceeded");

  auto deadline = job(1, 1);
  deadline.active_deadline_seconds = 10;
  BatchJobProgress d;
  d.start_ms = 1'000;
  d.active = 1;
  EXPECT_FALSE(batch_job_end(deadline, d, 10'999));
  EXPECT_EQ(batch_job_end(deadline, d, 11'000)->reason, "DeadlineExceeded");
  deadline.suspend = true;  // a suspended job's deadline waits
  EXPECT_FALSE(batch_job_end(deadline, d, 11'000));

  BatchJobProgress f;
  f.fail_job = FailurePolicyMatch{0, "FailJob", "Container main for pod ml/x failed"};
  auto policy = batch_job_end(job(1, 1), f, 0);
  ASSERT_TRUE(policy);
  EXPECT_EQ(policy->reason, "PodFailurePolicy");
  EXPECT_EQ(policy->message, "Container main for pod ml/x failed");
}

TEST(BatchJobEnd, PerIndexLimitsFailTheJobByItsFailedIndexes) {
  auto spec = indexed(4);
  spec.backoff_limit_per_index = 1;
  spec.max_failed_indexes = 1;
  BatchJobProgress p;
  p.failed = 50;  // no backoffLimit of its own: only the indexes count
  p.failed_indexes = {1};
  p.succeeded_indexes = {0, 2};
  p.active = 1;
  EXPECT_FALSE(batch_job_end(spec, p, 0));
  p.failed_indexes.insert(3);
  EXPECT_EQ(batch_job_end(spec, p, 0)->reason, "MaxFailedIndexesExceeded");
  spec.max_failed_indexes.reset();
  EXPECT_FALSE(batch_job_end(spec, p, 0));  // every index is done, but a pod still runs
  p.active = 0;
  EXPECT_EQ(batch_job_end(spec, p, 0)->reason, "FailedIndexes");
}

TEST(BatchJobEnd, ASuccessPolicyCompletesTheJobEarly) {
  std::vector<SuccessPolicyRule> rules{
      {std::string("0,2-3"), std::nullopt}, {std::nullopt, 3}, {std::string("4-9"), 2}};
  EXPECT_FALSE(matching_success_rule(rules, {0, 2}, 10));
  EXPECT_EQ(matching_success_rule(rules, {0, 2, 3}, 10), 0u);
  EXPECT_EQ(matching_success_rule(rules, {1, 5, 9}, 10), 1u);
  EXPECT_EQ(matching_success_rule(rules, {5, 9}, 10), 2u);
  EXPECT_FALSE(matching_success_rule(rules, {1, 5}, 10));
  auto spec = indexed(10);
  spec.success_policy = rules;
  BatchJobProgress p;
  p.succeeded_indexes = {0, 2, 3};
  p.active = 2;
  auto end = batch_job_end(spec, p, 0);
  ASSERT_TRUE(end);
  EXPECT_TRUE(end->complete);
  EXPECT_EQ(end->reason, "SuccessPolicy");
  EXPECT_EQ(end->message, "Matched rules at index 0");
}

}  // namespace
}  // namespace caldera
