// Taints and tolerations: Kubernetes' matching, a pod's tolerations read from YAML and kept with
// its job, nodes' taints from the cluster config, and the session keeping untolerating pods off.
#include <capnp/message.h>
#include <gtest/gtest.h>

#include "actors/scheduler/core/placer.hpp"
#include "messages/codec/codec.hpp"
#include "messages/model/taint.hpp"
#include "messages/yaml/job_yaml.hpp"
#include "node/cluster_config.hpp"
#include "tests/unit/placer_test_support.hpp"

namespace caldera {
namespace {

using namespace caldera::testing;

const Taint kGpu{"dedicated", "gpu", "NoSchedule"};

TEST(Taint, ATolerationMatchesByKeyValueAndEffectOrByExists) {
  EXPECT_TRUE(tolerates({"dedicated", "Equal", "gpu", "NoSchedule", {}}, kGpu));
  EXPECT_TRUE(tolerates({"dedicated", "Equal", "gpu", "", {}}, kGpu));  // every effect
  EXPECT_FALSE(tolerates({"dedicated", "Equal", "cpu", "NoSchedule", {}}, kGpu));
  EXPECT_FALSE(tolerates({"dedicated", "Equal", "gpu", "NoExecute", {}}, kGpu));
  EXPECT_TRUE(tolerates({"dedicated", "Exists", "", "", {}}, kGpu));
  EXPECT_TRUE(tolerates({"", "Exists", "", "", {}}, kGpu));  // every taint
  EXPECT_FALSE(tolerates({"other", "Exists", "", "", {}}, kGpu));
}

TEST(Taint, OnlyNoScheduleAndNoExecuteKeepAPodOff) {
  const std::vector<Taint> taints{{"soft", "", "PreferNoSchedule"}, kGpu};
  EXPECT_EQ(untolerated(taints, {}), kGpu);
  EXPECT_FALSE(untolerated(taints, {{"dedicated", "Exists", "", "", {}}}));
  EXPECT_EQ(taint_text(kGpu), "{dedicated: gpu}");
}

TEST(Taint, TolerationsAreReadCheckedAndKeptWithTheJob) {
  Diagnostics diags;
  auto parsed = parse_yaml(R"(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: j}
spec:
  tasks:
    - name: t
      template:
        spec:
          tolerations:
            - {key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}
            - {operator: Exists}
            - {key: flaky, operator: Exists, effect: NoExecute, tolerationSeconds: 30}
          containers: [{command: [true]}]
)",
                           diags);
  ASSERT_TRUE(diags.ok()) << to_string(diags.errors.at(0));
  EXPECT_TRUE(diags.warnings.empty());
  const auto& spec = parsed.jobs.at(0).value;
  const std::vector<Toleration> want{{"dedicated", "Equal", "gpu", "NoSchedule", {}},
                                     {"", "Exists", "", "", {}},
                                     {"flaky", "Exists", "", "NoExecute", 30}};
  EXPECT_EQ(spec.tasks.at(0).template_.tolerations, want);
  capnp::MallocMessageBuilder b;
  encode(spec, b.initRoot<api::JobSpec>());
  Diagnostics ignored;
  EXPECT_EQ(decode(b.getRoot<api::JobSpec>().asReader(), ignored).tasks.at(0).template_.tolerations,
            want);

  for (const auto& [toleration, path] : std::vector<std::pair<std::string, std::string>>{
           {"{key: a, operator: Is}", "operator"},
           {"{key: a, operator: Exists, value: b}", "value"},
           {"{value: b}", "operator"},
           {"{key: a, effect: Never}", "effect"},
           {"{key: a, effect: NoSchedule, tolerationSeconds: 5}", "tolerationSeconds"}}) {
    Diagnostics bad;
    parse_yaml(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j}\nspec:\n"
        "  tasks:\n    - name: t\n      template:\n        spec:\n          tolerations: [" +
            toleration + "]\n          containers: [{command: [true]}]\n",
        bad);
    ASSERT_FALSE(bad.ok()) << toleration;
    EXPECT_EQ(bad.errors[0].path, "spec.tasks[0].template.spec.tolerations[0]." + path)
        << toleration;
  }
}

