// Slow-start pod creation with a real node: a node that cannot create pods gets one launch per
// round, rounds wait out a backoff, and once the node is repaired the next round creates the rest.
#include <chrono>
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "node_test.hpp"

namespace caldera::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class SlowStartTest : public NodeTest {
 protected:
  const std::string pods = data + "/pods";

  // Pod directories live under <data>/pods: a plain file there makes every creation fail.
  void break_node() {
    fs::remove_all(pods);
    write_file(data, "pods", "not a directory\n");
  }
  void repair_node() {
    fs::remove(pods);
    fs::create_directories(pods);
  }
  size_t failures() const { return count(node.log(), "failed to create"); }

  // Job "gang": one task of `replicas` sleepers, all of them needed (minAvailable = replicas).
  void submit_gang(int replicas) {
    const std::string yaml = R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: gang}
spec:
  tasks:
    - name: w
      replicas: )" + std::to_string(replicas) +
                             R"(
      template: {spec: {containers: [{name: main, command: [sleep, "60"]}]}}
)";
    ASSERT_EQ(node.cli({"submit", "-f", "-"}, yaml).exit_code, 0);
  }
};

TEST_F(SlowStartTest, AFailedCreationStopsTheRoundAndALaterRoundCreatesTheRest) {
  break_node();
  submit_gang(6);

  // Without slow start all six launches would fail together. With it, the round stops at its
  // first pod, and the next round comes a backoff (1 s) later, again with a single pod.
  ASSERT_TRUE(eventually([&] { return failures() >= 1; })) << node.log();
  const auto first = Clock::now();
  ASSERT_TRUE(eventually([&] { return failures() >= 2; })) << node.log();
  const auto second = Clock::now();
  EXPECT_EQ(failures(), 2u) << node.log();
  EXPECT_GE(second - first, std::chrono::milliseconds(800));

  auto describe = node.cli({"describe", "job", "gang"});
  EXPECT_EQ(count(describe.out, "FailedCreate"), 2u) << describe.out;
  EXPECT_NE(describe.out.find("5 pod(s) wait for the next round"), std::string::npos)
      << describe.out;
  const auto listed = get_json({"get", "pods"});
  ASSERT_EQ(listed["items"].size(), 6u) << "the pods that failed to create were made again";
  for (const auto& p : listed["items"]) EXPECT_EQ(p["status"]["phase"], "Pending") << p.dump();

  // Repaired: the next round (2 s after the second stop) creates all six, 1 + 2 + 3.
  repair_node();
  auto wait = node.cli({"wait", "job", "gang", "--for=phase=Running", "--timeout=30s"});
  ASSERT_EQ(wait.exit_code, 0) << wait.err << node.log();
  ASSERT_TRUE(eventually([&] {
    auto d = node.cli({"describe", "job", "gang"}).out;
    return d.find("created 6 pods in 3 batches (slow start)") != std::string::npos;
  })) << node.cli({"describe", "job", "gang"}).out;
  const auto running = get_json({"get", "pods"});
  ASSERT_EQ(running["items"].size(), 6u);
  for (const auto& p : running["items"]) EXPECT_EQ(p["status"]["phase"], "Running") << p.dump();
  EXPECT_EQ(failures(), 2u) << "a repaired node gets no failed creation";
  size_t dirs = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(pods)) ++dirs;
  EXPECT_EQ(dirs, 6u);
}

TEST_F(SlowStartTest, AStoppedRoundKeepsItsBackoffAcrossAKillOfTheNode) {
  break_node();
  submit_gang(4);
  ASSERT_TRUE(eventually([&] { return failures() >= 1; })) << node.log();
  const auto first = Clock::now();

  // Killed in the middle of the 1 s backoff and restarted still broken: the stop is in the job's
  // record, so the next launch waits for its time instead of going out as the job recovers.
  node.kill9();
  node.start();
  ASSERT_TRUE(eventually([&] { return failures() >= 2; })) << node.log();
  EXPECT_GE(Clock::now() - first, std::chrono::milliseconds(900));
  EXPECT_EQ(failures(), 2u) << node.log();

  // Repaired: the next round (2 s after the second stop) creates all four.
  repair_node();
  auto wait = node.cli({"wait", "job", "gang", "--for=phase=Running", "--timeout=30s"});
  ASSERT_EQ(wait.exit_code, 0) << wait.err << node.log();
  const auto listed = get_json({"get", "pods"});
  ASSERT_EQ(listed["items"].size(), 4u);
  for (const auto& p : listed["items"]) EXPECT_EQ(p["status"]["phase"], "Running") << p.dump();
  auto describe = node.cli({"describe", "job", "gang"}).out;
  EXPECT_EQ(count(describe, "FailedCreate"), 2u) << describe;
}

}  // namespace
}  // namespace caldera::testing
