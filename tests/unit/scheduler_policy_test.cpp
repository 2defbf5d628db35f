// The scheduler conf as the sessions apply it: the actions in force, and each plugin's effect
// (priority and preemption, gang, conformance, overcommit, proportion, predicates, drf, nodeorder
// and binpack), through the session calderad runs.
#include <gtest/gtest.h>

#include "actors/scheduler/core/placer.hpp"
#include "actors/scheduler/framework/policy.hpp"
#include "actors/scheduler/plugins/drf/drf.hpp"
#include "actors/scheduler/plugins/nodeorder/nodeorder.hpp"
#include "tests/unit/placer_test_support.hpp"

namespace caldera {
namespace {

using namespace caldera::testing;

sched::Policy policy_of(const std::string& yaml, Diagnostics* warnings = nullptr) {
  Diagnostics diags;
  auto conf = sched::parse_scheduler_conf(yaml, "", diags);
  EXPECT_TRUE(conf) << (diags.errors.empty() ? "" : to_string(diags.errors[0]));
  if (!conf) return {};
  Diagnostics plugin_diags;
  auto p = sched::policy_from(*conf, "cluster.scheduler", plugin_diags);
  if (warnings) *warnings = plugin_diags;
  return p;
}

const char* kNoPreempt = R"(actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: overcommit}, {name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]
)";

const char* kPreempt = R"(actions: "enqueue, allocate, preempt, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: overcommit}, {name: predicates}, {name: proportion}, {name: nodeorder}]
)";

// One node of 4 cpus full of low's pods (minimum 1), then high asks for 2.
Decisions low_then_high(const sched::Policy& policy, const std::string& low_class = "low") {
  Placer p(policy);
  p.upsert_node("n1", cpu(4000), true);
  p.set_queues({}, {klass("low", 1), klass("high", 100), klass("system-cluster-critical", 1)});
  p.request(gang("default/low", 4, 1000, 1, kDefaultQueue, low_class));
  EXPECT_EQ(p.session().bindings.size(), 4u);
  p.request(gang("default/high", 2, 1000, 2, kDefaultQueue, "high"));
  return p.session();
}

TEST(SchedulerPolicy, TheDefaultConfIsTheDefaultPolicy) {
  Diagnostics diags;
  EXPECT_EQ(sched::policy_from(sched::default_scheduler_conf(), "", diags), sched::Policy{});
  EXPECT_TRUE(diags.warnings.empty());
}

TEST(SchedulerPolicy, WithoutThePreemptActionNothingIsEvicted) {
  auto d = low_then_high(policy_of(kNoPreempt));
  EXPECT_TRUE(d.evictions.empty());
  EXPECT_TRUE(d.bindings.empty());
  EXPECT_TRUE(d.unplaced.count("default/high"));
}

TEST(SchedulerPolicy, WithPreemptAndPriorityAHigherClassEvicts) {
  auto d = low_then_high(policy_of(kPreempt));
  ASSERT_EQ(d.evictions.size(), 2u);
  EXPECT_EQ(d.evictions[0].preemptor, "default/high");
  EXPECT_EQ(d.evictions[0].reason, "Preempted");
}

TEST(SchedulerPolicy, WithoutThePriorityPluginNoClassOutranksAnother) {
  std::string conf = kPreempt;
  conf.replace(conf.find("{name: priority}, "), 18, "");
  auto d = low_then_high(policy_of(conf));
  EXPECT_TRUE(d.evictions.empty());
}

TEST(SchedulerPolicy, PriorityWithPreemptableOffDoesNotEvict) {
  std::string conf = kPreempt;
  conf.replace(conf.find("{name: priority}"), 16, "{name: priority, enablePreemptable: false}");
  EXPECT_TRUE(low_then_high(policy_of(conf)).evictions.empty());
}

TEST(SchedulerPolicy, ConformanceNeverEvictsACriticalJob) {
  auto critical = low_then_high(policy_of(kPreempt), "system-cluster-critical");
  EXPECT_TRUE(critical.evictions.empty());
  // Nor is high admitted past the budget for evictions that cannot come: it stays Pending.
  EXPECT_TRUE(critical.not_enqueued.count("default/high"));
  // Without conformance it is a job like another (its class's value, 1, is below high's).
  std::string conf = kPreempt;
  conf.replace(conf.find(", {name: conformance}"), 21, "");
  EXPECT_EQ(low_then_high(policy_of(conf), "system-cluster-critical").evictions.size(), 2u);
}

TEST(SchedulerPolicy, TheOvercommitFactorSetsTheEnqueueBudget) {
  auto admitted = [](const std::string& conf) {
    Placer p(policy_of(conf));
    p.upsert_node("n1", cpu(4000), true);
    p.request(gang("a", 3, 1000, 3));
    EXPECT_EQ(p.session().bindings.size(), 3u);
    p.request(gang("b", 2, 1000, 2));  // 3 held of 4: 2 more are within 4 x 1.5, not 4 x 1.2
    return !p.session().not_enqueued.count("b");
  };
  std::string conf = kNoPreempt;
  EXPECT_FALSE(admitted(conf));
  conf.replace(conf.find("{name: overcommit}"), 18,
               "{name: overcommit, arguments: {overcommit-factor: 1.5}}");
  EXPECT_TRUE(admitted(conf));
  // Without the plugin, enqueue admits whatever it is given.
  conf = kNoPreempt;
  conf.replace(conf.find("{name: overcommit}, "), 20, "");
  EXPECT_TRUE(admitted(conf));
}

