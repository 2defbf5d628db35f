// Why a gang does not fit: its least total ask, the scheduler's message, the submit warning.
#include <gtest/gtest.h>

#include "actors/job/core/pod_group.hpp"
#include "actors/scheduler/core/gang_fit.hpp"
#include "actors/scheduler/core/placer.hpp"
#include "tests/unit/job_test_support.hpp"

namespace caldera {
namespace {

using namespace caldera::testing;

ResourceList cpu(MilliValue m) {
  return ResourceList{{{"cpu", m}}};
}

GangRequest gang(const std::string& job, int n, MilliValue each, int min) {
  GangRequest r;
  r.job_key = job;
  for (int i = 0; i < n; ++i) r.pods.push_back({job + "-" + std::to_string(i), cpu(each), "main"});
  r.min_count = min;
  return r;
}

JobSpec cpu_job(const std::string& name, std::vector<std::pair<int32_t, MilliValue>> tasks) {
  JobSpec s;
  s.name = name;
  int i = 0;
  for (auto [replicas, each] : tasks) {
    TaskSpec t;
    t.name = "t" + std::to_string(i++);
    t.replicas = replicas;
    Container c;
    c.name = "main";
    c.requests = cpu(each);
    t.template_.containers.push_back(c);
    s.tasks.push_back(t);
  }
  return s;
}

TEST(GangFit, TheMinimumTakesTheRequiredPodsThenTheCheapest) {
  std::vector<AskGroup> groups{{cpu(3000), 2, 1}, {cpu(1000), 4, 0}, {cpu(500), 1, 0}};
  EXPECT_EQ(gang_minimum(groups, 3).get("cpu"), 3000 + 500 + 1000);
  EXPECT_EQ(gang_minimum(groups, 1).get("cpu"), 3000);  // the required pod counts regardless
  EXPECT_TRUE(gang_minimum({}, 3).values.empty());
}

TEST(GangFit, TheMinimumOfAQueuedRequestHonoursTaskMinimums) {
  GangRequest r = gang("a", 2, 500, 2);
  r.pods.push_back({"big", cpu(2000), "ps"});
  r.task_min = {{"ps", 1}};
  EXPECT_EQ(gang_minimum(r).get("cpu"), 2500);
}

TEST(GangFit, TheHintNamesTheShortResourceWithTheTotal) {
  // Volcano's own example: 3 pods of 1 cpu, minAvailable 3, a node of 2 cores.
  EXPECT_EQ(capacity_hint(gang("big", 3, 1000, 3), cpu(2000)),
            "minAvailable 3 needs cpu 3, the ready nodes have 2 in all");
  auto r = gang("big", 2, 3000, 2);
  r.placed = 1;
  EXPECT_EQ(capacity_hint(r, cpu(4000)),
            "the other 2 of minAvailable 3 need cpu 6, the ready nodes have 4 in all");
  // Enough in all: no hint, however little is free now.
  EXPECT_EQ(capacity_hint(gang("a", 2, 1500, 2), cpu(4000)), "");
}

TEST(GangFit, PlacerReportsGangsItCannotPlaceAndOnlyThose) {
  Placer p;
  p.upsert_node("n1", cpu(2000), true);
  p.request(gang("big", 3, 1000, 3));
  p.request(gang("small", 1, 1000, 1));
  auto s = p.session();
  EXPECT_EQ(s.bindings.size(), 1u);
  ASSERT_EQ(s.unplaced.size(), 1u);
  // Two of the three fit before the statement was discarded (seed 004's count).
  EXPECT_EQ(s.unplaced.at("big"),
            "1/3 tasks in gang unschedulable: 1 node: insufficient cpu; minAvailable 3 needs "
            "cpu 3, the ready nodes have 2 in all");
  // Stragglers of a gang that is in (min_count 0) wait without a report.
  p.request(gang("rest", 1, 5000, 0));
  EXPECT_EQ(p.session().unplaced.count("rest"), 0u);
}

TEST(GangFit, AGangWithPodsBoundCountsThemInItsMessage) {
  Placer p;
  p.upsert_node("n1", cpu(4000), true);
  p.upsert_node("n2", cpu(4000), false);
  auto r = gang("g", 2, 3000, 2);
  r.placed = 1;
  p.request(r);
  p.reserve("other", "o1", "n1", cpu(2000));
  auto s = p.session();
  EXPECT_EQ(s.unplaced.at("g"),
            "2/3 tasks in gang unschedulable: 1 node: NotReady; 1 node: insufficient cpu; the "
            "other 2 of minAvailable 3 need cpu 6, the ready nodes have 4 in all");
}

// A cluster of this much cpu and 110 pod slots, as a real node has (every pod takes a slot).
ResourceList cluster(MilliValue cpu_milli) {
  return ResourceList{{{"cpu", cpu_milli}, {"pods", 110000}}};
}

TEST(GangFit, SubmitWarnsWhenTheFirstGangExceedsTheCluster) {
  auto spec = cpu_job("big", {{3, 1000}});
  EXPECT_EQ(cluster_fit_warning(spec, cluster(2000)),
            "job big needs 3 cpu for its minAvailable 3 pods; the cluster has 2 cpu in all");
  EXPECT_EQ(cluster_fit_warning(spec, cluster(3000)), std::nullopt);
  spec.min_available = 2;
  EXPECT_EQ(cluster_fit_warning(spec, cluster(2000)), std::nullopt);
  // Pod slots count too: the "pods" resource each pod takes one of.
  ResourceList one_slot{{{"cpu", 8000}, {"pods", 1000}}};
  EXPECT_EQ(cluster_fit_warning(spec, one_slot),
            "job big needs 2 pods for its minAvailable 2 pods; the cluster has 1 pods in all");
}

TEST(GangFit, ATaskThatWaitsOnOthersIsNotInTheFirstGang) {
  auto spec = cpu_job("flow", {{1, 2000}, {1, 2000}});
  DependsOn after_t0;
  after_t0.names = {"t0"};
  spec.tasks[1].depends_on = after_t0;
  EXPECT_EQ(first_gang_minimum(spec).get("cpu"), 2000);
  EXPECT_EQ(cluster_fit_warning(spec, cluster(2000)), std::nullopt);
}

}  // namespace
}  // namespace caldera
