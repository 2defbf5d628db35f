// A scheduling session over a snapshot: enqueue, allocate through statements, and the pod groups'
// phases and conditions; with a randomized check of the gang and capacity invariants.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "actors/scheduler/core/predicates.hpp"
#include "actors/scheduler/core/session.hpp"

namespace caldera::sched {
namespace {

ResourceList cpu(MilliValue m) {
  return ResourceList{{{"cpu", m}}};
}

JobInfo gang(const std::string& uid, int pods, MilliValue each, int32_t min, int64_t created = 0,
             const std::string& task = "w") {
  JobInfo j;
  j.uid = uid;
  j.created_ms = created;
  j.min_available = min;
  j.min_resources = cpu(each * min);
  for (int i = 0; i < pods; ++i)
    j.tasks.push_back({uid + "/" + task + std::to_string(i),
                       uid + "-" + task + "-" + std::to_string(i),
                       task,
                       0,
                       cpu(each),
                       TaskStatus::Pending,
                       "",
                       {}});
  return j;
}

Snapshot cluster(int nodes, MilliValue each) {
  Snapshot s;
  for (int i = 1; i <= nodes; ++i) {
    auto name = "n" + std::to_string(i);
    s.nodes[name] = empty_node(name, cpu(each));
  }
  return s;
}

int allocated(const JobInfo& j) {
  int n = 0;
  for (const auto& t : j.tasks) n += t.status == TaskStatus::Allocated;
  return n;
}

TEST(Session, TwoGangsThatFitAloneButNotTogether_OneRunsWholeTheOtherWaitsThenStarts) {
  auto s = cluster(2, 4000);
  s.jobs = {gang("default/b", 4, 2000, 4, 2), gang("default/a", 4, 2000, 4, 1)};
  auto r = run_session(s);
  EXPECT_EQ(allocated(s.jobs[1]), 4);  // a is older
  EXPECT_EQ(allocated(s.jobs[0]), 0);
  EXPECT_EQ(r.operations.size(), 4u);
  EXPECT_TRUE(r.conditions.at("default/a").scheduled);
  // b is not admitted: a's 8 cpu leave 1.6 of the cluster's 8 x 1.2.
  EXPECT_EQ(r.conditions.at("default/b").message,
            "4/4 tasks in gang unschedulable: its minResources (cpu 8) exceed what the cluster has "
            "left");
  EXPECT_EQ(r.phases.at("default/a"), PodGroupPhase::Running);
  EXPECT_EQ(r.phases.at("default/b"), PodGroupPhase::Pending);

  // a finishes: its pods give their nodes back, and the next session starts b whole.
  for (auto& t : s.jobs[1].tasks) {
    s.nodes[t.node].idle.add(t.requests);
    t.status = TaskStatus::Succeeded;
  }
  r = run_session(s);
  EXPECT_EQ(allocated(s.jobs[0]), 4);
  EXPECT_TRUE(r.conditions.at("default/b").scheduled);
}

TEST(Session, AnAdmittedGangThatDoesNotFitNowSaysWhichNodesRefusedIt) {
  auto s = cluster(2, 4000);
  // Both are admitted (4 + 5 of 8 x 1.2), but b's pods of 2.5 cpu find 2 left on each node.
  s.jobs = {gang("default/a", 2, 2000, 2, 1), gang("default/b", 2, 2500, 2, 2)};
  auto r = run_session(s, {Scoring::LeastAllocated});
  EXPECT_EQ(allocated(s.jobs[0]), 2);
  EXPECT_EQ(r.phases.at("default/b"), PodGroupPhase::Inqueue);
  EXPECT_EQ(r.conditions.at("default/b").message,
            "2/2 tasks in gang unschedulable: 2 nodes: insufficient cpu");
}

TEST(Session, AGangsOwnFailedTryDoesNotKeepALaterGangOfTheSameAsksOut) {
  auto s = cluster(2, 4000);
  s.jobs = {gang("default/a", 5, 2000, 5, 1), gang("default/b", 4, 2000, 4, 2),
            gang("default/c", 1, 2000, 1, 3)};
  for (auto& j : s.jobs) j.phase = PodGroupPhase::Inqueue;
  auto r = run_session(s);
  EXPECT_EQ(allocated(s.jobs[0]), 0);  // 4 of 5 fit: discarded
  EXPECT_EQ(allocated(s.jobs[1]), 4);
  // c asks the same once b has filled the nodes: it is told the same as a search would find.
  EXPECT_EQ(r.conditions.at("default/c").message,
            "1/1 tasks in gang unschedulable: 2 nodes: insufficient cpu");
}

TEST(Session, AGangThatCanNeverFitSaysWhyPerNode) {
  Snapshot s;
  s.nodes["n1"] = empty_node("n1", cpu(1000));
  s.nodes["n1"].labels = {{"zone", "a"}};
  s.nodes["n2"] = empty_node("n2", cpu(4000));
  s.nodes["n2"].labels = {{"zone", "b"}};
  s.nodes["n3"] = empty_node("n3", cpu(4000), /*ready=*/false);
  s.nodes["n3"].labels = {{"zone", "a"}};
  s.nodes["n4"] = empty_node("n4", cpu(500));
  s.nodes["n4"].labels = {{"zone", "a"}};
  auto j = gang("default/g", 1, 2000, 1);
  j.tasks[0].node_selector = {{"zone", "a"}};
  j.min_resources = {};
  s.jobs = {j};
  auto r = run_session(s);
  EXPECT_EQ(r.conditions.at("default/g").message,
            "1/1 tasks in gang unschedulable: 2 nodes: insufficient cpu; 1 node: NotReady; "
            "1 node: node selector does not match");
  EXPECT_TRUE(r.operations.empty());
}

TEST(Session, TheSeedsExample_SixOfEightPlacedIsTwoUnschedulableAndAllDiscarded) {
  auto s = cluster(6, 1000);
  auto j = gang("default/tf", 7, 1000, 8, 0, "worker");
  auto ps = gang("default/tf", 1, 1000, 8, 0, "ps");
  j.tasks.insert(j.tasks.begin(), ps.tasks[0]);
  j.task_min_available = {{"ps", 1}, {"worker", 7}};
  s.jobs = {j};
  const auto nodes_before = s.nodes;
  s.jobs[0].phase = PodGroupPhase::Inqueue;
  auto r = run_session(s);
  EXPECT_EQ(r.conditions.at("default/tf").message,
            "2/8 tasks in gang unschedulable: 6 nodes: insufficient cpu");
  EXPECT_EQ(s.nodes, nodes_before);
  EXPECT_EQ(allocated(s.jobs[0]), 0);
}

TEST(Session, AnInvalidGangIsNotAllocated) {
  auto s = cluster(2, 4000);
  auto j = gang("default/x", 2, 1000, 3);
  j.phase = PodGroupPhase::Inqueue;
  s.jobs = {j};
  auto r = run_session(s);
  EXPECT_EQ(r.conditions.at("default/x").reason, "NotEnoughPods");
  EXPECT_TRUE(r.operations.empty());
}

TEST(Session, StragglersOfAReadyGangArePlacedAsTheyFit) {
  auto s = cluster(1, 3000);
  s.jobs = {gang("default/a", 5, 1000, 2)};
  auto r = run_session(s);
  EXPECT_EQ(allocated(s.jobs[0]), 3);
  EXPECT_TRUE(r.conditions.at("default/a").scheduled);
  EXPECT_EQ(r.phases.at("default/a"), PodGroupPhase::Running);
}

TEST(Session, BinpackFillsANodeAndLeastAllocatedSpreads) {
  for (auto policy : {Scoring::Binpack, Scoring::LeastAllocated}) {
    auto s = cluster(2, 4000);
    s.jobs = {gang("default/a", 2, 1000, 2)};
    run_session(s, {policy});
    const auto& t = s.jobs[0].tasks;
    EXPECT_EQ(t[0].node == t[1].node, policy == Scoring::Binpack) << to_string(policy);
  }
}

TEST(Session, Enqueue_AdmitsWhatTheClusterCanHoldAndSaysWhyNotOtherwise) {
  auto s = cluster(1, 4000);
  s.jobs = {gang("default/small", 2, 1000, 2, 1), gang("default/huge", 6, 1000, 6, 2)};
  auto r = run_session(s);
  EXPECT_EQ(r.phases.at("default/small"), PodGroupPhase::Running);
  EXPECT_EQ(r.phases.at("default/huge"), PodGroupPhase::Pending);  // 6 > 4 x 1.2 - 0
  EXPECT_EQ(r.conditions.at("default/huge").reason, "NotEnqueued");
  EXPECT_EQ(r.conditions.at("default/huge").message,
            "6/6 tasks in gang unschedulable: its minResources (cpu 6) exceed what the cluster has "
            "left");
  EXPECT_EQ(allocated(s.jobs[1]), 0);
}

TEST(Session, APodGroupWithRunningPodsThatCannotBeMadeWholeIsUnknown) {
  auto s = cluster(1, 2000);
  auto j = gang("default/a", 3, 1000, 3);
  j.phase = PodGroupPhase::Running;
  for (int i = 0; i < 2; ++i) {
    j.tasks[i].status = TaskStatus::Running;
    j.tasks[i].node = "n1";
  }
  s.nodes["n1"].idle = cpu(0);
  s.jobs = {j};
  auto r = run_session(s);
  EXPECT_EQ(r.phases.at("default/a"), PodGroupPhase::Unknown);
  EXPECT_FALSE(r.conditions.at("default/a").scheduled);
}

TEST(Session, ASearchStopsAtTheNodesToFindAndTheNextStartsWhereItStopped) {
  EXPECT_EQ(nodes_to_find(50, 0), 50u);
  EXPECT_EQ(nodes_to_find(1000, 0), 420u);   // 50% less 8%
  EXPECT_EQ(nodes_to_find(10000, 0), 500u);  // at least 5%
  EXPECT_EQ(nodes_to_find(1000, 7), 7u);
  // With one node to find, binpack cannot pile pods up: each search takes the next node.
  auto s = cluster(3, 4000);
  s.jobs = {gang("default/a", 3, 1000, 3)};
  SessionOptions one{Scoring::Binpack};
  one.nodes_to_find = 1;
  run_session(s, one);
  std::set<std::string> used;
  for (const auto& t : s.jobs[0].tasks) used.insert(t.node);
  EXPECT_EQ(used.size(), 3u);
}

TEST(Session, PodsThatOnlyAskASlotAreNotPlacedPartlyWhenTooFewSlotsAreFree) {
  Snapshot s;
  s.nodes["n1"] = empty_node("n1", ResourceList{{{"pods", 2000}}});
  auto j = gang("default/slots", 4, 0, 3);
  for (auto& t : j.tasks) t.requests = ResourceList{{{"pods", 1000}}};
  j.min_resources = {};
  s.jobs = {j};
  auto r = run_session(s);
  EXPECT_EQ(allocated(s.jobs[0]), 0);
  EXPECT_EQ(r.conditions.at("default/slots").message,
            "1/4 tasks in gang unschedulable: 1 node: too many pods");
}

TEST(Session, ATasksMinimumGoesFirstAndOnlyItsShortfallIsCounted) {
  auto s = cluster(1, 4000);
  JobInfo j;
  j.uid = "default/tf";
  j.phase = PodGroupPhase::Inqueue;
  j.min_available = 3;
  j.task_min_available = {{"ps", 1}, {"worker", 2}};
  for (int i = 0; i < 4; ++i)  // names that sort before the ps's
    j.tasks.push_back({"w" + std::to_string(i),
                       "a-worker-" + std::to_string(i),
                       "worker",
                       0,
                       cpu(1000),
                       TaskStatus::Pending,
                       "",
                       {}});
  j.tasks.push_back({"ps", "z-ps-0", "ps", 0, cpu(1000), TaskStatus::Pending, "", {}});
  s.jobs = {j};
  run_session(s);
  EXPECT_EQ(s.jobs[0].tasks[4].status, TaskStatus::Allocated);  // the ps has its room
  EXPECT_EQ(allocated(s.jobs[0]), 4);

  // A ps no node can hold: the workers would fit, the gang does not, by one pod.
  s = cluster(1, 4000);
  j.tasks[4].requests = cpu(5000);
  s.jobs = {j};
  auto r = run_session(s);
  EXPECT_EQ(allocated(s.jobs[0]), 0);
  EXPECT_EQ(r.conditions.at("default/tf").message,
            "1/5 tasks in gang unschedulable: 1 node: insufficient cpu");
}

TEST(FitErrors, CountsNodesPerReasonMostFirst) {
  FitErrors e;
  e.add({"insufficient cpu"});
  e.add({"insufficient cpu", "insufficient memory"});
  e.add({"NotReady"});
  e.add({"insufficient cpu"});
  EXPECT_EQ(e.message(),
            "3 nodes: insufficient cpu; 1 node: NotReady; 1 node: insufficient memory");
}

// Thousands of random clusters and gangs: after every session no node holds more than it has,
// no queue more than its capability, and every gang is either ready or got nothing in that
// session.
TEST(Session, RandomClustersNeverOvercommitANodeOrAQueueNorHalfPlaceAGang) {
  std::mt19937 rng(20261123);
  int reclaims = 0;
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int round = 0; round < 2000; ++round) {
    Snapshot s;
    const int nodes = pick(1, 8);
    for (int i = 0; i < nodes; ++i) {
      auto name = "n" + std::to_string(i);
      ResourceList cap{{{"cpu", pick(1, 8) * 1000}, {"memory", pick(1, 16) * 1000}}};
      s.nodes[name] = empty_node(name, cap, pick(0, 9) > 0);
      if (pick(0, 1)) s.nodes[name].labels["zone"] = pick(0, 1) ? "a" : "b";
    }
    for (const char* name : {"q0", "q1"}) {
      QueueInfo q;
      q.name = name;
      q.weight = pick(1, 3);
      if (pick(0, 1)) q.capability = ResourceList{{{"cpu", pick(1, 6) * 1000}}};
      s.queues[name] = q;
    }
    const int jobs = pick(1, 6);
    for (int j = 0; j < jobs; ++j) {
      JobInfo job;
      job.uid = "ns/j" + std::to_string(j);
      job.queue = std::vector<std::string>{"q0", "q1", "default"}[pick(0, 2)];
      job.created_ms = pick(0, 5);
      job.priority = pick(0, 2);
      const int tasks = pick(1, 3);
      for (int t = 0; t < tasks; ++t) {
        const std::string task = "t" + std::to_string(t);
        ResourceList ask{{{"cpu", pick(0, 3) * 500}, {"memory", pick(0, 4) * 1000}}};
        const int replicas = pick(1, 4);
        for (int k = 0; k < replicas; ++k) {
          TaskInfo ti{job.uid + task + std::to_string(k),
                      task + std::to_string(k),
                      task,
                      pick(0, 1),
                      ask,
                      TaskStatus::Pending,
                      "",
                      {}};
          if (pick(0, 4) == 0) ti.node_selector["zone"] = "a";
          job.tasks.push_back(ti);
        }
        if (pick(0, 1)) job.task_min_available[task] = pick(1, replicas);
      }
      job.min_available = pick(1, static_cast<int>(job.tasks.size()));
      job.min_resources = {};
      s.jobs.push_back(job);
    }
    for (int session = 0; session < 3; ++session) {
      std::vector<int> before;
      for (const auto& j : s.jobs) before.push_back(j.ready_task_num());
      auto r = run_session(s, {pick(0, 1) ? Scoring::Binpack : Scoring::LeastAllocated});
      std::map<std::string, ResourceList> held;  // pods being evicted hold their node still
      for (const auto& j : s.jobs)
        for (const auto& t : j.tasks)
          if (allocated_status(t.status) || t.status == TaskStatus::Releasing)
            held[t.node].add(t.requests);
      for (const auto& [name, node] : s.nodes) {
        ASSERT_TRUE(node.allocatable.fits(held[name])) << "round " << round << " node " << name;
        for (const auto& [res, v] : node.idle.values) ASSERT_GE(v, 0) << round;
        ResourceList sum = node.idle;
        sum.add(held[name]);
        for (const auto& [res, v] : node.allocatable.values) ASSERT_EQ(sum.get(res), v) << round;
      }
      for (const auto& [name, q] : s.queues) {
        if (!q.capability) continue;
        ResourceList queue_held;
        for (const auto& j : s.jobs)
          if (j.queue == name)
            for (const auto& t : j.tasks)
              if (allocated_status(t.status)) queue_held.add(t.requests);
        ASSERT_LE(queue_held.get("cpu"), q.capability->get("cpu")) << "round " << round << name;
      }
      for (size_t j = 0; j < s.jobs.size(); ++j) {
        const auto& job = s.jobs[j];
        const bool gained = job.ready_task_num() > before[j];
        ASSERT_TRUE(!gained || job_ready(job)) << "round " << round << " " << job.uid;
        // Preemption never takes a job below its minAvailable.
        const bool lost = std::any_of(job.tasks.begin(), job.tasks.end(), [](const TaskInfo& t) {
          return t.status == TaskStatus::Releasing;
        });
        ASSERT_TRUE(!lost || job.ready_task_num() >= job.min_available) << round << job.uid;
      }
      // A queue that pods were reclaimed from keeps at least its share of what they free.
      std::set<std::string> reclaimed_from;
      for (const auto& op : r.operations) {
        if (op.kind != OpKind::Evict || op.reason != "Reclaimed") continue;
        ++reclaims;
        for (const auto& j : s.jobs)
          if (j.uid == op.job) reclaimed_from.insert(j.queue);
      }
      for (const auto& name : reclaimed_from) {
        ResourceList kept;
        for (const auto& j : s.jobs)
          if (j.queue == name)
            for (const auto& t : j.tasks)
              if (allocated_status(t.status)) kept.add(t.requests);
        const auto& q = s.queues.at(name);
        for (const auto& res : {"cpu", "memory"})
          ASSERT_GE(kept.get(res), q.deserved.get(res)) << "round " << round << " " << name;
      }
      // Bound pods stay; evicted ones leave, pipelined ones wait again, and a few others finish,
      // giving their nodes back before the next session.
      for (auto& n : s.nodes) n.second.releasing = n.second.pipelined = {};
      for (auto& j : s.jobs)
        for (auto& t : j.tasks) {
          if (t.status == TaskStatus::Releasing) {
            s.nodes[t.node].idle.add(t.requests);
            t.status = TaskStatus::Failed;
          }
          if (t.status == TaskStatus::Pipelined) {
            t.status = TaskStatus::Pending;
            t.node.clear();
          }
          if (t.status == TaskStatus::Allocated) t.status = TaskStatus::Running;
          if (t.status == TaskStatus::Running && pick(0, 3) == 0) {
            s.nodes[t.node].idle.add(t.requests);
            t.status = TaskStatus::Succeeded;
          }
        }
    }
  }
  EXPECT_GT(reclaims, 0) << "the rounds never reclaimed: the invariant above was not tried";
}

}  // namespace
}  // namespace caldera::sched
