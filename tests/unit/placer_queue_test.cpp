// The placer with queues and priority classes: shares by weight over the cluster, capability as a
// cap, priority as the queue's order, and the preempt action's evictions.
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "actors/scheduler/core/placer.hpp"
#include "tests/unit/placer_test_support.hpp"

namespace caldera {
namespace {

using namespace caldera::testing;

// Bound pods per queue, by the jobs' names ("a3" is queue a's).
std::map<char, int> by_queue(const std::vector<Binding>& bindings) {
  std::map<char, int> out;
  for (const auto& b : bindings) ++out[b.job_key[0]];
  return out;
}

// Three nodes of two cpus (twelve pods of half a cpu), queues a and b of weights 1 and 3, and
// more one-pod jobs in each than the cluster holds: a takes 1.5 cpu, b 4.5.
TEST(PlacerQueues, WeightsOneToThreeSplitTheCluster) {
  Placer p;
  for (const char* n : {"n1", "n2", "n3"}) p.upsert_node(n, cpu(2000), true);
  p.set_queues({queue("a", 1), queue("b", 3)}, {});
  for (int i = 0; i < 20; ++i) {
    p.request(gang("a" + std::to_string(i), 1, 500, 1, "a", "", 2 * i));
    p.request(gang("b" + std::to_string(i), 1, 500, 1, "b", "", 2 * i + 1));
  }
  auto session = p.session();
  EXPECT_EQ(by_queue(session.bindings), (std::map<char, int>{{'a', 3}, {'b', 9}}));
  // The ones passed over say why.
  EXPECT_EQ(session.unplaced.at("a3"),
            "1/1 tasks in gang unschedulable: queue a holds its share (cpu 1500m)");
  auto status = p.queue_status();
  ASSERT_EQ(status.size(), 3u);  // a, b, default
  EXPECT_EQ(status[0].name, "a");
  EXPECT_EQ(status[0].allocated.get("cpu"), 1500);
  EXPECT_EQ(status[0].deserved.get("cpu"), 1500);
  EXPECT_EQ(status[0].running, 3);
  EXPECT_EQ(status[0].pending, 17);
  EXPECT_EQ(status[1].deserved.get("cpu"), 4500);

  // One of a's pods ends: a's room goes to a, not to b, which holds its share.
  p.release(session.bindings[0].job_key + "-0");
  auto next = p.session();
  ASSERT_EQ(next.bindings.size(), 1u);
  EXPECT_EQ(next.bindings[0].job_key[0], 'a');
}

// A gang whose queue the scheduler does not know waits, saying so; once the queue is there it
// runs within the queue's capability.
TEST(PlacerQueues, AnUnknownQueueWaitsAndACapabilityCaps) {
  Placer p;
  p.upsert_node("n1", cpu(4000), true);
  p.request(gang("x", 3, 1000, 1, "capped"));
  auto before = p.session();
  EXPECT_TRUE(before.bindings.empty());
  EXPECT_EQ(before.unplaced.at("x"), "queue capped does not exist (yet)");
  p.set_queues({queue("capped", 1, ResourceList{{{"cpu", 2000}}})}, {});
  auto after = p.session();
  EXPECT_EQ(after.bindings.size(), 2u);  // the third would pass the cap
  EXPECT_EQ(p.queue_status()[0].allocated.get("cpu"), 2000);
}

// Two one-cpu jobs, `first` and `second` (created in that order, of the classes named), asking
// for a node of one cpu: the one a session binds.
std::string bound_of_two(Placer& p, const std::string& first, const std::string& first_class,
                         const std::string& second, const std::string& second_class) {
  p.upsert_node("n1", cpu(1000), true);
  p.request(gang(first, 1, 1000, 1, kDefaultQueue, first_class, 1));
  p.request(gang(second, 1, 1000, 1, kDefaultQueue, second_class, 2));
  auto session = p.session();
  EXPECT_EQ(session.bindings.size(), 1u);
  return session.bindings.empty() ? "" : session.bindings[0].job_key;
}

// Priority comes before age: a later job of a higher class is placed first.
TEST(PlacerQueues, AHigherPriorityClassGoesFirst) {
  Placer p;
  p.set_queues({}, {klass("high", 100)});
  EXPECT_EQ(bound_of_two(p, "old", "", "new", "high"), "new");
}

// The global default class gives its value to jobs that name none.
TEST(PlacerQueues, TheGlobalDefaultClassAppliesToJobsThatNameNone) {
  Placer p;
  auto def = klass("normal", 50);
  def.global_default = true;
  p.set_queues({}, {klass("low", 10), def});
  EXPECT_EQ(bound_of_two(p, "named-low", "low", "unnamed", ""), "unnamed");
}

// New queues or classes keep the waiting gangs' turns among equals: the order they asked in, not
// their names' (a2 asked before a10, both created in the same millisecond).
TEST(PlacerQueues, ChangedQueuesKeepTheOrderGangsAskedIn) {
  Placer p;
  p.set_queues({queue("a", 1)}, {});
  p.request(gang("a2", 1, 1000, 1, "a", "", 5));
  p.request(gang("a10", 1, 1000, 1, "a", "", 5));
  p.set_queues({queue("a", 1), queue("b", 1)}, {klass("unused", 1)});
  p.upsert_node("n1", cpu(1000), true);
  auto session = p.session();
  ASSERT_EQ(session.bindings.size(), 1u);
  EXPECT_EQ(session.bindings[0].job_key, "a2");
}

// A node of two cpus full with the four half-cpu pods of job low (minAvailable 2); then high, a
// gang of two such pods of class high, asks: the session that follows.
Decisions high_asks_on_a_full_node(Placer& p) {
  p.upsert_node("n1", cpu(2000), true);
  p.set_queues({}, {klass("high", 100)});
  p.request(gang("low", 4, 500, 2));
  EXPECT_EQ(p.session().bindings.size(), 4u);
  p.request(gang("high", 2, 500, 2, kDefaultQueue, "high"));
  return p.session();
}

// A low-priority job of four pods (minAvailable 2) fills the node; a high-priority gang of two
// evicts two of them, no more, and is bound once they have ended.
TEST(PlacerQueues, AHighPriorityGangPreemptsDownToTheVictimsMinimumOnly) {
  Placer p;
  auto session = high_asks_on_a_full_node(p);
  EXPECT_TRUE(session.bindings.empty());
  ASSERT_EQ(session.evictions.size(), 2u);
  for (const auto& e : session.evictions) {
    EXPECT_EQ(e.job_key, "low");
    EXPECT_EQ(e.node, "n1");
    EXPECT_EQ(e.preemptor, "high");
  }
  // While the victims leave, nothing more is evicted.
  auto waiting = p.session();
  EXPECT_TRUE(waiting.evictions.empty());
  EXPECT_TRUE(waiting.bindings.empty());
  for (const auto& e : session.evictions) p.release(e.uid);
  auto bound = p.session();
  EXPECT_EQ(bound.bindings.size(), 2u);
  for (const auto& b : bound.bindings) EXPECT_EQ(b.job_key, "high");
}

// The victims end one by one: what each frees is kept for the preemptor, not taken by a
// lower-priority pod that asks meanwhile (which would be evicted in turn, for ever).
TEST(PlacerQueues, RoomFreedForAPreemptorIsKeptForItUntilItIsBound) {
  Placer p;
  auto evicting = high_asks_on_a_full_node(p);
  ASSERT_EQ(evicting.evictions.size(), 2u);
  p.release(evicting.evictions[0].uid);
  p.request(gang("small", 1, 500, 1));
  auto between = p.session();
  EXPECT_TRUE(between.bindings.empty());
  EXPECT_TRUE(between.evictions.empty());
  p.release(evicting.evictions[1].uid);
  auto bound = p.session();
  ASSERT_EQ(bound.bindings.size(), 2u);
  for (const auto& b : bound.bindings) EXPECT_EQ(b.job_key, "high");
  // Once it is bound, nothing is kept any more: the next freed room goes to whoever fits.
  p.release(bound.bindings[0].uid);
  auto after = p.session();
  ASSERT_EQ(after.bindings.size(), 1u);
  EXPECT_EQ(after.bindings[0].job_key, "small");
}

// A victim at its minimum, a class that never preempts, an equal priority, or another queue
// when the victim's queue is not reclaimable: no eviction.
TEST(PlacerQueues, NothingIsEvictedBelowAMinimumNorForAClassThatNeverPreempts) {
  for (int scenario = 0; scenario < 4; ++scenario) {
    Placer p;
    p.upsert_node("n1", cpu(2000), true);
    auto kept = queue(kDefaultQueue, 1);
    kept.spec.reclaimable = false;
    p.set_queues({queue("other", 1), kept},
                 {klass("high", 100), klass("polite", 100, kPreemptNever), klass("low", 0)});
    const bool whole = scenario == 0;
    p.request(gang("low", 4, 500, whole ? 4 : 2, kDefaultQueue, "low"));
    ASSERT_EQ(p.session().bindings.size(), 4u);
    const std::string klass_name = scenario == 1 ? "polite" : scenario == 2 ? "low" : "high";
    const std::string q = scenario == 3 ? "other" : kDefaultQueue;
    p.request(gang("high", 2, 500, 2, q, klass_name));
    auto session = p.session();
    EXPECT_TRUE(session.evictions.empty()) << scenario;
    EXPECT_TRUE(session.bindings.empty()) << scenario;
  }
}

// Queue a (weight 1) holds the whole node; queue b (weight 1) has a gang waiting: b is below its
// share of half, so a's pods are reclaimed down to a's share, and b's gang is bound once they
// have ended. Whatever the classes (reclaim is about shares, not priority).
TEST(PlacerQueues, AQueueBelowItsShareReclaimsFromOneAboveIt) {
  Placer p;
  p.upsert_node("n1", cpu(2000), true);
  p.set_queues({queue("a", 1), queue("b", 1)}, {klass("high", 100)});
  p.request(gang("a-hog", 4, 500, 1, "a", "high"));
  ASSERT_EQ(p.session().bindings.size(), 4u);
  p.request(gang("b-gang", 2, 500, 2, "b"));
  auto session = p.session();
  ASSERT_EQ(session.evictions.size(), 2u);
  for (const auto& e : session.evictions) {
    EXPECT_EQ(e.job_key, "a-hog");
    EXPECT_EQ(e.reason, "Reclaimed");
    EXPECT_EQ(e.preemptor, "b-gang");
  }
  EXPECT_TRUE(p.session().evictions.empty());  // a is at its share now, counting what leaves
  for (const auto& e : session.evictions) p.release(e.uid);
  auto bound = p.session();
  ASSERT_EQ(bound.bindings.size(), 2u);
  EXPECT_EQ(bound.bindings[0].job_key, "b-gang");
}

// A node whose pod slots are all taken (cpu to spare): a high-priority gang still preempts, the
// victim's slot being the room it needs.
TEST(PlacerQueues, AHighPriorityGangPreemptsOnANodeWithNoPodSlotLeft) {
  Placer p;
  p.upsert_node("n1", ResourceList{{{"cpu", 8000}, {"pods", 2000}}}, true);
  p.set_queues({}, {klass("high", 100)});
  p.request(gang("low", 2, 500, 1));
  ASSERT_EQ(p.session().bindings.size(), 2u);
  p.request(gang("high", 1, 500, 1, kDefaultQueue, "high"));
  auto session = p.session();
  EXPECT_TRUE(session.bindings.empty());
  ASSERT_EQ(session.evictions.size(), 1u);
  EXPECT_EQ(session.evictions[0].job_key, "low");
  EXPECT_EQ(session.evictions[0].preemptor, "high");
  p.release(session.evictions[0].uid);
  auto bound = p.session();
  ASSERT_EQ(bound.bindings.size(), 1u);
  EXPECT_EQ(bound.bindings[0].job_key, "high");
}

// A straggler of the victim's job bound in the same session counts once: the victim keeps its
// minAvailable of 3 (counted twice, it would have lost two pods and kept two).
TEST(PlacerQueues, APodBoundInTheSessionCountsOnceForTheVictimsMinimum) {
  Placer p;
  p.upsert_node("n1", cpu(2000), true);
  p.set_queues({}, {klass("high", 100)});
  p.request(gang("low", 4, 500, 3));
  ASSERT_EQ(p.session().bindings.size(), 4u);
  p.release("low-0");
  GangRequest straggler;
  straggler.job_key = "low";
  straggler.pods.push_back({"low-4", pod_cpu(500), "main"});
  straggler.group = {kDefaultQueue, "", 3};
  p.request(straggler);
  p.request(gang("high", 2, 500, 2, kDefaultQueue, "high"));
  auto session = p.session();
  ASSERT_EQ(session.bindings.size(), 1u);
  EXPECT_EQ(session.bindings[0].uid, "low-4");
  // One pod of low may go (4 - 1 = 3), which frees too little for high's two: none goes.
  EXPECT_TRUE(session.evictions.empty());
}

// A high-priority gang of a queue over its share takes nothing (allocate would pass it over);
// the gang of the queue below its share reclaims instead.
TEST(PlacerQueues, AGangOfAQueueOverItsShareDoesNotPreempt) {
  Placer p;
  p.upsert_node("n1", cpu(2000), true);
  p.set_queues({queue("a", 1), queue("b", 1)}, {klass("high", 100)});
  p.request(gang("a-low", 4, 500, 1, "a"));
  ASSERT_EQ(p.session().bindings.size(), 4u);
  p.request(gang("a-high", 2, 500, 2, "a", "high"));
  p.request(gang("b-gang", 2, 500, 2, "b"));
  auto session = p.session();
  ASSERT_EQ(session.evictions.size(), 2u);
  for (const auto& e : session.evictions) {
    EXPECT_EQ(e.reason, "Reclaimed");
    EXPECT_EQ(e.preemptor, "b-gang");
  }
}

// Room kept for a preemptor that cannot be bound (its queue's capability fell to nothing) is
// given back a few sessions after its victims have ended.
TEST(PlacerQueues, RoomKeptForAPreemptorThatCannotBeBoundLapses) {
  Placer p;
  p.upsert_node("n1", cpu(2000), true);
  p.set_queues({queue("q", 1)}, {klass("high", 100)});
  p.request(gang("low", 4, 500, 2, "q"));
  ASSERT_EQ(p.session().bindings.size(), 4u);
  p.request(gang("high", 2, 500, 2, "q", "high"));
  auto evicting = p.session();
  ASSERT_EQ(evicting.evictions.size(), 2u);
  p.set_queues({queue("q", 1, ResourceList{{{"cpu", 0}}})}, {klass("high", 100)});
  for (const auto& e : evicting.evictions) p.release(e.uid);
  p.request(gang("other", 1, 500, 1));
  int sessions = 0;
  std::vector<Binding> bound;
  while (bound.empty() && sessions < 10) {
    bound = p.session().bindings;
    ++sessions;
  }
  ASSERT_EQ(bound.size(), 1u);
  EXPECT_EQ(bound[0].job_key, "other");
  EXPECT_EQ(sessions, 4);  // three sessions kept for high, then given back
}

TEST(PlacerQueues, EnqueueAdmitsNoMoreThanTheCapability) {
  Placer p;
  p.upsert_node("n1", cpu(8000), true);
  p.set_queues({queue("capped", 1, ResourceList{{{"cpu", 2000}}})}, {});
  for (int i = 0; i < 4; ++i) p.request(gang("c" + std::to_string(i), 1, 1000, 1, "capped", "", i));
  auto session = p.session();
  EXPECT_EQ(session.bindings.size(), 2u);
  EXPECT_EQ(session.not_enqueued.size(), 2u);
  EXPECT_EQ(session.unplaced.at("c2"),
            "1/1 tasks in gang unschedulable: queue capped is at its capability (cpu 2)");
}

TEST(PlacerQueues, TheStragglersOfARunningGangInAnOverusedQueueWaitQuietly) {
  Placer p;
  p.upsert_node("n1", cpu(8000), true);
  p.set_queues({queue("a", 1), queue("b", 3)}, {});
  // a0 runs two pods (its minimum 1): a holds 2 of its 2; its third pod waits.
  p.request(gang("a0", 3, 1000, 1, "a", "", 0));
  for (int i = 1; i < 10; ++i) {
    p.request(gang("a" + std::to_string(i), 1, 1000, 1, "a", "", i));
    p.request(gang("b" + std::to_string(i), 1, 1000, 1, "b", "", i));
  }
  auto first = p.session();
  int a0 = 0;
  for (const auto& b : first.bindings) a0 += b.job_key == "a0";
  ASSERT_GE(a0, 1);
  auto next = p.session();
  EXPECT_EQ(next.unplaced.count("a0"), 0u);  // its gang is in: no condition to write
}

}  // namespace
}  // namespace caldera
