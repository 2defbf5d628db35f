// History retention on a real calderad: cluster.history's maxFinishedJobs and maxAge delete the
// oldest settled jobs with their pods' records and logs, leave live jobs alone, and count what
// they did on the metrics port.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "harness.hpp"

namespace caldera::testing {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string job_yaml(const std::string& name, const std::string& script) {
  return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: " + name +
         "}\nspec:\n  tasks:\n    - name: main\n      replicas: 1\n      template:\n" +
         "        spec: {containers: [{name: main, command: [sh, -c, \"" + script + "\"]}]}\n";
}

// One node from a config whose cluster.history is `history`, with its metrics port.
class History : public ::testing::Test {
 protected:
  void start(const std::string& history) {
    auto config = write_file(
        dir_.path(), "cluster.yaml",
        "cluster: {name: history, coordinator: n, history: " + history + "}\n" +
            "nodes:\n  - {name: n, host: 127.0.0.1, clientPort: " + std::to_string(free_port()) +
            ", clusterPort: " + std::to_string(free_port()) + ", dataDir: " + dir_.path() +
            "/n, resources: {cpu: 8, memory: 8Gi, pods: 50}}\n");
    node_ = std::make_unique<Calderad>(
        dir_.path() + "/n", std::vector<std::string>{"--config", config, "--node", "n",
                                                     "--metrics-port", std::to_string(metrics_)});
    node_->start();
  }

  // The value of the series `name` (labels included), or -1 when the port does not show it.
  double metric(const std::string& name) const {
    auto r = run({"curl", "-sf", "http://127.0.0.1:" + std::to_string(metrics_) + "/metrics"});
    auto at = r.out.find("\n" + name + " ");
    if (r.exit_code != 0 || at == std::string::npos) return -1;
    return std::stod(r.out.substr(at + name.size() + 2));
  }

  void run_to_completion(const std::string& name) {
    ASSERT_EQ(node_->cli({"submit", "-f", "-"}, job_yaml(name, "echo " + name)).exit_code, 0);
    ASSERT_EQ(node_->cli({"wait", "job", name, "--for=phase=Completed", "--timeout=30s"}).exit_code,
              0)
        << node_->log();
  }

  bool exists(const std::string& name) const {
    return node_->cli({"get", "job", name}).exit_code == 0;
  }

  size_t pod_dirs() const {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_.path() + "/n/pods")) ++n;
    return n;
  }

  TempDir dir_;
  int metrics_ = free_port();
  std::unique_ptr<Calderad> node_;
};

TEST_F(History, MaxFinishedJobsKeepsTheNewestAndTheirLogsAndLeavesLiveJobsAlone) {
  start("{maxFinishedJobs: 3, maxAge: 0}");
  ASSERT_EQ(node_->cli({"submit", "-f", "-"}, job_yaml("live", "sleep 600")).exit_code, 0);
  ASSERT_EQ(node_->cli({"wait", "job", "live", "--for=phase=Running", "--timeout=30s"}).exit_code,
            0);
  for (int i = 0; i < 6; ++i) run_to_completion("done-" + std::to_string(i));
  ASSERT_TRUE(eventually([&] {
    return metric("caldera_history_deleted_total{reason=\"count\"}") == 3;
  })) << node_->log();
  EXPECT_TRUE(eventually([&] { return metric("caldera_history_jobs") == 3; }));
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(exists("done-" + std::to_string(i))) << i;
  for (int i = 3; i < 6; ++i) EXPECT_TRUE(exists("done-" + std::to_string(i))) << i;
  auto listed = json::parse(node_->cli({"get", "jobs", "-o", "json"}).out);
  EXPECT_EQ(listed["items"].size(), 4u);  // three settled, one live
  EXPECT_EQ(node_->cli({"logs", "done-5-main-0"}).out, "done-5\n");
  EXPECT_NE(node_->cli({"logs", "done-0-main-0"}).exit_code, 0);
  // Their pods' directories (logs and all) went with them: the live job's and three remain.
  EXPECT_TRUE(eventually([&] { return pod_dirs() == 4; })) << pod_dirs();
  EXPECT_EQ(node_->cli({"get", "job", "live", "-o", "json"}).exit_code, 0);
  EXPECT_NE(node_->log().find("history: deleted 3 settled jobs"), std::string::npos)
      << node_->log();

  // The count survives a restart (it is stored), and the next finished job pushes one more out.
  node_->kill9();
  node_->start();
  EXPECT_TRUE(eventually([&] { return metric("caldera_history_jobs") == 3; }));
  run_to_completion("done-6");
  EXPECT_TRUE(eventually([&] { return !exists("done-3"); })) << node_->log();
  EXPECT_TRUE(exists("done-4"));
  EXPECT_TRUE(exists("done-6"));
  EXPECT_TRUE(eventually([&] { return metric("caldera_history_jobs") == 3; }));
}

