// The scheduling session calderad runs (sched::Session, through the Placer): enqueue, allocate
// through statements, the configured actions, and the gangs' conditions; with a randomized check
// of the gang, node and queue invariants over many sessions.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "actors/scheduler/core/placer.hpp"
#include "actors/scheduler/core/predicates.hpp"
#include "tests/unit/placer_test_support.hpp"

namespace caldera {
namespace {

using namespace caldera::testing;

std::map<std::string, int> bound_per_job(const Decisions& d) {
  std::map<std::string, int> out;
  for (const auto& b : d.bindings) ++out[b.job_key];
  return out;
}

TEST(Session, TwoGangsThatFitAloneButNotTogether_OneRunsWholeTheOtherWaitsThenStarts) {
  Placer p;
  for (const char* n : {"n1", "n2"}) p.upsert_node(n, cpu(4000), true);
  p.request(gang("b", 4, 2000, 4, kDefaultQueue, "", 2));
  p.request(gang("a", 4, 2000, 4, kDefaultQueue, "", 1));
  auto d = p.session();
  EXPECT_EQ(bound_per_job(d), (std::map<std::string, int>{{"a", 4}}));  // a is older
  // b is not admitted: a's 8 cpu leave 1.6 of the cluster's 8 x 1.2.
  EXPECT_TRUE(d.not_enqueued.count("b"));
  EXPECT_EQ(d.unplaced.at("b"), "4/4 tasks in gang unschedulable: 2 nodes: insufficient cpu");
  // a finishes: its pods give their nodes back, and the next session starts b whole.
  for (const auto& b : d.bindings) p.release(b.uid);
  d = p.session();
  EXPECT_EQ(bound_per_job(d), (std::map<std::string, int>{{"b", 4}}));
}

TEST(Session, AnAdmittedGangThatDoesNotFitNowSaysWhichNodesRefusedIt) {
  Placer p;
  for (const char* n : {"n1", "n2"}) p.upsert_node(n, cpu(4000), true);
  // Both are admitted (4 + 5 of 8 x 1.2), but b's pods of 2.5 cpu find 2 left on each node.
  p.request(gang("a", 2, 2000, 2, kDefaultQueue, "", 1));
  p.request(gang("b", 2, 2500, 2, kDefaultQueue, "", 2));
  auto d = p.session();
  EXPECT_EQ(bound_per_job(d), (std::map<std::string, int>{{"a", 2}}));
  EXPECT_FALSE(d.not_enqueued.count("b"));  // Inqueue
  EXPECT_EQ(d.unplaced.at("b"), "2/2 tasks in gang unschedulable: 2 nodes: insufficient cpu");
}

TEST(Session, AGangsOwnFailedTryDoesNotKeepALaterGangOfTheSameAsksOut) {
  Placer p;
  for (const char* n : {"n1", "n2"}) p.upsert_node(n, cpu(4000), true);
  p.request(gang("a", 5, 2000, 5, kDefaultQueue, "", 1), /*admitted=*/true);
  p.request(gang("b", 4, 2000, 4, kDefaultQueue, "", 2), true);
  p.request(gang("c", 1, 2000, 1, kDefaultQueue, "", 3), true);
  auto d = p.session();
  EXPECT_EQ(bound_per_job(d), (std::map<std::string, int>{{"b", 4}}));  // 4 of a's 5 fit: discarded
  // c asks the same once b has filled the nodes: it is told the same as a search would find.
  EXPECT_EQ(d.unplaced.at("c"), "1/1 tasks in gang unschedulable: 2 nodes: insufficient cpu");
}

TEST(Session, AGangThatCanNeverFitSaysWhyPerNode) {
  Placer p;
  p.upsert_node("n1", cpu(1000), true, "", {{"zone", "a"}});
  p.upsert_node("n2", cpu(4000), true, "", {{"zone", "b"}});
  p.upsert_node("n3", cpu(4000), false, "", {{"zone", "a"}});
  p.upsert_node("n4", cpu(500), true, "", {{"zone", "a"}});
  auto g = gang("g", 1, 2000, 1);
  g.pods[0].node_selector = {{"zone", "a"}};
  p.request(g);
  auto d = p.session();
  EXPECT_EQ(d.unplaced.at("g"),
            "1/1 tasks in gang unschedulable: 2 nodes: insufficient cpu; 1 node: NotReady; "
            "1 node: node selector does not match");
  EXPECT_TRUE(d.bindings.empty());
}

TEST(Session, TheSeedsExample_SixOfEightPlacedIsTwoUnschedulableAndAllDiscarded) {
  Placer p;
  for (int i = 1; i <= 6; ++i) p.upsert_node("n" + std::to_string(i), cpu(1000), true);
  GangRequest tf;
  tf.job_key = "tf";
  tf.pods.push_back({"ps-0", pod_cpu(1000), "ps"});
  for (int i = 0; i < 7; ++i)
    tf.pods.push_back({"worker-" + std::to_string(i), pod_cpu(1000), "worker"});
  tf.min_count = 8;
  tf.task_min = {{"ps", 1}, {"worker", 7}};
  p.request(tf, /*admitted=*/true);
  auto d = p.session();
  EXPECT_TRUE(
      d.unplaced.at("tf").starts_with("2/8 tasks in gang unschedulable: 6 nodes: insufficient cpu"))
      << d.unplaced.at("tf");
  EXPECT_TRUE(d.bindings.empty());
  for (const auto& n : p.nodes()) EXPECT_EQ(n.allocatable.get("cpu"), 1000) << n.name;
}

TEST(Session, BinpackFillsANodeAndLeastAllocatedSpreads) {
  for (auto policy : {sched::Scoring::Binpack, sched::Scoring::LeastAllocated}) {
    Placer p(policy);
    for (const char* n : {"n1", "n2"}) p.upsert_node(n, cpu(4000), true);
    p.request(gang("a", 2, 1000, 2));
    auto d = p.session();
    ASSERT_EQ(d.bindings.size(), 2u);
    EXPECT_EQ(d.bindings[0].node == d.bindings[1].node, policy == sched::Scoring::Binpack)
        << to_string(policy);
  }
}

TEST(Session, Enqueue_AdmitsWhatTheClusterCanHoldAndSaysWhyNotOtherwise) {
  Placer p;
  p.upsert_node("n1", cpu(4000), true);
  p.request(gang("small", 2, 1000, 2, kDefaultQueue, "", 1));
  p.request(gang("huge", 6, 1000, 6, kDefaultQueue, "", 2));
  auto d = p.session();
  EXPECT_EQ(bound_per_job(d), (std::map<std::string, int>{{"small", 2}}));
  EXPECT_TRUE(d.not_enqueued.count("huge"));  // 6 > 4 x 1.2 - 0
  EXPECT_EQ(d.unplaced.at("huge"),
            "4/6 tasks in gang unschedulable: 1 node: insufficient cpu; minAvailable 6 needs cpu "
            "6, the ready nodes have 4 in all");
}

TEST(Session, ASearchStopsAtTheNodesToFindAndTheNextStartsWhereItStopped) {
  EXPECT_EQ(sched::nodes_to_find(50, 0), 50u);
  EXPECT_EQ(sched::nodes_to_find(1000, 0), 420u);   // 50% less 8%
  EXPECT_EQ(sched::nodes_to_find(10000, 0), 500u);  // at least 5%
  EXPECT_EQ(sched::nodes_to_find(1000, 7), 7u);
  // With one node to find, binpack cannot pile pods up: each search takes the next node.
  sched::Policy one;
  one.options.scoring = sched::node_scoring(sched::Scoring::Binpack);
  one.options.nodes_to_find = 1;
  Placer p(one);
  for (const char* n : {"n1", "n2", "n3"}) p.upsert_node(n, cpu(4000), true);
  p.request(gang("a", 3, 1000, 3));
  std::set<std::string> used;
  for (const auto& b : p.session().bindings) used.insert(b.node);
  EXPECT_EQ(used.size(), 3u);
}

TEST(Session, PodsThatOnlyAskASlotAreNotPlacedPartlyWhenTooFewSlotsAreFree) {
  Placer p;
  p.upsert_node("n1", ResourceList{{{"pods", 2000}}}, true);
  GangRequest r;
  r.job_key = "slots";
  for (int i = 0; i < 4; ++i) r.pods.push_back({"s" + std::to_string(i), {{{"pods", 1000}}}, "w"});
  r.min_count = 3;
  p.request(r);
  auto d = p.session();
  EXPECT_TRUE(d.bindings.empty());
  EXPECT_TRUE(
      d.unplaced.at("slots").starts_with("1/4 tasks in gang unschedulable: 1 node: too many pods"))
      << d.unplaced.at("slots");
}

TEST(Session, ATasksMinimumGoesFirstAndOnlyItsShortfallIsCounted) {
  GangRequest tf;
  tf.job_key = "tf";
  for (int i = 0; i < 4; ++i) tf.pods.push_back({"w" + std::to_string(i), pod_cpu(1000), "worker"});
  tf.pods.push_back({"ps", pod_cpu(1000), "ps"});
  tf.min_count = 3;
  tf.task_min = {{"ps", 1}, {"worker", 2}};
  {
    Placer p;
    p.upsert_node("n1", cpu(4000), true);
    p.request(tf, true);
    auto d = p.session();
    EXPECT_EQ(d.bindings.size(), 4u);
    EXPECT_TRUE(std::any_of(d.bindings.begin(), d.bindings.end(),
                            [](const Binding& b) { return b.uid == "ps"; }));  // it has its room
  }
  // A ps no node can hold: the workers would fit, the gang does not, by one pod.
  tf.pods[4].requests = pod_cpu(5000);
  Placer p;
  p.upsert_node("n1", cpu(4000), true);
  p.request(tf, true);
  auto d = p.session();
  EXPECT_TRUE(d.bindings.empty());
  EXPECT_TRUE(
      d.unplaced.at("tf").starts_with("1/5 tasks in gang unschedulable: 1 node: insufficient cpu"))
      << d.unplaced.at("tf");
}

TEST(Session, PodsThatAskForNothingAreBackfilledAfterTheirGangIsPlaced) {
  Placer p;
  p.upsert_node("n1", cpu(2000), true);
  GangRequest r = gang("a", 2, 1000, 3);
  r.pods.push_back({"a-free", ResourceList{}, "sidecar"});
  p.request(r);
  auto d = p.session();
  EXPECT_EQ(d.bindings.size(), 3u);
  EXPECT_EQ(d.bindings.back().uid, "a-free");  // backfill runs after allocate

  sched::Policy no_backfill;
  no_backfill.actions = {"enqueue", "allocate"};
  Placer q(no_backfill);
  q.upsert_node("n1", cpu(2000), true);
  q.request(r);
  d = q.session();
  EXPECT_EQ(d.bindings.size(), 2u);  // allocate leaves it to backfill, which is not configured
}

TEST(Session, WithoutTheEnqueueActionEveryGangIsAdmittedByAllocate) {
  sched::Policy no_enqueue;
  no_enqueue.actions = {"allocate"};
  Placer p(no_enqueue);
  p.upsert_node("n1", cpu(4000), true);
  p.request(gang("huge", 6, 1000, 6));
  auto d = p.session();
  EXPECT_FALSE(d.not_enqueued.count("huge"));  // Inqueue: no budget kept it out
  EXPECT_TRUE(d.unplaced.at("huge").starts_with(
      "2/6 tasks in gang unschedulable: 1 node: insufficient cpu"))
      << d.unplaced.at("huge");
}

TEST(FitErrors, CountsNodesPerReasonMostFirst) {
  sched::FitErrors e;
  e.add({"insufficient cpu"});
  e.add({"insufficient cpu", "insufficient memory"});
  e.add({"NotReady"});
  e.add({"insufficient cpu"});
  EXPECT_EQ(e.message(),
            "3 nodes: insufficient cpu; 1 node: NotReady; 1 node: insufficient memory");
}

// Thousands of random clusters and gangs, several sessions each: no node ever holds more than it
// has, no queue more than its capability, a gang gets either nothing in a session or at least
// its minimum, and an eviction never takes a job below its minimum.
TEST(Session, RandomClustersNeverOvercommitANodeOrAQueueNorHalfPlaceAGang) {
  std::mt19937 rng(20261123);
  int reclaims = 0, preemptions = 0;
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int round = 0; round < 1000; ++round) {
    Placer p(pick(0, 1) ? sched::Scoring::Binpack : sched::Scoring::LeastAllocated);
    std::map<std::string, ResourceList> capacity;
    const int nodes = pick(1, 8);
    for (int i = 0; i < nodes; ++i) {
      auto name = "n" + std::to_string(i);
      capacity[name] = ResourceList{
          {{"cpu", pick(1, 8) * 1000}, {"memory", pick(1, 16) * 1000}, {"pods", 110000}}};
      std::map<std::string, std::string> labels;
      if (pick(0, 1)) labels["zone"] = pick(0, 1) ? "a" : "b";
      p.upsert_node(name, capacity[name], pick(0, 9) > 0, "", labels);
    }
    std::map<std::string, std::optional<ResourceList>> caps;
    std::vector<Queue> queues;
    for (const char* name : {"q0", "q1"}) {
      std::optional<ResourceList> cap;
      if (pick(0, 1)) cap = ResourceList{{{"cpu", pick(1, 6) * 1000}}};
      caps[name] = cap;
      queues.push_back(queue(name, pick(1, 3), cap));
    }
    p.set_queues(queues, {klass("low", 0), klass("mid", 1), klass("high", 2)});
    struct Job {
      GangRequest request;
      int min = 0;
      std::set<std::string> running;
      int bound = 0;  // bindings in all
    };
    std::map<std::string, Job> jobs;
    std::map<std::string, std::pair<std::string, ResourceList>> where;  // uid -> node, asks
    const int count = pick(1, 6);
    for (int j = 0; j < count; ++j) {
      GangRequest r;
      r.job_key = "j" + std::to_string(j);
      r.group.queue = std::vector<std::string>{"q0", "q1", "default"}[pick(0, 2)];
      r.group.priority_class = std::vector<std::string>{"low", "mid", "high"}[pick(0, 2)];
      r.created_ms = pick(0, 5);
      const int tasks = pick(1, 3);
      for (int t = 0; t < tasks; ++t) {
        const std::string task = "t" + std::to_string(t);
        ResourceList ask{
            {{"cpu", pick(0, 3) * 500}, {"memory", pick(0, 4) * 1000}, {"pods", 1000}}};
        const int replicas = pick(1, 4);
        for (int k = 0; k < replicas; ++k) {
          PodAsk a{r.job_key + task + std::to_string(k), ask, task};
          if (pick(0, 4) == 0) a.node_selector["zone"] = "a";
          r.pods.push_back(a);
        }
        if (pick(0, 1)) r.task_min[task] = pick(1, replicas);
      }
      int task_mins = 0;
      for (const auto& [t, m] : r.task_min) task_mins += m;
      r.min_count = std::max(task_mins, pick(1, static_cast<int>(r.pods.size())));
      r.group.min_available = r.min_count;
      jobs[r.job_key] = {r, r.min_count, {}};
      p.request(r);
    }
    for (int session = 0; session < 4; ++session) {
      auto d = p.session();
      std::map<std::string, int> gained;
      for (const auto& b : d.bindings) {
        ++gained[b.job_key];
        ++jobs[b.job_key].bound;
        jobs[b.job_key].running.insert(b.uid);
        where[b.uid] = {b.node, b.requests};
      }
      for (const auto& n : p.nodes()) {
        for (const auto& [res, v] : n.allocatable.values) ASSERT_GE(v, 0) << round << n.name;
        ResourceList held;
        for (const auto& [uid, at] : where)
          if (at.first == n.name) held.add(at.second);
        ASSERT_TRUE(capacity[n.name].fits(held)) << "round " << round << " node " << n.name;
      }
      for (const auto& [name, cap] : caps) {
        if (!cap) continue;
        MilliValue cpu_held = 0;
        for (const auto& [key, job] : jobs)
          if (job.request.group.queue == name)
            for (const auto& uid : job.running) cpu_held += where[uid].second.get("cpu");
        ASSERT_LE(cpu_held, cap->get("cpu")) << "round " << round << " " << name;
      }
      for (const auto& [key, n] : gained) {
        const auto& job = jobs[key];
        // Its first pods come as a whole gang; later ones (stragglers) one by one.
        if (job.bound == n) {
          ASSERT_GE(n, job.min) << "round " << round << " " << key;
        }
      }
      for (const auto& e : d.evictions) {
        ++(e.reason == "Reclaimed" ? reclaims : preemptions);
        auto& job = jobs[e.job_key];
        ASSERT_TRUE(job.running.erase(e.uid)) << round;
        // The victim keeps its minimum (the pods evicted with it counted out).
        int left = 0;
        for (const auto& uid : job.running)
          left += std::none_of(d.evictions.begin(), d.evictions.end(),
                               [&](const Eviction& x) { return x.uid == uid; });
        ASSERT_GE(left, job.min) << "round " << round << " " << e.job_key;
        where.erase(e.uid);
        p.release(e.uid);  // it ended
      }
      // A few running pods finish, giving their nodes back before the next session.
      for (auto& [key, job] : jobs)
        for (auto it = job.running.begin(); it != job.running.end();) {
          if (pick(0, 3) != 0) {
            ++it;
            continue;
          }
          p.release(*it);
          where.erase(*it);
          it = job.running.erase(it);
        }
    }
  }
  EXPECT_GT(reclaims + preemptions, 0) << "no round evicted: the invariant above was not tried";
}

}  // namespace
}  // namespace caldera