TEST(SchedulerPolicy, WithoutGangWhatFitsOfAJobIsPlaced) {
  auto bound = [](const std::string& conf) {
    Placer p(policy_of(conf));
    p.upsert_node("n1", cpu(4000), true);
    p.request(gang("other", 1, 1500, 1));
    EXPECT_EQ(p.session().bindings.size(), 1u);
    p.request(gang("a", 2, 1500, 2));  // admitted (3 of 4.8 - 1.5); one pod fits, not two
    return p.session().bindings.size();
  };
  EXPECT_EQ(bound(kNoPreempt), 0u);
  std::string conf = kNoPreempt;
  conf.replace(conf.find(", {name: gang}"), 14, "");
  EXPECT_EQ(bound(conf), 1u);
}

TEST(SchedulerPolicy, WithoutPredicatesANodeSelectorIsNotChecked) {
  auto bound = [](const std::string& conf) {
    Placer p(policy_of(conf));
    p.upsert_node("n1", cpu(2000), true, "", {{"zone", "a"}});
    auto g = gang("a", 1, 1000, 1);
    g.pods[0].node_selector = {{"zone", "b"}};
    p.request(g);
    return p.session().bindings.size();
  };
  EXPECT_EQ(bound(kNoPreempt), 0u);
  std::string conf = kNoPreempt;
  conf.replace(conf.find("{name: predicates}, "), 20, "");
  EXPECT_EQ(bound(conf), 1u);
}

TEST(SchedulerPolicy, WithoutProportionQueuesShareNothing) {
  auto by_queue = [](const std::string& conf) {
    Placer p(policy_of(conf));
    p.upsert_node("n1", cpu(4000), true);
    p.set_queues({queue("a", 1), queue("b", 1)}, {});
    for (int i = 0; i < 4; ++i) {
      p.request(gang("a" + std::to_string(i), 1, 1000, 1, "a", "", i));
      p.request(gang("b" + std::to_string(i), 1, 1000, 1, "b", "", 10 + i));
    }
    int a = 0;
    for (const auto& b : p.session().bindings) a += b.job_key[0] == 'a';
    return a;
  };
  EXPECT_EQ(by_queue(kNoPreempt), 2);  // each queue its half
  std::string conf = kNoPreempt;
  conf.replace(conf.find(", {name: proportion}"), 20, "");
  EXPECT_EQ(by_queue(conf), 4);  // the older jobs, all a's
}

TEST(SchedulerPolicy, BinpackAndNodeorderWeightsRankTheNodes) {
  auto node_of_second = [](const std::string& conf) {
    Placer p(policy_of(conf));
    p.upsert_node("n1", cpu(4000), true);
    p.upsert_node("n2", cpu(4000), true);
    p.request(gang("a", 1, 1000, 1));
    auto first = p.session().bindings.at(0).node;
    p.request(gang("b", 1, 1000, 1));
    return p.session().bindings.at(0).node == first;  // piled on the same node
  };
  EXPECT_FALSE(node_of_second(kNoPreempt));  // leastrequested spreads
  std::string conf = kNoPreempt;
  conf.replace(conf.find("{name: nodeorder}"), 17,
               "{name: binpack, arguments: {binpack.weight: 10}}");
  EXPECT_TRUE(node_of_second(conf));
  conf = kNoPreempt;
  conf.replace(conf.find("{name: nodeorder}"), 17,
               "{name: nodeorder, arguments: {leastrequested.weight: 0, mostrequested.weight: 2, "
               "balancedresource.weight: 0}}");
  EXPECT_TRUE(node_of_second(conf));
}

TEST(SchedulerPolicy, WhatThePluginsHereDoNotApplyIsWarnedAbout) {
  Diagnostics w;
  policy_of(R"(actions: "allocate"
tiers:
- plugins:
  - {name: gang, enablePreemptable: false, enableJobStarving: true}
  - {name: nodeorder, arguments: {nodeaffinity.weight: 2, leastrequested.weight: 1}}
  - {name: binpack, arguments: {binpack.resources: nvidia.com/gpu, binpack.resources.nvidia.com/gpu: 3}}
)",
            &w);
  ASSERT_EQ(w.warnings.size(), 2u);
  EXPECT_EQ(w.warnings[0].path, "cluster.scheduler.tiers[0].plugins[0].enableJobStarving");
  EXPECT_EQ(w.warnings[1].path,
            "cluster.scheduler.tiers[0].plugins[1].arguments.nodeaffinity.weight");
}

