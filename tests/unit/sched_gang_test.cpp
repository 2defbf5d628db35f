// Seed 004's gang checks on the session's pod groups: valid, ready, pipelined, starving, the job
// order and the preemptable rule.
#include <gtest/gtest.h>

#include "actors/scheduler/core/job_info.hpp"

namespace caldera::sched {
namespace {

ResourceList cpu(MilliValue m) {
  return ResourceList{{{"cpu", m}}};
}

// A job of `statuses.size()` pods of task `task` (1 cpu each), needing `min`.
JobInfo job(const std::string& uid, int32_t min, std::vector<TaskStatus> statuses,
            const std::string& task = "worker") {
  JobInfo j;
  j.uid = uid;
  j.min_available = min;
  for (size_t i = 0; i < statuses.size(); ++i)
    j.tasks.push_back({uid + "-" + std::to_string(i),
                       uid + "-" + task + "-" + std::to_string(i),
                       task,
                       0,
                       cpu(1000),
                       statuses[i],
                       "",
                       {}});
  return j;
}

using S = TaskStatus;

TEST(Gang, AllocatedStatusesAreBoundBindingRunningAndAllocated) {
  for (auto s : {S::Bound, S::Binding, S::Running, S::Allocated}) EXPECT_TRUE(allocated_status(s));
  for (auto s : {S::Pending, S::Pipelined, S::Releasing, S::Succeeded, S::Failed, S::Unknown})
    EXPECT_FALSE(allocated_status(s)) << to_string(s);
}

TEST(Gang, CountsFollowTheStatuses) {
  auto j =
      job("a", 4, {S::Running, S::Allocated, S::Pipelined, S::Pending, S::Succeeded, S::Failed});
  EXPECT_EQ(j.ready_task_num(), 2);
  EXPECT_EQ(j.waiting_task_num(), 1);
  EXPECT_EQ(j.valid_task_num(), 5);  // all but Failed
  EXPECT_EQ(j.pending_best_effort_task_num(), 0);
}

TEST(Gang, JobValid_WhenValidTasksReachMinAvailable) {
  EXPECT_FALSE(job_valid(job("a", 2, {S::Pending, S::Succeeded, S::Failed})));
  auto invalid = job_valid(job("a", 3, {S::Pending, S::Failed, S::Failed}));
  ASSERT_TRUE(invalid);
  EXPECT_EQ(invalid->reason, "NotEnoughPods");
  EXPECT_EQ(invalid->message, "Not enough valid tasks for gang-scheduling, valid: 1, min: 3");
}

TEST(Gang, JobValid_FailsWhenATaskHasFewerValidPodsThanItsMinimum) {
  auto j = job("a", 3, {S::Pending, S::Pending}, "ps");
  auto w = job("a", 3, {S::Failed, S::Pending}, "worker");
  j.tasks.insert(j.tasks.end(), w.tasks.begin(), w.tasks.end());
  j.task_min_available = {{"ps", 1}, {"worker", 2}};
  auto invalid = job_valid(j);
  ASSERT_TRUE(invalid);
  EXPECT_EQ(invalid->reason, "NotEnoughPodsOfTask");
  // Task minimums summing to more than minAvailable are not checked (Volcano skips them).
  j.min_available = 2;
  EXPECT_TRUE(j.check_task_valid());
}

TEST(Gang, JobReady_WhenReadyPlusBestEffortReachMinAvailable) {
  EXPECT_TRUE(job_ready(job("a", 2, {S::Running, S::Allocated, S::Pending})));
  EXPECT_FALSE(job_ready(job("a", 2, {S::Running, S::Pipelined, S::Pending})));
  auto best_effort = job("a", 2, {S::Running, S::Pending});
  best_effort.tasks[1].requests = {};
  EXPECT_TRUE(job_ready(best_effort));
}

TEST(Gang, JobReady_NeedsEveryTaskMinimumAllocated) {
  auto j = job("a", 2, {S::Allocated, S::Allocated}, "worker");
  auto ps = job("a", 2, {S::Pending}, "ps");
  j.tasks.push_back(ps.tasks[0]);
  j.min_available = 3;
  j.task_min_available = {{"ps", 1}, {"worker", 2}};
  EXPECT_FALSE(job_ready(j));  // 2 of 3, and ps has none
  j.tasks[2].status = S::Allocated;
  EXPECT_TRUE(job_ready(j));
}

TEST(Gang, JobPipelined_CountsPipelinedPodsWhereReadyDoesNot) {
  auto j = job("a", 3, {S::Running, S::Pipelined, S::Pipelined});
  EXPECT_TRUE(job_pipelined(j));
  EXPECT_FALSE(job_ready(j));
  j.tasks[2].status = S::Pending;
  EXPECT_FALSE(job_pipelined(j));
}

TEST(Gang, JobStarving_WhileWaitingPlusReadyIsBelowMinAvailable) {
  EXPECT_TRUE(job_starving(job("a", 3, {S::Running, S::Pipelined, S::Pending})));
  EXPECT_FALSE(job_starving(job("a", 2, {S::Running, S::Pipelined, S::Pending})));
}

TEST(Gang, JobOrder_PriorityThenUnreadyFirstThenAgeThenUid) {
  auto ready = job("a", 1, {S::Running, S::Pending});
  auto unready = job("b", 2, {S::Pending, S::Pending});
  ready.created_ms = unready.created_ms = 10;
  EXPECT_TRUE(job_before(unready, ready));
  ready.priority = 5;
  EXPECT_TRUE(job_before(ready, unready));
  auto older = job("z", 2, {S::Pending}), newer = job("y", 2, {S::Pending});
  older.created_ms = 1;
  newer.created_ms = 2;
  EXPECT_TRUE(job_before(older, newer));
  newer.created_ms = 1;
  EXPECT_TRUE(job_before(newer, older));  // same age: by uid
}

TEST(Gang, TaskOrder_HigherTaskPriorityFirst) {
  TaskInfo low{"1", "a-w-0", "w", 0, {}, S::Pending, "", {}};
  TaskInfo high{"2", "a-ps-0", "ps", 10, {}, S::Pending, "", {}};
  EXPECT_TRUE(task_before(high, low));
  EXPECT_FALSE(task_before(low, high));
}

TEST(Gang, Preemptable_NeverTakesAVictimJobBelowItsMinAvailable) {
  auto victim = job("v", 2, {S::Running, S::Running, S::Running, S::Running});
  std::map<std::string, const JobInfo*> jobs{{"v", &victim}};
  std::vector<std::pair<std::string, const TaskInfo*>> candidates;
  for (const auto& t : victim.tasks) candidates.emplace_back("v", &t);
  auto victims = preemptable(jobs, candidates);
  ASSERT_EQ(victims.size(), 2u);  // 4 ready, minAvailable 2: two may go
  EXPECT_EQ(victims[0], &victim.tasks[0]);
  EXPECT_EQ(victims[1], &victim.tasks[1]);
}

}  // namespace
}  // namespace caldera::sched
