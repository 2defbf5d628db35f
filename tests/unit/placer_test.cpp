// The gang placer: all-or-nothing for minAvailable pods, one by one after that.
#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "actors/scheduler/core/placer.hpp"

namespace caldera {
namespace {

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

TEST(Placer, PlacesAWholeGangWhenItFits) {
  Placer p;
  p.upsert_node("n1", cpu(4000), true);
  p.request(gang("a", 3, 1000, 3));
  auto b = p.schedule();
  EXPECT_EQ(b.size(), 3u);
  EXPECT_EQ(p.nodes()[0].allocatable.get("cpu"), 1000);
  EXPECT_EQ(p.waiting(), 0u);
}

TEST(Placer, PlacesNothingWhenTheGangDoesNotFitTogether) {
  Placer p;
  p.upsert_node("n1", cpu(2000), true);
  p.request(gang("a", 2, 1500, 2));
  EXPECT_TRUE(p.schedule().empty());
  EXPECT_EQ(p.nodes()[0].allocatable.get("cpu"), 2000);  // the statement was discarded
  EXPECT_EQ(p.waiting(), 1u);
}

TEST(Placer, AWaitingGangStartsWhenResourcesAreReleased) {
  Placer p;
  p.upsert_node("n1", cpu(2000), true);
  p.request(gang("a", 1, 2000, 1));
  auto first = p.schedule();
  ASSERT_EQ(first.size(), 1u);
  p.request(gang("b", 2, 1000, 2));
  EXPECT_TRUE(p.schedule().empty());
  p.release(first[0].uid);
  EXPECT_EQ(p.schedule().size(), 2u);
}

TEST(Placer, BeyondMinAvailableTheRestArePlacedOneByOne) {
  Placer p;
  p.upsert_node("n1", cpu(3000), true);
  p.request(gang("a", 5, 1000, 2));
  EXPECT_EQ(p.schedule().size(), 3u);
  EXPECT_EQ(p.waiting(), 1u);
  p.release("a-0");
  auto more = p.schedule();
  ASSERT_EQ(more.size(), 1u);
}

TEST(Placer, NotReadyNodesGetNothingAndSmallJobsMayPassBigOnes) {
  Placer p;
  p.upsert_node("n1", cpu(4000), false);
  p.request(gang("a", 1, 1000, 1));
  EXPECT_TRUE(p.schedule().empty());
  p.set_ready("n1", true);
  p.request(gang("big", 1, 8000, 1));
  p.request(gang("small", 1, 1000, 1));
  auto b = p.schedule();
  EXPECT_EQ(b.size(), 2u);  // a and small; big never fits
}

TEST(Placer, ReserveAdoptsEarlierBindingsAndAnEmptyRequestCancels) {
  Placer p;
  p.upsert_node("n1", cpu(2000), true);
  p.reserve("a", "a-0", "n1", cpu(1500));
  p.reserve("a", "a-0", "n1", cpu(1500));  // idempotent
  EXPECT_EQ(p.nodes()[0].allocatable.get("cpu"), 500);
  p.request(gang("b", 1, 1000, 1));
  EXPECT_TRUE(p.schedule().empty());
  p.request(GangRequest{"b", {}, 0, {}});
  EXPECT_EQ(p.waiting(), 0u);
  EXPECT_EQ(p.largest_node().get("cpu"), 2000);
}

TEST(Placer, APodAlreadyBoundIsNeverBoundTwice) {
  Placer p;
  p.upsert_node("n1", cpu(4000), true);
  p.request(gang("a", 1, 1000, 1));
  ASSERT_EQ(p.schedule().size(), 1u);
  p.request(gang("a", 1, 1000, 1));  // the same pod, asked again before its binding arrived
  EXPECT_TRUE(p.schedule().empty());
  EXPECT_EQ(p.nodes()[0].allocatable.get("cpu"), 3000);
  EXPECT_EQ(p.waiting(), 0u);
}

ResourceList cpu_and_slot(MilliValue m) {
  return ResourceList{{{"cpu", m}, {"pods", 1000}}};
}

GangRequest slotted(const std::string& job, int n) {
  GangRequest r;
  r.job_key = job;
  for (int i = 0; i < n; ++i)
    r.pods.push_back({job + "-" + std::to_string(i), cpu_and_slot(100), "main"});
  r.min_count = n;
  return r;
}

TEST(Placer, WithEveryPodSlotTakenTheQueueWaitsAndAFreedSlotGoesToTheOldest) {
  Placer p;
  p.upsert_node("n1", ResourceList{{{"cpu", 8000}, {"pods", 2000}}}, true);
  p.request(slotted("a", 2));
  ASSERT_EQ(p.schedule().size(), 2u);
  for (auto job : {"b", "c", "d"}) p.request(slotted(job, 1));
  EXPECT_TRUE(p.schedule().empty());
  EXPECT_EQ(p.waiting(), 3u);
  p.release("a-0");
  auto b = p.schedule();
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].job_key, "b");
  p.release("a-1");
  b = p.schedule();
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].job_key, "c");
}

