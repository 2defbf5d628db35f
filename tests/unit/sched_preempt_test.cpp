// The preempt action: a starving high-priority gang evicts lower-priority pods and is pipelined,
// never taking a victim's job below its minAvailable; otherwise nothing changes.
#include <gtest/gtest.h>

#include "actors/scheduler/actions/preempt/preempt.hpp"

namespace caldera::sched {
namespace {

ResourceList cpu(MilliValue m) {
  return ResourceList{{{"cpu", m}}};
}

// One 4-cpu node full with `running` one-cpu pods of a low-priority job needing `low_min`, and a
// high-priority gang of `want` one-cpu pods waiting.
Snapshot full_node(int running, int32_t low_min, int want, int32_t high_priority = 10) {
  Snapshot s;
  s.nodes["n1"] = empty_node("n1", cpu(4000));
  JobInfo low;
  low.uid = "default/low";
  low.min_available = low_min;
  low.phase = PodGroupPhase::Running;
  for (int i = 0; i < running; ++i) {
    low.tasks.push_back({"l" + std::to_string(i),
                         "low-w-" + std::to_string(i),
                         "w",
                         0,
                         cpu(1000),
                         TaskStatus::Running,
                         "n1",
                         {}});
    s.nodes["n1"].idle.subtract(cpu(1000));
  }
  JobInfo high;
  high.uid = "default/high";
  high.priority = high_priority;
  high.min_available = want;
  high.phase = PodGroupPhase::Inqueue;
  for (int i = 0; i < want; ++i)
    high.tasks.push_back({"h" + std::to_string(i),
                          "high-w-" + std::to_string(i),
                          "w",
                          0,
                          cpu(1000),
                          TaskStatus::Pending,
                          "",
                          {}});
  s.jobs = {low, high};
  return s;
}

TEST(Preempt, AStarvingHighPriorityGangEvictsLowerPriorityPodsAndIsPipelined) {
  auto s = full_node(4, 1, 2);
  auto r = preempt(s, {});
  ASSERT_EQ(r.operations.size(), 4u);
  EXPECT_EQ(r.operations[0].kind, OpKind::Evict);
  EXPECT_EQ(r.operations[0].reason, "Preempted");
  EXPECT_EQ(r.operations[0].job, "default/low");
  int evicted = 0, pipelined = 0;
  for (const auto& op : r.operations) {
    evicted += op.kind == OpKind::Evict;
    pipelined += op.kind == OpKind::Pipeline;
  }
  EXPECT_EQ(evicted, 2);
  EXPECT_EQ(pipelined, 2);
  EXPECT_TRUE(job_pipelined(s.jobs[1]));
  EXPECT_EQ(s.jobs[0].ready_task_num(), 2);  // the victim job keeps two, above its minimum
}

TEST(Preempt, AVictimJobIsNeverTakenBelowItsMinAvailableAndTheStatementIsDiscarded) {
  const auto before = full_node(4, 3, 2);
  auto s = before;
  auto r = preempt(s, {});
  EXPECT_TRUE(r.operations.empty());  // one pod could go, the gang needs two
  EXPECT_EQ(s, before);
}

TEST(Preempt, EqualPriorityDoesNotPreempt) {
  auto s = full_node(4, 1, 2, /*high_priority=*/0);
  EXPECT_TRUE(preempt(s, {}).operations.empty());
}

// preemptionPolicy: Never: the gang waits its turn, whatever its priority.
TEST(Preempt, AGangWhoseClassNeverPreemptsEvictsNothing) {
  auto s = full_node(4, 1, 2);
  s.jobs[1].may_preempt = false;
  EXPECT_TRUE(preempt(s, {}).operations.empty());
}

TEST(Preempt, RoomThatEvictionsAlreadyFreeIsUsedBeforeEvictingMore) {
  auto s = full_node(4, 1, 1);
  Statement earlier(s);
  earlier.evict(0, 0, "Preempted");  // one pod of low is on its way out
  earlier.commit();
  auto r = preempt(s, {});
  ASSERT_EQ(r.operations.size(), 1u);
  EXPECT_EQ(r.operations[0].kind, OpKind::Pipeline);
}

TEST(Preempt, OnlyRunningPodsOfTheSameQueueAreVictims) {
  auto other_queue = full_node(4, 1, 2);
  other_queue.jobs[0].queue = "batch";  // reclaim's business, not preempt's
  EXPECT_TRUE(preempt(other_queue, {}).operations.empty());

  auto binding = full_node(4, 1, 2);
  for (auto& t : binding.jobs[0].tasks) t.status = TaskStatus::Binding;
  EXPECT_TRUE(preempt(binding, {}).operations.empty());
}

}  // namespace
}  // namespace caldera::sched