TEST_F(History, MaxAgeDeletesJobsThatFinishedLongerAgoAndAResumedJobIsLiveAgain) {
  start("{maxFinishedJobs: 0, maxAge: 3s}");
  // An aborted job settles; resumed, it is live again, out of the history.
  ASSERT_EQ(node_->cli({"submit", "-f", "-"}, job_yaml("paused", "sleep 600")).exit_code, 0);
  ASSERT_EQ(node_->cli({"wait", "job", "paused", "--for=phase=Running", "--timeout=30s"}).exit_code,
            0);
  ASSERT_EQ(node_->cli({"abort", "job", "paused"}).exit_code, 0);
  ASSERT_EQ(node_->cli({"wait", "job", "paused", "--for=phase=Aborted", "--timeout=30s"}).exit_code,
            0);
  ASSERT_TRUE(eventually([&] { return metric("caldera_history_jobs") == 1; })) << node_->log();
  ASSERT_EQ(node_->cli({"resume", "job", "paused"}).exit_code, 0);
  ASSERT_TRUE(eventually([&] { return metric("caldera_history_jobs") == 0; })) << node_->log();

  // It finishes after it is submitted, and goes 3 s after it finished, not before.
  const auto submitted = std::chrono::steady_clock::now();
  run_to_completion("old");
  ASSERT_TRUE(eventually([&] { return !exists("old"); })) << node_->log();
  EXPECT_GE(std::chrono::steady_clock::now() - submitted, 3s);
  EXPECT_EQ(metric("caldera_history_deleted_total{reason=\"age\"}"), 1);
  EXPECT_EQ(metric("caldera_history_deleted_total{reason=\"count\"}"), 0);
  // The resumed job finished its Aborted phase longer ago than maxAge, and stays: it is live.
  EXPECT_TRUE(exists("paused"));
}

// The embedded node (no config) takes its retention from flags; a config's node is told to use
// cluster.history instead.
TEST(HistoryFlags, TheEmbeddedNodeKeepsWhatItsFlagsSay) {
  TempDir dir;
  Calderad node(dir.path() + "/node",
                {"--history-max-finished-jobs", "1", "--history-max-age", "0"});
  node.start();
  for (const std::string name : {"first", "second"}) {
    ASSERT_EQ(node.cli({"submit", "-f", "-"}, job_yaml(name, "true")).exit_code, 0);
    ASSERT_EQ(node.cli({"wait", "job", name, "--for=phase=Completed", "--timeout=30s"}).exit_code,
              0);
  }
  EXPECT_TRUE(eventually([&] {
    return node.cli({"get", "job", "first"}).exit_code != 0;
  })) << node.log();
  EXPECT_EQ(node.cli({"get", "job", "second"}).exit_code, 0);

  auto bad = run({CALDERAD_PATH, "--data-dir", dir.path() + "/bad", "--history-max-age", "soon"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--history-max-age: 'soon' is not a duration"), std::string::npos)
      << bad.err;
  auto config = write_file(dir.path(), "c.yaml", "nodes: [{name: n}]\n");
  auto refused = run({CALDERAD_PATH, "--config", config, "--history-max-finished-jobs", "5"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("set cluster.history"), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace caldera::testing