TEST(Placer, AGangNeedingMoreSlotsThanAreFreeWaitsWhileASmallerOnePasses) {
  Placer p;
  p.upsert_node("n1", ResourceList{{{"cpu", 8000}, {"pods", 3000}}}, true);
  p.request(slotted("a", 2));
  ASSERT_EQ(p.schedule().size(), 2u);
  p.request(slotted("big", 2));
  p.request(slotted("small", 1));
  auto b = p.schedule();
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].job_key, "small");
  EXPECT_EQ(p.waiting(), 1u);
}

TEST(Placer, ARequestWithoutPodSlotsIsStillTriedWhenNoSlotIsFree) {
  Placer p;
  p.upsert_node("n1", ResourceList{{{"cpu", 8000}, {"pods", 1000}}}, true);
  p.request(slotted("a", 1));
  ASSERT_EQ(p.schedule().size(), 1u);
  p.request(slotted("b", 1));
  p.request(gang("free", 1, 1000, 1));  // asks for cpu only
  auto b = p.schedule();
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].job_key, "free");
}

// A training gang: `workers` workers listed before one ps; 2 workers and the ps must start.
GangRequest train_gang(int workers, MilliValue ps_cpu) {
  GangRequest r;
  r.job_key = "train";
  for (int i = 0; i < workers; ++i)
    r.pods.push_back({"w-" + std::to_string(i), cpu(1000), "worker"});
  r.pods.push_back({"ps-0", cpu(ps_cpu), "ps"});
  r.min_count = 3;
  r.task_min = {{"worker", 2}, {"ps", 1}};
  return r;
}

TEST(Placer, EachTasksMinimumIsPlacedBeforeTheOtherPodsTakeTheRoom) {
  // The four workers would fill the node on their own.
  Placer p;
  p.upsert_node("n1", cpu(4000), true);
  p.request(train_gang(4, 1000));
  auto b = p.schedule();
  ASSERT_EQ(b.size(), 4u);
  std::set<std::string> uids;
  for (const auto& x : b) uids.insert(x.uid);
  EXPECT_EQ(uids.count("ps-0"), 1u);
  EXPECT_EQ(p.waiting(), 1u) << "one worker waits for room, one by one";
}

TEST(Placer, AGangMissingATasksMinimumIsNotPlaced) {
  Placer p;
  p.upsert_node("n1", cpu(4000), true);
  p.request(train_gang(3, 8000));  // the ps fits no node
  EXPECT_TRUE(p.schedule().empty())
      << "three workers fit, but without the ps the gang is not whole";
  EXPECT_EQ(p.nodes()[0].allocatable.get("cpu"), 4000);
}

TEST(Placer, AJobThatAsksAgainKeepsItsPlace) {
  Placer p;
  p.upsert_node("n1", cpu(1000), true);
  p.reserve("hog", "h", "n1", cpu(1000));
  auto a = gang("a", 1, 1000, 1), b = gang("b", 1, 1000, 1);
  a.created_ms = 1;
  b.created_ms = 2;
  p.request(a);
  p.request(b);
  EXPECT_TRUE(p.schedule().empty());
  p.request(a);  // asks again, after b
  p.release("h");
  auto bound = p.schedule();
  ASSERT_EQ(bound.size(), 1u);
  EXPECT_EQ(bound[0].job_key, "a");
}