TEST(Taint, NodesTakeTheirTaintsFromTheClusterConfig) {
  Diagnostics diags;
  auto cfg = parse_cluster_config(R"(cluster: {name: t, coordinator: a}
nodes:
  - {name: a, host: 127.0.0.1, clusterPort: 1, clientPort: 2, dataDir: /tmp/a,
     taints: [{key: dedicated, value: gpu, effect: NoSchedule}, {key: soft, effect: PreferNoSchedule}]}
)",
                                  diags);
  ASSERT_TRUE(cfg) << to_string(diags.errors.at(0));
  const std::vector<Taint> want{kGpu, {"soft", "", "PreferNoSchedule"}};
  EXPECT_EQ(cfg->nodes.at(0).taints, want);

  Diagnostics bad;
  EXPECT_FALSE(parse_cluster_config(R"(cluster: {name: t, coordinator: a}
nodes:
  - {name: a, host: 127.0.0.1, clusterPort: 1, clientPort: 2, dataDir: /tmp/a,
     taints: [{key: dedicated, effect: Sometimes}, {effect: NoSchedule}]}
)",
                                    bad));
  ASSERT_EQ(bad.errors.size(), 2u);
  EXPECT_EQ(bad.errors[0].path, "nodes[0].taints[0].effect");
  EXPECT_EQ(bad.errors[1].path, "nodes[0].taints[1].key");
}

TEST(Taint, ATaintedNodeGetsOnlyThePodsThatTolerateIt) {
  Placer p;
  p.set_node_taints({{"gpu", {kGpu}}});
  p.upsert_node("gpu", cpu(4000), true, "", {{"kind", "gpu"}});
  p.upsert_node("plain", cpu(1000), true, "", {{"kind", "plain"}});
  auto plain = gang("plain-job", 2, 1000, 2);
  p.request(plain);
  auto d = p.session();
  EXPECT_TRUE(d.bindings.empty());  // one fits on plain, the tainted node takes neither
  EXPECT_EQ(d.unplaced.at("plain-job"),
            "1/2 tasks in gang unschedulable: 1 node: insufficient cpu; 1 node: untolerated "
            "taint {dedicated: gpu}");
  p.request(GangRequest{"plain-job", {}, 0, {}});

  auto tolerant = gang("tolerant", 2, 1000, 2);
  for (auto& a : tolerant.pods) a.tolerations = {{"dedicated", "Equal", "gpu", "NoSchedule", {}}};
  p.request(tolerant);
  d = p.session();
  ASSERT_EQ(d.bindings.size(), 2u);
  // Least requested spreads them: one goes to the tainted node, which it may.
  std::set<std::string> nodes;
  for (const auto& b : d.bindings) nodes.insert(b.node);
  EXPECT_TRUE(nodes.count("gpu"));
}

// A session remembers asks that fit nowhere; one that tolerates the taint is another ask.
TEST(Taint, APodThatToleratesIsNotToldWhatOneThatDoesNotWasInTheSameSession) {
  Placer p;
  p.set_node_taints({{"gpu", {kGpu}}});
  p.upsert_node("gpu", cpu(4000), true);
  p.request(gang("plain", 1, 1000, 1, kDefaultQueue, "", 1));
  auto tolerant = gang("tolerant", 1, 1000, 1, kDefaultQueue, "", 2);
  tolerant.pods[0].tolerations = {{"dedicated", "Exists", "", "", {}}};
  p.request(tolerant);
  auto d = p.session();
  ASSERT_EQ(d.bindings.size(), 1u);
  EXPECT_EQ(d.bindings[0].job_key, "tolerant");
  EXPECT_EQ(d.unplaced.at("plain"),
            "1/1 tasks in gang unschedulable: 1 node: untolerated taint {dedicated: gpu}");
}

}  // namespace
}  // namespace caldera
