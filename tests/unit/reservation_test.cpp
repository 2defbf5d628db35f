// The cross-node gang commit and the node's own accounting: the outcomes of the reservation
// protocol (all confirm, one refuses, one is silent, the coordinator gone in the middle).
#include <gtest/gtest.h>

#include "actors/node/core/node_accounting.hpp"
#include "actors/scheduler/core/reservation.hpp"

namespace caldera {
namespace {

std::vector<Binding> gang_over(std::vector<std::string> nodes) {
  std::vector<Binding> out;
  int i = 0;
  for (const auto& n : nodes)
    out.push_back({"default/g", "uid-" + std::to_string(i++), n, "", ResourceList{}});
  return out;
}

ResourceList cpu(int64_t milli) {
  ResourceList r;
  r.values["cpu"] = milli;
  return r;
}

TEST(GangReservation, AsksEachNodeForItsOwnPods) {
  GangReservation r("default/g", gang_over({"a", "b", "a"}));
  auto by = r.by_node();
  ASSERT_EQ(by.size(), 2u);
  EXPECT_EQ(by["a"].size(), 2u);
  EXPECT_EQ(by["b"].size(), 1u);
}

TEST(GangReservation, CommitsOnlyWhenEveryNodeConfirmed) {
  GangReservation r("default/g", gang_over({"a", "b", "c"}));
  EXPECT_EQ(r.confirmed("a"), ReservationOutcome::Pending);
  EXPECT_EQ(r.confirmed("a"), ReservationOutcome::Pending) << "a repeat counts once";
  EXPECT_EQ(r.confirmed("b"), ReservationOutcome::Pending);
  EXPECT_EQ(r.confirmed("zz"), ReservationOutcome::Pending) << "a node not asked";
  EXPECT_EQ(r.confirmed("c"), ReservationOutcome::Commit);
  EXPECT_TRUE(r.to_release().empty());
  EXPECT_EQ(r.timed_out(), ReservationOutcome::Commit) << "a late timer changes nothing";
}

TEST(GangReservation, OneRefusalCancelsAndTheConfirmedNodesRelease) {
  GangReservation r("default/g", gang_over({"a", "b", "c"}));
  r.confirmed("a");
  EXPECT_EQ(r.refused("b", "insufficient cpu"), ReservationOutcome::Cancel);
  EXPECT_EQ(r.why(), "node b refused the reservation: insufficient cpu");
  // c has not answered: it may reserve before the cancel reaches it, so it is told too.
  EXPECT_EQ(r.to_release(), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(r.confirmed("c"), ReservationOutcome::Cancel);
}

TEST(GangReservation, ASilentNodeCancelsAtTheTimeoutAndIsAskedToReleaseToo) {
  GangReservation r("default/g", gang_over({"a", "b"}));
  r.confirmed("a");
  EXPECT_EQ(r.timed_out(), ReservationOutcome::Cancel);
  EXPECT_EQ(r.why(), "node b did not answer the reservation in time");
  EXPECT_EQ(r.to_release(), (std::vector<std::string>{"a", "b"}));
}

TEST(NodeAccounting, AReservationThatFitsIsHeldWhole) {
  NodeAccounting n(cpu(2000));
  EXPECT_FALSE(n.reserve({{"p1", cpu(1000)}, {"p2", cpu(1000)}}, 100));
  EXPECT_EQ(n.used().get("cpu"), 2000);
  EXPECT_TRUE(n.reserved("p1"));
}

TEST(NodeAccounting, AGangThatWouldOverCommitIsRefusedWholeAndHoldsNothing) {
  NodeAccounting n(cpu(2000));
  ASSERT_FALSE(n.bind({"running", cpu(1000)}));
  auto why = n.reserve({{"p1", cpu(500)}, {"p2", cpu(1000)}}, 100);
  ASSERT_TRUE(why);
  EXPECT_EQ(*why, "insufficient cpu: 2500m held or reserved of 2 with the new pods");
  EXPECT_FALSE(n.holds("p1")) << "all or nothing";
  EXPECT_EQ(n.used().get("cpu"), 1000);
}

TEST(NodeAccounting, AReservationIsIdempotentPerPodUid) {
  NodeAccounting n(cpu(1000));
  EXPECT_FALSE(n.reserve({{"p1", cpu(1000)}}, 100));
  EXPECT_FALSE(n.reserve({{"p1", cpu(1000)}}, 200)) << "the same pod again: not counted twice";
  EXPECT_EQ(n.used().get("cpu"), 1000);
  EXPECT_EQ(n.next_expiry_ms(), 200) << "the repeat extends it";
}

TEST(NodeAccounting, AReservationNeverBoundExpiresSoACoordinatorGoneMidwayLeavesNothing) {
  NodeAccounting n(cpu(1000));
  n.reserve({{"p1", cpu(1000)}}, 100);
  EXPECT_TRUE(n.expire(99).empty());
  EXPECT_EQ(n.expire(100), std::vector<std::string>{"p1"});
  EXPECT_EQ(n.used().get("cpu"), 0);
  EXPECT_FALSE(n.next_expiry_ms());
}

TEST(NodeAccounting, BindingTurnsAReservationIntoARunningPodThatNeverExpires) {
  NodeAccounting n(cpu(1000));
  n.reserve({{"p1", cpu(1000)}}, 100);
  EXPECT_FALSE(n.bind({"p1", cpu(1000)}));
  EXPECT_TRUE(n.expire(1000).empty());
  EXPECT_TRUE(n.holds("p1"));
  EXPECT_FALSE(n.reserved("p1"));
  n.release("p1");
  EXPECT_EQ(n.used().get("cpu"), 0);
}

TEST(NodeAccounting, APodWithoutAReservationStartsOnlyIfItFits) {
  NodeAccounting n(cpu(1000));
  n.reserve({{"other", cpu(600)}}, 100);
  auto why = n.bind({"late", cpu(500)});
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("insufficient cpu"), std::string::npos);
  EXPECT_FALSE(n.bind({"small", cpu(400)}));
}

TEST(NodeAccounting, AdoptedPodsCountEvenPastCapacity) {
  NodeAccounting n(cpu(1000));
  n.adopt({"a", cpu(800)});
  n.adopt({"b", cpu(800)});  // ran before a restart that lowered the capacity
  EXPECT_EQ(n.used().get("cpu"), 1600);
  EXPECT_TRUE(n.reserve({{"c", cpu(100)}}, 100));
}

}  // namespace
}  // namespace caldera