// Two jobs of one queue whose pods ask for different resources, more than the node holds: with
// drf they take turns by dominant share and end level (within one pod's share), both waiting.
TEST(SchedulerPolicy, DrfLevelsTheDominantSharesOfTwoJobsOfAQueue) {
  const ResourceList node{{{"cpu", 16000}, {"memory", 64000}, {"pods", 110000}}};
  auto run = [&](const sched::Policy& policy) {
    Placer p(policy);
    p.upsert_node("n1", node, true);
    GangRequest cpu_heavy, mem_heavy;
    cpu_heavy.job_key = "default/cpu";
    mem_heavy.job_key = "default/mem";
    for (int i = 0; i < 20; ++i) {
      cpu_heavy.pods.push_back(
          {"c" + std::to_string(i), {{{"cpu", 2000}, {"memory", 1000}, {"pods", 1000}}}, "w"});
      mem_heavy.pods.push_back(
          {"m" + std::to_string(i), {{{"cpu", 500}, {"memory", 8000}, {"pods", 1000}}}, "w"});
    }
    cpu_heavy.min_count = mem_heavy.min_count = 1;
    cpu_heavy.created_ms = 1;
    mem_heavy.created_ms = 2;
    p.request(cpu_heavy);
    p.request(mem_heavy);
    std::map<std::string, ResourceList> held;
    for (int session = 0; session < 3; ++session)
      for (const auto& b : p.session().bindings) held[b.job_key].add(b.requests);
    EXPECT_LT(held["default/cpu"].get("cpu"), 20 * 2000);  // both still wait
    EXPECT_LT(held["default/mem"].get("memory"), 20 * 8000);
    return std::pair{sched::dominant_share(held["default/cpu"], node),
                     sched::dominant_share(held["default/mem"], node)};
  };
  auto [cpu_share, mem_share] = run(policy_of(kNoPreempt));
  EXPECT_NEAR(cpu_share, mem_share, 2000.0 / 16000);  // one cpu-heavy pod's share
  EXPECT_GT(cpu_share, 0.3);
  // Without drf the older job's pods go first and take the node.
  std::string conf = kNoPreempt;
  conf.replace(conf.find("{name: drf}, "), 13, "");
  auto [cpu_alone, mem_alone] = run(policy_of(conf));
  EXPECT_GT(cpu_alone - mem_alone, 0.25);
}

TEST(SchedulerPolicy, PodsThatAskForNothingDoNotEndAJobsDrfTurns) {
  Placer p(policy_of(kNoPreempt));
  p.upsert_node("n1", cpu(8000), true);
  for (const char* name : {"a", "b"}) {
    GangRequest r = gang(name, 4, 1000, 1);
    r.pods.insert(r.pods.begin() + 2, PodAsk{std::string(name) + "-free", ResourceList{}, "side"});
    p.request(r);
  }
  EXPECT_EQ(p.session().bindings.size(), 10u);  // all: the free ones by backfill
}

TEST(SchedulerPolicy, NodeorderScoresAreKubernetesLeastRequestedMostRequestedAndBalanced) {
  auto node = sched::empty_node("n", ResourceList{{{"cpu", 8000}, {"memory", 32000}}});
  node.idle = ResourceList{{{"cpu", 4000}, {"memory", 24000}}};
  sched::TaskInfo task;
  task.requests = ResourceList{{{"cpu", 1000}, {"memory", 4000}, {"pods", 1000}}};
  EXPECT_DOUBLE_EQ(sched::least_requested(node, task), 0.5);  // (3/8 + 20/32) / 2
  EXPECT_DOUBLE_EQ(sched::most_requested(node, task), 0.5);
  EXPECT_DOUBLE_EQ(sched::balanced_allocation(node, task), 0.875);  // 1 - |5/8 - 12/32| / 2
  EXPECT_DOUBLE_EQ(sched::nodeorder_score({1, 0, 1}, node, task), 1.375);
  EXPECT_DOUBLE_EQ(sched::nodeorder_score({0, 2, 0}, node, task), 1.0);
  task.requests = ResourceList{{{"cpu", 5000}}};  // past the idle cpu: nothing is balanced
  EXPECT_DOUBLE_EQ(sched::balanced_allocation(node, task), 0);
  EXPECT_DOUBLE_EQ(sched::nodeorder_score({0, 0, 1}, node, task), 0);
}

TEST(SchedulerPolicy, GangWithPreemptableOffLetsAVictimGoBelowItsMinimum) {
  auto evicted = [](const std::string& conf) {
    Placer p(policy_of(conf));
    p.upsert_node("n1", cpu(4000), true);
    p.set_queues({}, {klass("low", 1), klass("high", 100)});
    p.request(gang("default/low", 4, 1000, 4, kDefaultQueue, "low"));  // all four its minimum
    EXPECT_EQ(p.session().bindings.size(), 4u);
    p.request(gang("default/high", 2, 1000, 2, kDefaultQueue, "high"));
    return p.session().evictions.size();
  };
  EXPECT_EQ(evicted(kPreempt), 0u);  // gang keeps low whole
  std::string conf = kPreempt;
  conf.replace(conf.find("{name: gang}"), 12, "{name: gang, enablePreemptable: false}");
  EXPECT_EQ(evicted(conf), 2u);  // as Volcano's helm default: only priority decides
}

}  // namespace
}  // namespace caldera
