// Taints on real nodes: the cluster config taints a node, and only the pods that tolerate the
// taint are placed there; the others wait, saying which taint keeps them off.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "harness.hpp"

namespace caldera::testing {
namespace {

std::string job(const std::string& name, const std::string& tolerations) {
  return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: " + name +
         "}\nspec:\n  minAvailable: 1\n  tasks:\n    - name: w\n      replicas: 1\n"
         "      template:\n        spec:\n          nodeSelector: {kind: gpu}\n" +
         tolerations +
         "          containers:\n            - name: main\n              command: [\"true\"]\n"
         "              resources: {requests: {cpu: 1}}\n";
}

TEST(Taints, ATaintedNodeRunsOnlyThePodsThatTolerateIt) {
  TempDir dir;
  std::string nodes;
  for (const std::string name : {"n1", "n2"})
    nodes += "  - {name: " + name +
             ", host: 127.0.0.1, clientPort: " + std::to_string(free_port()) +
             ", clusterPort: " + std::to_string(free_port()) + ", dataDir: " + dir.path() + "/" +
             name + ", resources: {cpu: 2, pods: 10}" +
             (name == "n2" ? ", labels: {kind: gpu}, taints: [{key: dedicated, value: gpu, "
                             "effect: NoSchedule}]"
                           : "") +
             "}\n";
  auto config = write_file(dir.path(), "cluster.yaml",
                           "cluster: {name: t, coordinator: n1}\nnodes:\n" + nodes);
  Calderad coordinator(dir.path() + "/n1", {"--config", config, "--node", "n1"});
  Calderad worker(dir.path() + "/n2", {"--config", config, "--node", "n2"});
  coordinator.start();
  worker.start();
  ASSERT_TRUE(eventually([&] {
    auto r = coordinator.cli({"get", "nodes"});
    return r.out.find("n2 ") != std::string::npos && r.out.find("NotReady") == std::string::npos;
  }));
  auto state = [&](const std::string& name) {
    auto r = coordinator.cli({"get", "job", name, "-o", "json"});
    return r.exit_code == 0 ? nlohmann::json::parse(r.out)["status"]["state"] : nlohmann::json();
  };

  ASSERT_EQ(coordinator.cli({"submit", "-f", "-"}, job("plain", "")).exit_code, 0);
  ASSERT_TRUE(eventually([&] {
    return state("plain").value("message", "").find("untolerated taint {dedicated: gpu}") !=
           std::string::npos;
  })) << state("plain").dump();

  ASSERT_EQ(coordinator
                .cli({"submit", "-f", "-"},
                     job("tolerant",
                         "          tolerations: [{key: dedicated, operator: Equal, value: gpu, "
                         "effect: NoSchedule}]\n"))
                .exit_code,
            0);
  EXPECT_TRUE(eventually([&] { return state("tolerant").value("phase", "") == "Completed"; }))
      << state("tolerant").dump() << coordinator.log();
  auto pods = coordinator.cli({"get", "pods", "--job", "tolerant", "-o", "wide"}).out;
  EXPECT_NE(pods.find("n2"), std::string::npos) << pods;
  EXPECT_NE(state("plain").value("phase", ""), "Completed");
}

}  // namespace
}  // namespace caldera::testing
