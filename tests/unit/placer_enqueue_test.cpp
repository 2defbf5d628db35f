// The placer's enqueue action: a gang whose minimum is not in is admitted (its pod group Inqueue)
// within the cluster's overcommit budget and its queue's share, and until then waits Pending.
#include <string>

#include <gtest/gtest.h>

#include "actors/scheduler/core/placer.hpp"
#include "tests/unit/placer_test_support.hpp"

namespace caldera {
namespace {

using namespace caldera::testing;

QueueStatus status_of(const Placer& p, const std::string& name) {
  for (const auto& s : p.queue_status())
    if (s.name == name) return s;
  ADD_FAILURE() << "no queue " << name;
  return {};
}

// A full node of two cpus leaves 0.4 cpu of budget (1.2 times the node, less what is held): a
// gang of two cpus is not admitted, and says why it would not fit the node either.
TEST(PlacerEnqueue, AGangBeyondTheOvercommitBudgetStaysPendingAndSaysWhyPerNode) {
  Placer p;
  p.upsert_node("n1", cpu(2000), true);
  p.request(gang("first", 4, 500, 4));
  auto first = p.session();
  ASSERT_EQ(first.bindings.size(), 4u);
  EXPECT_TRUE(first.not_enqueued.empty());
  p.request(gang("second", 4, 500, 4));
  auto waits = p.session();
  EXPECT_TRUE(waits.bindings.empty());
  EXPECT_TRUE(waits.evictions.empty());
  EXPECT_EQ(waits.unplaced.at("second"),
            "4/4 tasks in gang unschedulable: 1 node: insufficient cpu");
  EXPECT_TRUE(waits.not_enqueued.count("second"));
  auto status = status_of(p, kDefaultQueue);
  EXPECT_EQ(status.pending, 1);
  EXPECT_EQ(status.inqueue, 0);
  EXPECT_EQ(status.running, 1);

  for (const auto& b : first.bindings) p.release(b.uid);
  EXPECT_EQ(p.session().bindings.size(), 4u);
  EXPECT_EQ(status_of(p, kDefaultQueue).pending, 0);
}

// A gang admitted that fits no node (1.5 cpu on nodes of one) keeps its minimum from the budget:
// a later gang that would fit a node waits Pending until the first gives up. An admitted gang
// stays admitted when it asks again.
TEST(PlacerEnqueue, WhatAnAdmittedGangLacksIsKeptFromLaterGangs) {
  Placer p;
  p.upsert_node("n1", cpu(1000), true);
  p.upsert_node("n2", cpu(1000), true);
  p.request(gang("wide", 1, 1500, 1));
  auto in = p.session();
  EXPECT_TRUE(in.bindings.empty());
  EXPECT_EQ(in.unplaced.at("wide"), "1/1 tasks in gang unschedulable: 2 nodes: insufficient cpu");
  EXPECT_FALSE(in.not_enqueued.count("wide"));
  EXPECT_EQ(status_of(p, kDefaultQueue).inqueue, 1);

  p.request(gang("small", 1, 1000, 1));
  auto kept = p.session();
  EXPECT_TRUE(kept.bindings.empty());
  EXPECT_FALSE(kept.not_enqueued.count("wide"));
  EXPECT_TRUE(kept.not_enqueued.count("small"));
  EXPECT_EQ(kept.unplaced.at("small"),
            "1/1 tasks in gang unschedulable: not enqueued: its minimum (cpu 1) is more than the "
            "cluster has left to admit");
  auto status = status_of(p, kDefaultQueue);
  EXPECT_EQ(status.inqueue, 1);
  EXPECT_EQ(status.pending, 1);
  // Asking again (now after small, in the order of requests), it keeps its admission: small,
  // ahead of it now, would otherwise be admitted and bound.
  p.request(gang("wide", 1, 1500, 1));
  auto again = p.session();
  EXPECT_TRUE(again.bindings.empty());
  EXPECT_TRUE(again.not_enqueued.count("small"));

  GangRequest give_up;
  give_up.job_key = "wide";
  p.request(give_up);
  auto after = p.session();
  ASSERT_EQ(after.bindings.size(), 1u);
  EXPECT_EQ(after.bindings[0].job_key, "small");
}

// A gang whose minimum the ready nodes could not hold even empty (2.2 cpu of 2, within the 2.4 of
// budget) is not admitted: admitted, it would keep its minimum from the budget for good.
TEST(PlacerEnqueue, AGangLargerThanTheClusterIsNotAdmittedAndKeepsNothingFromOthers) {
  Placer p;
  p.upsert_node("n1", cpu(1000), true);
  p.upsert_node("n2", cpu(1000), true);
  p.request(gang("huge", 2, 1100, 2));
  p.request(gang("small", 1, 1000, 1));
  auto session = p.session();
  EXPECT_TRUE(session.not_enqueued.count("huge"));
  EXPECT_EQ(session.unplaced.at("huge"),
            "2/2 tasks in gang unschedulable: 2 nodes: insufficient cpu; minAvailable 2 needs "
            "cpu 2200m, the ready nodes have 2 in all");
  ASSERT_EQ(session.bindings.size(), 1u);
  EXPECT_EQ(session.bindings[0].job_key, "small");
}

// A high-priority gang past the budget is admitted only if evictions could make room: here the
// low-priority job holds no pod above its minAvailable, so none can, and a small job that fits
// is admitted instead of being kept out by the budget it would hold.
TEST(PlacerEnqueue, NoPreemptionExemptionWhenNoVictimHasPodsAboveItsMinimum) {
  Placer p;
  p.upsert_node("n1", cpu(4000), true);
  p.set_queues({}, {klass("low", 0), klass("high", 100)});
  p.request(gang("low", 2, 1000, 2, kDefaultQueue, "low", 1));
  ASSERT_EQ(p.session().bindings.size(), 2u);
  p.request(gang("high", 3, 1000, 3, kDefaultQueue, "high", 2));
  p.request(gang("small", 1, 1000, 1, kDefaultQueue, "low", 3));
  auto session = p.session();
  EXPECT_TRUE(session.evictions.empty());
  EXPECT_TRUE(session.not_enqueued.count("high"));
  ASSERT_EQ(session.bindings.size(), 1u);
  EXPECT_EQ(session.bindings[0].job_key, "small");
}

// A high-priority gang admitted past the budget that its victims cannot help (its selector
// matches no node) gives its exemption up a few sessions later, also across a change of the
// classes, and does not get it again until it asks anew: the small job it kept out then runs.
TEST(PlacerEnqueue, AnExemptionThatNoEvictionServesLapses) {
  Placer p;
  p.upsert_node("n1", cpu(4000), true);
  p.set_queues({}, {klass("low", 0), klass("high", 100)});
  p.request(gang("low", 3, 1000, 1, kDefaultQueue, "low", 1));
  ASSERT_EQ(p.session().bindings.size(), 3u);
  auto picky = gang("picky", 1, 3000, 1, kDefaultQueue, "high", 2);
  picky.pods[0].node_selector = {{"zone", "mars"}};
  p.request(picky);
  p.request(gang("small", 1, 1000, 1, kDefaultQueue, "low", 3));
  auto first = p.session();
  EXPECT_FALSE(first.not_enqueued.count("picky"));  // admitted past the budget: 4.8 - 3 < 3
  EXPECT_TRUE(first.not_enqueued.count("small"));
  EXPECT_TRUE(first.evictions.empty());  // no eviction makes room on a node it cannot use
  p.set_queues({}, {klass("low", 0), klass("high", 100), klass("other", 5)});
  std::vector<Binding> bound;
  int sessions = 1;
  while (bound.empty() && sessions < 10) {
    bound = p.session().bindings;
    ++sessions;
  }
  ASSERT_EQ(bound.size(), 1u);
  EXPECT_EQ(bound[0].job_key, "small");
  EXPECT_EQ(sessions, 5);  // admitted, kept three sessions more, then given up
  EXPECT_TRUE(p.session().not_enqueued.count("picky"));  // and not taken again
}

// Queue a, alone, has a gang admitted that does not fit yet; then queue b asks, and a's share
// falls to what a holds: a's waiting gang goes back to Pending and gives its budget to b's.
TEST(PlacerEnqueue, AQueueThatComesToHoldItsShareLetsItsWaitingGangGoBackToPending) {
  Placer p;
  p.upsert_node("n1", cpu(1000), true);
  p.upsert_node("n2", cpu(1000), true);
  p.set_queues({queue("a"), queue("b")}, {});
  p.request(gang("a-run", 1, 1000, 1, "a", "", 1));
  ASSERT_EQ(p.session().bindings.size(), 1u);
  p.request(gang("a-two", 2, 600, 2, "a", "", 2));
  auto admitted = p.session();
  EXPECT_TRUE(admitted.bindings.empty());
  EXPECT_FALSE(admitted.not_enqueued.count("a-two"));
  EXPECT_EQ(status_of(p, "a").inqueue, 1);
  // The same queues again (a Queue document changed elsewhere): nothing changes.
  p.set_queues({queue("a"), queue("b")}, {});
  EXPECT_FALSE(p.session().not_enqueued.count("a-two"));
  EXPECT_EQ(status_of(p, "a").inqueue, 1);

  p.request(gang("b-one", 1, 1000, 1, "b", "", 3));
  auto session = p.session();
  ASSERT_EQ(session.bindings.size(), 1u);
  EXPECT_EQ(session.bindings[0].job_key, "b-one");
  EXPECT_TRUE(session.not_enqueued.count("a-two"));
  EXPECT_EQ(session.unplaced.at("a-two"),
            "2/2 tasks in gang unschedulable: queue a holds its share (cpu 1)");
  auto a = status_of(p, "a");
  EXPECT_EQ(a.inqueue, 0);
  EXPECT_EQ(a.pending, 1);
}

// When a queue's share falls, its gangs are counted in job order: the older gang keeps its
// admission and the newer one goes back to Pending, not the other way round.
TEST(PlacerEnqueue, AShareThatFallsSendsBackTheNewerGangNotTheOlder) {
  Placer p;
  for (const char* n : {"n1", "n2", "n3", "n4"}) p.upsert_node(n, cpu(2000), true);
  p.set_queues({queue("a", 1), queue("b", 3)}, {});
  p.request(gang("a-run", 1, 1000, 1, "a", "", 1));
  ASSERT_EQ(p.session().bindings.size(), 1u);
  // Pods of 2.5 cpu fit no node: admitted, they wait.
  p.request(gang("a-old", 1, 2500, 1, "a", "", 2));
  p.request(gang("a-new", 1, 2500, 1, "a", "", 3));
  auto both = p.session();
  EXPECT_TRUE(both.not_enqueued.empty());
  EXPECT_EQ(status_of(p, "a").inqueue, 2);

  // b asks for five cpus: a deserves three now, a-run's one and a-old's 2.5 pass it.
  p.request(gang("b-five", 5, 1000, 5, "b", "", 4));
  auto session = p.session();
  EXPECT_FALSE(session.not_enqueued.count("a-old"));
  EXPECT_TRUE(session.not_enqueued.count("a-new"));
  EXPECT_EQ(session.unplaced.at("a-new"),
            "1/1 tasks in gang unschedulable: queue a holds its share (cpu 3)");
  EXPECT_EQ(session.bindings.size(), 5u);  // b-five, with the budget a-new gave back
  auto a = status_of(p, "a");
  EXPECT_EQ(a.inqueue, 1);
  EXPECT_EQ(a.pending, 1);
}

}  // namespace
}  // namespace caldera
