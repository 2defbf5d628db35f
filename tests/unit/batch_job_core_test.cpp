// The pure parts of a Kubernetes Job's controller: completion indexes, pod back-off, active pods.
#include <gtest/gtest.h>

#include <set>

#include "actors/job/core/active_pods.hpp"
#include "actors/job/core/pod_backoff.hpp"
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
  EXPECT_EQ(format_index_intervals({0, 1, 2, 3, 5, 7, 8}), "0-3,5,7-8");
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

}  // namespace
}  // namespace caldera
