// Queues in a session (Volcano's proportion plugin): deserved shares by weight, capped by what a
// queue asks and by its capability; an overused queue waits; capability is a hard cap.
#include <gtest/gtest.h>

#include "actors/scheduler/actions/allocate/allocator.hpp"

namespace caldera::sched {
namespace {

ResourceList cpu(MilliValue m) {
  return ResourceList{{{"cpu", m}}};
}

// `n` one-pod jobs of `each` cpu in queue `queue`, created after `first`.
void add_jobs(Snapshot& s, const std::string& queue, int n, MilliValue each, int64_t first) {
  for (int i = 0; i < n; ++i) {
    JobInfo j;
    j.uid = queue + "/j" + std::to_string(i);
    j.queue = queue;
    j.created_ms = first + 2 * i;  // the queues' jobs interleave in time
    j.min_available = 1;
    j.min_resources = cpu(each);
    j.tasks.push_back({j.uid + "-0", j.uid + "-0", "w", 0, cpu(each), TaskStatus::Pending, "", {}});
    s.jobs.push_back(std::move(j));
  }
}

Snapshot cluster(MilliValue cpus) {
  Snapshot s;
  s.nodes["n1"] = empty_node("n1", cpu(cpus));
  return s;
}

QueueInfo queue(const std::string& name, int32_t weight,
                std::optional<ResourceList> capability = std::nullopt) {
  QueueInfo q;
  q.name = name;
  q.weight = weight;
  q.capability = std::move(capability);
  return q;
}

// 8 cpus, queues a and b, `jobs_a` and `jobs_b` one-cpu jobs waiting in them.
Snapshot two_queues(QueueInfo a, QueueInfo b, int jobs_a = 10, int jobs_b = 10) {
  auto s = cluster(8000);
  s.queues = {{"a", std::move(a)}, {"b", std::move(b)}};
  add_jobs(s, "a", jobs_a, 1000, 0);
  add_jobs(s, "b", jobs_b, 1000, 1);
  return s;
}

TEST(Queues, DeservedSharesFollowTheWeights) {
  auto s = two_queues(queue("a", 1), queue("b", 3));
  queue_shares(s);
  EXPECT_EQ(s.queues["a"].deserved.get("cpu"), 2000);
  EXPECT_EQ(s.queues["b"].deserved.get("cpu"), 6000);
  EXPECT_EQ(s.queues["a"].request.get("cpu"), 10000);
}

TEST(Queues, WhatAQueueDoesNotAskForGoesToTheOthers) {
  auto s = two_queues(queue("a", 1), queue("b", 1), 1);
  queue_shares(s);
  EXPECT_EQ(s.queues["a"].deserved.get("cpu"), 1000);
  EXPECT_EQ(s.queues["b"].deserved.get("cpu"), 7000);
}

TEST(Queues, CapabilityCapsTheShareAndTheRestGoesToTheOthers) {
  auto s = two_queues(queue("a", 1), queue("b", 3, cpu(3000)));
  queue_shares(s);
  EXPECT_EQ(s.queues["b"].deserved.get("cpu"), 3000);
  EXPECT_EQ(s.queues["a"].deserved.get("cpu"), 5000);
}

TEST(Queues, QueuesAskingForDifferentResourcesEachGetAllOfTheirs) {
  Snapshot s;
  s.nodes["n1"] = empty_node("n1", ResourceList{{{"cpu", 8000}, {"memory", 8000}}});
  s.queues = {{"a", queue("a", 1)}, {"b", queue("b", 1)}};
  for (int i = 0; i < 16; ++i) {
    for (const char* q : {"a", "b"}) {
      JobInfo j;
      j.uid = std::string(q) + "/j" + std::to_string(i);
      j.queue = q;
      j.min_available = 1;
      ResourceList ask{{{std::string(q) == "a" ? "memory" : "cpu", 1000}}};
      j.tasks.push_back({j.uid + "-0", j.uid + "-0", "w", 0, ask, TaskStatus::Pending, "", {}});
      s.jobs.push_back(std::move(j));
    }
  }
  queue_shares(s);
  EXPECT_EQ(s.queues["a"].deserved.get("memory"), 8000);
  EXPECT_EQ(s.queues["b"].deserved.get("cpu"), 8000);
}

TEST(Queues, AWeightBelowOneCountsAsOne) {
  auto s = two_queues(queue("a", 0), queue("b", 1));
  queue_shares(s);
  EXPECT_EQ(s.queues["a"].deserved.get("cpu"), 4000);
  EXPECT_EQ(s.queues["b"].deserved.get("cpu"), 4000);
}

}  // namespace
}  // namespace caldera::sched
