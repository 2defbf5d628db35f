// The enqueue action's checks on their own: the overcommit budget, and a queue's capability and
// share counting the pod groups it has admitted.
#include <gtest/gtest.h>

#include "actors/scheduler/core/enqueue.hpp"
#include "actors/scheduler/core/statement.hpp"

namespace caldera::sched {
namespace {

ResourceList cpu(MilliValue m) {
  return ResourceList{{{"cpu", m}}};
}

TEST(Enqueue, TheBudgetIsTheReadyNodesTimesTheFactorLessWhatTheirPodsHold) {
  Snapshot s;
  s.nodes["a"] = {"a", true, {}, cpu(2000), cpu(500), {}, {}};  // 1.5 cpu held
  s.nodes["b"] = {"b", true, {}, cpu(1000), cpu(1000), {}, {}};
  s.nodes["c"] = {"c", false, {}, cpu(8000), cpu(8000), {}, {}};  // not ready: not counted
  EXPECT_EQ(overcommit_budget(s, 1.2).get("cpu"), 3600 - 1500);
  EXPECT_EQ(overcommit_budget(s, 1.0).get("cpu"), 1500);
}

TEST(Enqueue, ABudgetRefusalNamesWhatIsShort) {
  ResourceList budget{{{"cpu", 900}, {"memory", 5000}}};
  EXPECT_FALSE(budget_refusal(budget, ResourceList{{{"cpu", 900}, {"memory", 10}}}));
  EXPECT_EQ(budget_refusal(budget, ResourceList{{{"cpu", 1000}, {"memory", 10}}}),
            "not enqueued: its minimum (cpu 1) is more than the cluster has left to admit");
  EXPECT_EQ(budget_refusal(ResourceList{{{"cpu", -200}}}, ResourceList{{{"cpu", 1}, {"gpu", 1}}}),
            "not enqueued: its minimum (cpu 1m, gpu 1m) is more than the cluster has left to "
            "admit");
}

TEST(Enqueue, AQueueRefusesPastItsCapabilityOrOnceItHoldsItsShareWithWhatItAdmitted) {
  QueueInfo q;
  q.name = "a";
  q.capability = cpu(3000);
  q.allocated = cpu(1000);
  q.deserved = cpu(2000);
  EXPECT_FALSE(queue_refusal(q, {}, cpu(1000)));
  EXPECT_FALSE(queue_refusal(q, cpu(500), cpu(1500)));  // 1.5 of 2 with it: below the share
  EXPECT_EQ(queue_refusal(q, cpu(500), cpu(1600)), "queue a is at its capability (cpu 3)");
  EXPECT_EQ(queue_refusal(q, cpu(1000), cpu(500)), "queue a holds its share (cpu 2)");
  EXPECT_EQ(share_refusal(q, cpu(1000)), queue_refusal(q, cpu(1000), cpu(500)));
  q.allocated = cpu(2000);
  EXPECT_EQ(share_refusal(q, {}), "queue a holds its share (cpu 2)");
  EXPECT_FALSE(capability_refusal(q, {}, cpu(1000)));
}

}  // namespace
}  // namespace caldera::sched
