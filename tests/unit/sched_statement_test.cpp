// The statement (seed 004 section 6): commit hands over what was recorded; discard undoes it in
// reverse and leaves the snapshot exactly as it was.
#include <gtest/gtest.h>

#include "actors/scheduler/core/statement.hpp"

namespace caldera::sched {
namespace {

ResourceList res(MilliValue cpu, MilliValue gpu = 0) {
  ResourceList r{{{"cpu", cpu}}};
  if (gpu) r.values["nvidia.com/gpu"] = gpu;
  return r;
}

Snapshot two_nodes_two_jobs() {
  Snapshot s;
  s.nodes["n1"] = empty_node("n1", res(4000));
  s.nodes["n2"] = empty_node("n2", res(4000, 2000));
  JobInfo a;
  a.uid = "default/a";
  a.min_available = 2;
  for (int i = 0; i < 2; ++i)
    a.tasks.push_back({"a" + std::to_string(i),
                       "a-w-" + std::to_string(i),
                       "w",
                       0,
                       res(1000, 1000),
                       TaskStatus::Pending,
                       "",
                       {}});
  JobInfo v;
  v.uid = "default/v";
  v.min_available = 1;
  v.tasks.push_back({"v0", "v-w-0", "w", 0, res(3000), TaskStatus::Running, "n1", {}});
  s.nodes["n1"].idle.subtract(res(3000));
  s.jobs = {a, v};
  return s;
}

TEST(Statement, CommitReturnsTheOperationsInOrderAndKeepsTheirEffects) {
  auto s = two_nodes_two_jobs();
  Statement stmt(s);
  stmt.evict(1, 0, "Preempted");
  stmt.pipeline(0, 0, "n1");
  stmt.allocate(0, 1, "n2");
  auto ops = stmt.commit();
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].kind, OpKind::Evict);
  EXPECT_EQ(ops[0].task_uid, "v0");
  EXPECT_EQ(ops[0].node, "n1");
  EXPECT_EQ(ops[0].reason, "Preempted");
  EXPECT_EQ(ops[1].kind, OpKind::Pipeline);
  EXPECT_EQ(ops[2].kind, OpKind::Allocate);
  EXPECT_EQ(ops[2].job, "default/a");
  EXPECT_EQ(ops[2].node, "n2");
  EXPECT_EQ(s.jobs[1].tasks[0].status, TaskStatus::Releasing);
  EXPECT_EQ(s.jobs[0].tasks[0].status, TaskStatus::Pipelined);
  EXPECT_EQ(s.jobs[0].tasks[1].status, TaskStatus::Allocated);
  EXPECT_EQ(s.nodes["n1"].releasing.get("cpu"), 3000);
  EXPECT_EQ(s.nodes["n1"].pipelined.get("cpu"), 1000);
  EXPECT_EQ(s.nodes["n2"].idle.get("cpu"), 3000);
  EXPECT_EQ(s.nodes["n2"].idle.get("nvidia.com/gpu"), 1000);
  EXPECT_EQ(stmt.size(), 0u);
}

TEST(Statement, DiscardRestoresTheSnapshotExactly) {
  const auto before = two_nodes_two_jobs();
  auto s = before;
  Statement stmt(s);
  stmt.allocate(0, 0, "n2");
  stmt.evict(1, 0, "Preempted");
  stmt.pipeline(0, 1, "n1");  // n1 has no gpu: an entry that was absent appears, then goes
  ASSERT_NE(s, before);
  stmt.discard();
  EXPECT_EQ(s, before);
  EXPECT_EQ(s.nodes["n1"].pipelined.values.count("nvidia.com/gpu"), 0u);
  EXPECT_EQ(stmt.size(), 0u);
}

TEST(Statement, AFutureIdleCountsWhatEvictionsFreeLessWhatIsPromised) {
  auto s = two_nodes_two_jobs();
  Statement stmt(s);
  stmt.evict(1, 0, "Preempted");
  EXPECT_EQ(s.nodes["n1"].future_idle().get("cpu"), 4000);
  stmt.pipeline(0, 0, "n1");
  EXPECT_EQ(s.nodes["n1"].future_idle().get("cpu"), 3000);
}

TEST(Statement, DiscardFromAMarkUndoesOnlyWhatCameAfterIt) {
  auto s = two_nodes_two_jobs();
  Statement stmt(s);
  stmt.allocate(0, 0, "n2");
  const auto kept = s;
  const size_t mark = stmt.size();
  stmt.allocate(0, 1, "n1");
  stmt.evict(1, 0, "Preempted");
  stmt.discard_from(mark);
  EXPECT_EQ(s, kept) << "a partition taken back leaves what came before it";
  ASSERT_EQ(stmt.size(), 1u);
  auto ops = stmt.commit();
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].task_uid, "a0");
}

}  // namespace
}  // namespace caldera::sched
