// Volcano's task priority and partitions in the gang placer: a task's class orders its pods in
// the gang when not all fit; a partition is placed whole or not at all, and a task's
// minPartitions are whole partitions.
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "actors/scheduler/core/placer.hpp"
#include "tests/unit/placer_test_support.hpp"

namespace caldera {
namespace {

using namespace caldera::testing;

// `partitions` partitions of `size` pods of `each` milli-cpus each, in name order as a job asks
// ("job-w-0", "job-w-1", "job-w-10", ...), `min_partitions` of them needed at once.
GangRequest partitioned(int partitions, int size, MilliValue each, int min_partitions,
                        int min_count = -1) {
  GangRequest r;
  r.job_key = "job";
  std::map<std::string, int> by_name;
  for (int i = 0; i < partitions * size; ++i) by_name["job-w-" + std::to_string(i)] = i;
  for (const auto& [name, i] : by_name) {
    PodAsk a{name, pod_cpu(each), "w"};
    a.partition = i / size;
    r.pods.push_back(a);
  }
  r.min_count = min_count >= 0 ? min_count : min_partitions * size;
  if (min_partitions > 0) r.partition_min["w"] = min_partitions * size;
  r.group = {kDefaultQueue, "", r.min_count};
  return r;
}

std::map<int, int> placed_per_partition(const std::vector<Binding>& b) {
  std::map<int, int> out;
  for (const auto& x : b) ++out[std::stoi(x.uid.substr(std::string("job-w-").size())) / 2];
  return out;
}

TEST(PlacerPartitions, APartitionIsPlacedWholeOrNotAtAll) {
  Placer p;
  // Room for 5 pods of 1 cpu: two whole partitions of 2, never a fifth pod of a third.
  p.upsert_node("n1", cpu(5000), true);
  p.request(partitioned(4, 2, 1000, 1));
  auto b = p.schedule();
  auto per = placed_per_partition(b);
  EXPECT_EQ(b.size(), 4u);
  for (const auto& [partition, n] : per) EXPECT_EQ(n, 2) << "partition " << partition;
  EXPECT_EQ(p.nodes()[0].allocatable.get("cpu"), 1000) << "the odd pod's room stays free";
}

TEST(PlacerPartitions, MinPartitionsAreWholePartitionsOrTheGangWaits) {
  Placer p;
  // Three pods fit: two of them make one whole partition, not the two minPartitions ask.
  p.upsert_node("n1", cpu(3000), true);
  p.request(partitioned(3, 2, 1000, 2, 3));
  EXPECT_TRUE(p.schedule().empty()) << "minAvailable 3 fits, but only one partition is whole";
  EXPECT_EQ(p.nodes()[0].allocatable.get("cpu"), 3000) << "the statement was discarded";
  auto why = p.session().unplaced;
  ASSERT_EQ(why.count("job"), 1u);
  EXPECT_EQ(why["job"], "2/6 tasks in gang unschedulable: 1 node: insufficient cpu")
      << "the two pods whole partitions lack, and why the next one fits nowhere";
  p.upsert_node("n2", cpu(1000), true);
  auto b = p.schedule();
  EXPECT_EQ(b.size(), 4u);
  for (const auto& [partition, n] : placed_per_partition(b)) EXPECT_EQ(n, 2);
}

TEST(PlacerPartitions, PartitionsAcrossNodesAreStillWhole) {
  Placer p;
  // Pods of 1.5 cpu on three nodes of 2 cpu: one pod per node, so three pods fit but only one
  // partition is whole.
  p.upsert_node("n1", cpu(2000), true);
  p.upsert_node("n2", cpu(2000), true);
  p.upsert_node("n3", cpu(2000), true);
  p.request(partitioned(2, 2, 1500, 1));
  auto b = p.schedule();
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(placed_per_partition(b).size(), 1u);
  std::set<std::string> nodes;
  for (const auto& x : b) nodes.insert(x.node);
  EXPECT_EQ(nodes.size(), 2u);
}

TEST(PlacerPartitions, APartitionThatCannotBeWholeLeavesTheRoomToPodsWithout) {
  Placer p;
  // Room for 3: learner's first partition, then its second cannot be whole, so a ps pod takes
  // the third place and the gang of 3 starts.
  p.upsert_node("n1", cpu(3000), true);
  GangRequest r = partitioned(2, 2, 1000, 1, 3);
  for (const char* uid : {"job-ps-0", "job-ps-1"}) r.pods.push_back({uid, pod_cpu(1000), "ps"});
  p.request(std::move(r));
  auto b = p.schedule();
  ASSERT_EQ(b.size(), 3u);
  std::set<std::string> uids;
  for (const auto& x : b) uids.insert(x.uid);
  EXPECT_EQ(uids, (std::set<std::string>{"job-w-0", "job-w-1", "job-ps-0"}));
}

TEST(PlacerPartitions, PartitionsAreTakenInTheirOrderNotTheirPodsNames) {
  Placer p;
  // Twelve pods asked in name order (w-10 and w-11 before w-2): the first whole partition is 0.
  p.upsert_node("n1", cpu(4000), true);
  p.request(partitioned(3, 4, 1000, 1));
  auto b = p.schedule();
  ASSERT_EQ(b.size(), 4u);
  std::set<std::string> uids;
  for (const auto& x : b) uids.insert(x.uid);
  EXPECT_EQ(uids, (std::set<std::string>{"job-w-0", "job-w-1", "job-w-2", "job-w-3"}));
}

TEST(PlacerTaskPriority, AHigherTaskClassGoesFirstWhenNotAllFit) {
  Placer p;
  p.set_queues({}, {klass("high", 1000), klass("low", 10)});
  p.upsert_node("n1", cpu(2000), true);
  GangRequest r;
  r.job_key = "job";
  // Asked low first: the task's class, not the order asked, decides who gets the room.
  for (const char* uid : {"job-low-0", "job-low-1"})
    r.pods.push_back({uid, pod_cpu(1000), "low", {}, "low"});
  for (const char* uid : {"job-high-0", "job-high-1"})
    r.pods.push_back({uid, pod_cpu(1000), "high", {}, "high"});
  r.min_count = 2;
  auto b = (p.request(std::move(r)), p.schedule());
  ASSERT_EQ(b.size(), 2u);
  for (const auto& x : b) EXPECT_TRUE(x.uid.starts_with("job-high-")) << x.uid;
}

TEST(PlacerTaskPriority, AGangWaitsForAClassTheSchedulerHasNotHeardOfYet) {
  Placer p;
  p.upsert_node("n1", cpu(2000), true);
  GangRequest r;
  r.job_key = "job";
  r.pods.push_back({"job-low-0", pod_cpu(1000), "low", {}, "low"});
  r.pods.push_back({"job-high-0", pod_cpu(1000), "high", {}, "high"});
  r.min_count = 1;
  p.request(std::move(r));
  // The job and its classes were submitted together; the classes reach the scheduler later.
  EXPECT_TRUE(p.schedule().empty());
  EXPECT_EQ(p.session().unplaced["job"], "priority class low is not known to the scheduler (yet)");
  p.set_queues({}, {klass("high", 1000), klass("low", 10)});
  auto b = p.schedule();
  ASSERT_EQ(b.size(), 2u);
}

}  // namespace
}  // namespace caldera