TEST(Placer, AGangNotYetInGoesBeforeTheStragglersOfOneThatIs) {
  Placer p;
  p.upsert_node("n1", cpu(2000), true);
  auto straggler = gang("old", 1, 2000, 0), fresh = gang("new", 1, 2000, 1);
  straggler.created_ms = 1;
  fresh.created_ms = 2;
  p.request(straggler);
  p.request(fresh);
  auto bound = p.schedule();
  ASSERT_EQ(bound.size(), 1u);
  EXPECT_EQ(bound[0].job_key, "new");
}

TEST(Placer, ANodeSelectorPicksALabelledNodeOrSaysNoneMatches) {
  Placer p;
  p.upsert_node("a", cpu(4000), true, "", {{"zone", "a"}});
  p.upsert_node("b", cpu(4000), true, "", {{"zone", "b"}});
  auto r = gang("j", 2, 1000, 2);
  for (auto& a : r.pods) a.node_selector = {{"zone", "b"}};
  p.request(r);
  auto bound = p.schedule();
  ASSERT_EQ(bound.size(), 2u);
  EXPECT_EQ(bound[0].node, "b");
  EXPECT_EQ(bound[1].node, "b");

  auto none = gang("k", 1, 1000, 1);
  none.pods[0].node_selector = {{"zone", "c"}};
  p.request(none);
  auto s = p.session();
  EXPECT_TRUE(s.bindings.empty());
  EXPECT_EQ(s.unplaced.at("k"),
            "1/1 tasks in gang unschedulable: 2 nodes: node selector does not match");
}

TEST(Placer, ATasksRequiredPodsGoFirstWhateverTheirUids) {
  Placer p;
  p.upsert_node("n1", cpu(4000), true);
  GangRequest r;
  r.job_key = "tf";
  for (int i = 0; i < 4; ++i) r.pods.push_back({"a" + std::to_string(i), cpu(1000), "worker"});
  r.pods.push_back({"z-ps", cpu(1000), "ps"});  // its uid sorts last
  r.min_count = 3;
  r.task_min = {{"ps", 1}, {"worker", 2}};
  p.request(r);
  auto bound = p.schedule();
  ASSERT_EQ(bound.size(), 4u);
  EXPECT_TRUE(
      std::any_of(bound.begin(), bound.end(), [](const Binding& b) { return b.uid == "z-ps"; }));
}

TEST(Placer, TheConfiguredScoringRanksTheNodes) {
  for (auto scoring : {sched::Scoring::Binpack, sched::Scoring::LeastAllocated}) {
    Placer p(scoring);
    p.upsert_node("a", cpu(4000), true);
    p.upsert_node("b", cpu(4000), true);
    p.reserve("other", "o", "a", cpu(1000));
    p.request(gang("j", 1, 1000, 1));
    auto bound = p.schedule();
    ASSERT_EQ(bound.size(), 1u);
    EXPECT_EQ(bound[0].node, scoring == sched::Scoring::Binpack ? "a" : "b");
  }
}

TEST(Placer, EachSessionsNodeSearchStartsWhereTheLastOneStopped) {
  // 200 nodes: a search stops after 100 that fit (Kubernetes' share), so without carrying on
  // where it stopped the second pod would be searched for among the same first 100 again.
  Placer p(sched::Scoring::Binpack);
  for (int i = 0; i < 200; ++i) p.upsert_node(fmt::format("n{:03}", i), cpu(4000), true);
  p.request(gang("a", 1, 1000, 1));
  auto first = p.schedule();
  p.request(gang("b", 1, 1000, 1));
  auto second = p.schedule();
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(first[0].node, "n000");
  EXPECT_EQ(second[0].node, "n100");
}

}  // namespace
}  // namespace caldera
