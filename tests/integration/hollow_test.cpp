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
  // The cluster config with `count` hollow nodes (the same ports and dirs every time).
  std::string write_config(int count) {
    return write_file(
        dir_.path(), "cluster.yaml",
        "cluster: {name: hollow-test, coordinator: c, heartbeatInterval: 500ms, "
        "heartbeatTimeout: 2s}\nnodes:\n"
        "  - {name: c, host: 127.0.0.1, clientPort: " +
            std::to_string(ports_[0]) + ", clusterPort: " + std::to_string(ports_[1]) +
            ", dataDir: " + dir_.path() + "/c, resources: {cpu: 1, memory: 1Gi, pods: 10}}\n" +
            "  - {name: h, host: 127.0.0.1, clientPort: " + std::to_string(ports_[2]) +
            ", clusterPort: " + std::to_string(ports_[3]) + ", dataDir: " + dir_.path() +
            "/h, count: " + std::to_string(count) +
            ", resources: {cpu: 2, memory: 4Gi, pods: 20}, labels: {kind: hollow}}\n");
  }

  void SetUp() override {
    for (auto& p : ports_) p = free_port();
    const auto config = write_config(kHollow);
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
  int ports_[4] = {};  // the coordinator's client and cluster ports, then the hollow host's
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
  int checked = 0;
  for (int i = 0; i < kHollow; ++i) {
    const auto name = "h-" + std::to_string(i);
    if (per_node[name] == 0) continue;  // a node without records says nothing
    ++checked;
    EXPECT_NE(log.find("node=" + name + " recovered pods=" + std::to_string(per_node[name]) + " "),
              std::string::npos)
        << name << " ran " << per_node[name] << "\n"
        << log;
  }
  EXPECT_GE(checked, kHollow / 2);  // spread: least-allocated
}

// Started again with a smaller count, the host deletes the records of the nodes it no longer has
// (they were simulated: nothing of them runs), and keeps the others'.
TEST_F(Hollow, AHostWithFewerNodesDeletesTheRecordsOfThoseGone) {
  ASSERT_EQ(coordinator_->cli({"submit", "-f", "-"}, gang("long", 2 * kHollow, 60000)).exit_code,
            0);
  ASSERT_TRUE(eventually([&] { return phase("long") == "Running"; }, 30s));
  int gone = 0;  // pods on the nodes about to go: h-12 ... h-23
  ASSERT_TRUE(eventually(
      [&] {
        auto r = coordinator_->cli({"get", "pods", "-o", "json"});
        if (r.exit_code != 0) return false;
        const auto pods = json::parse(r.out);
        int running = 0;
        gone = 0;
        for (const auto& p : pods["items"]) {
          if (p["status"]["phase"] != "Running") continue;
          ++running;
          gone += std::stoi(p["spec"]["nodeName"].get<std::string>().substr(2)) >= kHollow / 2;
        }
        return running == 2 * kHollow;
      },
      30s));
  ASSERT_GT(gone, 0);
  hollow_->stop();
  write_config(kHollow / 2);
  hollow_->start();
  EXPECT_NE(hollow_->log().find("deletes " + std::to_string(gone) +
                                " pod records of hollow nodes it no longer has"),
            std::string::npos)
      << hollow_->log();
}

}  // namespace
}  // namespace caldera::testing
