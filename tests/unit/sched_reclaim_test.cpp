// The reclaim action: a starving gang of a queue below its share takes room back from reclaimable
// queues over theirs, each victim queue keeping its share and each victim job its minAvailable.
#include <gtest/gtest.h>

#include "actors/scheduler/actions/reclaim/reclaim.hpp"
#include "actors/scheduler/core/queue_share.hpp"

namespace caldera::sched {
namespace {

ResourceList cpu(MilliValue m) {
  return ResourceList{{{"cpu", m}}};
}

// One 4-cpu node full with `held` one-cpu pods of job "b/hog" (queue b, minAvailable 1), and a
// gang of `want` one-cpu pods of queue a waiting. Queues a and b of weight 1; shares dealt.
Snapshot hogged(int held, int want, bool reclaimable = true) {
  Snapshot s;
  s.nodes["n1"] = empty_node("n1", cpu(4000));
  JobInfo hog;
  hog.uid = "b/hog";
  hog.queue = "b";
  hog.min_available = 1;
  hog.phase = PodGroupPhase::Running;
  for (int i = 0; i < held; ++i) {
    hog.tasks.push_back(
        {"h" + std::to_string(i), "", "w", 0, cpu(1000), TaskStatus::Running, "n1", {}});
    s.nodes["n1"].idle.subtract(cpu(1000));
  }
  JobInfo gang;
  gang.uid = "a/gang";
  gang.queue = "a";
  gang.min_available = want;
  gang.phase = PodGroupPhase::Inqueue;
  for (int i = 0; i < want; ++i)
    gang.tasks.push_back(
        {"g" + std::to_string(i), "", "w", 0, cpu(1000), TaskStatus::Pending, "", {}});
  s.jobs = {hog, gang};
  s.queues["a"].name = "a";
  s.queues["b"].name = "b";
  s.queues["b"].reclaimable = reclaimable;
  queue_shares(s);
  return s;
}

int count(const SessionResult& r, OpKind kind) {
  int n = 0;
  for (const auto& op : r.operations) n += op.kind == kind;
  return n;
}

TEST(Reclaim, AGangBelowItsShareTakesBackWhatAnotherQueueHoldsPastItsShare) {
  auto s = hogged(4, 2);
  ASSERT_EQ(s.queues["a"].deserved.get("cpu"), 2000);
  ASSERT_EQ(s.queues["b"].deserved.get("cpu"), 2000);
  auto r = reclaim(s, {});
  EXPECT_EQ(count(r, OpKind::Evict), 2);
  EXPECT_EQ(count(r, OpKind::Pipeline), 2);
  EXPECT_EQ(r.operations[0].reason, "Reclaimed");
  EXPECT_EQ(r.operations[0].job, "b/hog");
  EXPECT_TRUE(job_pipelined(s.jobs[1]));
  // a is up to its share; b's two leaving pods are Releasing.
  EXPECT_EQ(s.queues["a"].allocated.get("cpu"), 2000);
  int releasing = 0;
  for (const auto& t : s.jobs[0].tasks) releasing += t.status == TaskStatus::Releasing;
  EXPECT_EQ(releasing, 2);
}

TEST(Reclaim, AVictimQueueKeepsItsShareAndTheGangIsWholeOrNothing) {
  // a's gang of three would take b below its share of two: nothing is evicted.
  const auto before = hogged(4, 3);
  auto s = before;
  EXPECT_TRUE(reclaim(s, {}).operations.empty());
  EXPECT_EQ(s, before);
}

TEST(Reclaim, AQueueThatIsNotReclaimableKeepsWhatItHolds) {
  auto s = hogged(4, 2, /*reclaimable=*/false);
  EXPECT_TRUE(reclaim(s, {}).operations.empty());
}

TEST(Reclaim, IdleRoomIsUsedBeforeAnyEviction) {
  // b holds three of four cpus: one is idle, so a's gang of two evicts one pod only.
  auto s = hogged(3, 2);
  auto r = reclaim(s, {});
  EXPECT_EQ(count(r, OpKind::Evict), 1);
  EXPECT_EQ(count(r, OpKind::Pipeline), 2);
}

}  // namespace
}  // namespace caldera::sched
