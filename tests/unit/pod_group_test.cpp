// The gang a job asks the scheduler for: MinMember and MinTaskMember, less what is bound.
#include <gtest/gtest.h>

#include "actors/job/core/pod_group.hpp"
#include "tests/unit/job_test_support.hpp"

namespace caldera {
namespace {

using namespace caldera::testing;

TEST(PodGroup, EveryTaskNeedsItsMinAvailableOrReplicasWhenTheJobNeedsThatMany) {
  auto c = test_clock();
  auto spec = spec_with({{"ps", 1}, {"worker", 4}});
  spec.tasks[1].min_available = 2;
  spec.min_available = 3;  // = 1 (ps replicas) + 2 (worker minAvailable)
  auto r = pod_group_request(pending_job(spec, c));
  EXPECT_EQ(r.pods.size(), 5u);
  EXPECT_EQ(r.min_count, 3);
  EXPECT_EQ(r.task_min, (std::map<std::string, int32_t>{{"ps", 1}, {"worker", 2}}));
  EXPECT_EQ(r.pods[0].task, "ps");
}

TEST(PodGroup, TaskMinimumsAreSkippedWhenTheJobNeedsFewerThanTheirSum) {
  auto c = test_clock();
  auto spec = spec_with({{"ps", 1}, {"worker", 4}});
  spec.min_available = 2;  // < 1 + 4: Volcano skips the task-level check
  auto r = pod_group_request(pending_job(spec, c));
  EXPECT_EQ(r.min_count, 2);
  EXPECT_TRUE(r.task_min.empty());
}

TEST(PodGroup, BoundPodsCountAgainstTheJobAndTheirTask) {
  auto c = test_clock();
  auto spec = spec_with({{"ps", 1}, {"worker", 4}});
  spec.tasks[1].min_available = 2;
  spec.min_available = 3;
  auto m = pending_job(spec, c);
  m.pods.at("job-ps-0").node = "n1";
  m.pods.at("job-worker-0").node = "n1";
  auto r = pod_group_request(m);
  EXPECT_EQ(r.pods.size(), 3u);
  EXPECT_EQ(r.min_count, 1);
  EXPECT_EQ(r.task_min, (std::map<std::string, int32_t>{{"worker", 1}}));
}

TEST(PodGroup, AManyReplicaJobAsksForItsNextPodsOnly) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 3 * kMaxPodAsks}});
  spec.min_available = 1;
  auto r = pod_group_request(pending_job(spec, c));
  EXPECT_EQ(r.pods.size(), static_cast<size_t>(kMaxPodAsks));
  EXPECT_EQ(r.min_count, 1);
}

TEST(PodGroup, AGangLargerThanTheCapAsksForAllItNeedsAtOnce) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 2 * kMaxPodAsks}});
  spec.min_available = kMaxPodAsks + 10;
  auto r = pod_group_request(pending_job(spec, c));
  EXPECT_EQ(r.pods.size(), static_cast<size_t>(kMaxPodAsks + 10));
  EXPECT_EQ(r.min_count, kMaxPodAsks + 10);
}

TEST(PodGroup, EachTaskMinimumIsAskedForEvenPastTheCap) {
  auto c = test_clock();
  // "a" sorts first and would fill the cap alone; "b" still gets its minimum in.
  auto spec = spec_with({{"a", 2 * kMaxPodAsks}, {"b", 10}});
  spec.tasks[0].min_available = 1;
  spec.tasks[1].min_available = 5;
  spec.min_available = 6;
  auto r = pod_group_request(pending_job(spec, c));
  EXPECT_EQ(r.pods.size(), static_cast<size_t>(kMaxPodAsks));
  size_t of_b = 0;
  for (const auto& a : r.pods) of_b += a.task == "b";
  EXPECT_GE(of_b, 5u);
  EXPECT_EQ(r.task_min, (std::map<std::string, int32_t>{{"a", 1}, {"b", 5}}));
}

TEST(PodGroup, AsksCarryTheirTasksClassAndPartitionAndMinPartitionsAreWholePods) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 6}, {"ps", 1}});
  spec.tasks[0].partition_policy = PartitionPolicy{2, 2};
  spec.tasks[0].min_available = 4;
  spec.tasks[1].template_.priority_class_name = "high";
  auto m = pending_job(spec, c);
  m.pods.at("job-w-0").node = "n1";  // one pod of partition 0 is bound
  auto r = pod_group_request(m);
  EXPECT_EQ(r.partition_min, (std::map<std::string, int32_t>{{"w", 3}}))
      << "4 pods of whole partitions, less the one bound";
  std::map<std::string, int32_t> index_of;
  for (const auto& [name, pod] : m.pods) index_of[pod.uid] = pod.index;
  ASSERT_EQ(r.pods.size(), 6u);
  for (const auto& a : r.pods) {
    if (a.task == "ps") {
      EXPECT_EQ(a.priority_class, "high");
      EXPECT_EQ(a.partition, -1);
    } else {
      EXPECT_EQ(a.priority_class, "");
      EXPECT_EQ(a.partition, index_of.at(a.uid) / 2) << a.uid;
    }
  }
}

}  // namespace
}  // namespace caldera
