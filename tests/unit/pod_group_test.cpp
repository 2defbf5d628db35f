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

}  // namespace
}  // namespace caldera
