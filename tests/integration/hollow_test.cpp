// Hollow nodes (a cluster config entry with a count, like Kubernetes' kubemark): one calderad
// process hosts many simulated nodes that register, heartbeat and run pods as any node does, so
// that the scheduler meets a cluster of many nodes on one machine.
#include <gtest/gtest.h>
#include <signal.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "harness.hpp"

namespace caldera::testing {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr int kHollow = 24;

class Hollow : public ::testing::Test {
 protected:
  void SetUp() override {
    const int c_client = free_port(), c_cluster = free_port(), h_client = free_port(),
              h_cluster = free_port();
    const auto config = write_file(
        dir_.path(), "cluster.yaml",
        "cluster: {name: hollow-test, coordinator: c, heartbeatInterval: 500ms, "
        "heartbeatTimeout: 2s}\nnodes:\n"
        "  - {name: c, host: 127.0.0.1, clientPort: " +
            std::to_string(c_client) + ", clusterPort: " + std::to_string(c_cluster) +
            ", dataDir: " + dir_.path() + "/c, resources: {cpu: 1, memory: 1Gi, pods: 10}}\n" +
            "  - {name: h, host: 127.0.0.1, clientPort: " + std::to_string(h_client) +
            ", clusterPort: " + std::to_string(h_cluster) + ", dataDir: " + dir_.path() +
            "/h, count: " + std::to_string(kHollow) +
            ", resources: {cpu: 2, memory: 4Gi, pods: 20}, labels: {kind: hollow}}\n");
    coordinator_ = std::make_unique<Calderad>(
        dir_.path() + "/c", std::vector<std::string>{"--config", config, "--node", "c"});
    hollow_ = std::make_unique<Calderad>(
        dir_.path() + "/h", std::vector<std::string>{"--config", config, "--node", "h"});
    coordinator_->start();
    hollow_->start();
    ASSERT_TRUE(eventually([&] { return ready().size() == kHollow + 1; }, 30s))
        << coordinator_->cli({"get", "nodes"}).out << hollow_->log();
  }

  std::set<std::string> ready() {
    auto r = coordinator_->cli({"get", "nodes", "-o", "json"});
    std::set<std::string> out;
    if (r.exit_code != 0) return out;
    const auto nodes = json::parse(r.out);
    for (const auto& n : nodes["items"])
      if (n["status"]["conditions"][0]["status"] == "True") out.insert(n["metadata"]["name"]);
    return out;
  }

  // `replicas` pods of half a cpu on the hollow nodes, all at once, each running `ms` (no
  // simulated duration: "false", which a hollow node does not run).
  std::string gang(const std::string& name, int replicas, int ms = -1) {
    return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: " + name +
           "}\nspec:\n  minAvailable: " + std::to_string(replicas) +
           "\n  tasks:\n    - name: w\n      replicas: " + std::to_string(replicas) +
           "\n      template:\n" +
           (ms < 0 ? ""
                   : "        metadata: {annotations: {caldera.io/sim-duration-ms: \"" +
                         std::to_string(ms) + "\"}}\n") +
           "        spec:\n          nodeSelector: {kind: hollow}\n          containers:\n"
           "            - name: main\n              command: [\"false\"]\n"
           "              resources: {requests: {cpu: 500m}}\n";
  }

  std::string phase(const std::string& job) {
    auto r = coordinator_->cli({"get", "job", job, "-o", "json"});
    return r.exit_code == 0 ? json::parse(r.out)["status"]["state"]["phase"].get<std::string>()
                            : "";
  }

  TempDir dir_;
  std::unique_ptr<Calderad> coordinator_, hollow_;
};

// Every hollow node is a node of its own: Ready, with the entry's resources and labels, given a
// share of a gang larger than any one of them, and running pods as simulated ("false" succeeds).
TEST_F(Hollow, OneProcessHostsManyNodesThatRunAGangAcrossThem) {
  auto nodes = json::parse(coordinator_->cli({"get", "nodes", "-o", "json"}).out)["items"];
  int hollow = 0;
  for (const auto& n : nodes) {
    if (n["metadata"]["labels"].value("kind", "") != "hollow") continue;
    ++hollow;
    EXPECT_EQ(n["status"]["capacity"]["cpu"], "2") << n.dump();
  }
  EXPECT_EQ(hollow, kHollow);
  ASSERT_EQ(coordinator_->cli({"submit", "-f", "-"}, gang("wide", 3 * kHollow)).exit_code, 0);
  ASSERT_TRUE(eventually([&] { return phase("wide") == "Completed"; }, 30s))
      << coordinator_->cli({"describe", "job", "wide"}).out;
  std::set<std::string> used;
  auto pods = json::parse(coordinator_->cli({"get", "pods", "-o", "json"}).out)["items"];
  for (const auto& p : pods) used.insert(p["spec"]["nodeName"].get<std::string>());
  EXPECT_GE(used.size(), static_cast<size_t>(kHollow * 3 / 4));  // spread, least-allocated
  EXPECT_EQ(used.count("c"), 0u);
}

// Killed and started again, each hollow node takes back its own pods' records, not the others'
// (the nodes share one store; each node's records carry its name). The coordinator evicted them
// when the process was lost, so they end there; what counts is what each node read.
TEST_F(Hollow, AfterAKillEachHollowNodeReadsBackOnlyItsOwnPods) {
  ASSERT_EQ(coordinator_->cli({"submit", "-f", "-"}, gang("long", 2 * kHollow, 60000)).exit_code,
            0);
  std::map<std::string, int> per_node;  // node -> its running pods
  ASSERT_TRUE(eventually(
      [&] {
        per_node.clear();
        auto r = coordinator_->cli({"get", "pods", "-o", "json"});
        if (r.exit_code != 0) return false;
        const auto pods = json::parse(r.out);
        int running = 0;
        for (const auto& p : pods["items"])
          if (p["status"]["phase"] == "Running") {
            ++per_node[p["spec"]["nodeName"].get<std::string>()];
            ++running;
          }
        return running == 2 * kHollow;
      },
      30s));
  hollow_->kill9();
  hollow_->start();
  ASSERT_TRUE(eventually([&] { return ready().size() == kHollow + 1; }, 30s)) << hollow_->log();
  const auto log = hollow_->log();
  for (int i = 0; i < kHollow; ++i) {
    const auto name = "h-" + std::to_string(i);
    EXPECT_NE(log.find("node=" + name + " recovered pods=" + std::to_string(per_node[name]) + " "),
              std::string::npos)
        << name << " ran " << per_node[name] << "\n"
        << log;
  }
}

}  // namespace
}  // namespace caldera::testing
