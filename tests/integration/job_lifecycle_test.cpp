// A job end to end on one real node: submit, run real processes, finish, inspect, delete.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "node_test.hpp"

namespace caldera::testing {
namespace {

using json = nlohmann::json;

using JobLifecycle = NodeTest;

TEST_F(JobLifecycle, HelloCompletesWithEveryReplicaSucceeded) {
  auto submit = node.cli({"submit", "-f", source_path("examples/hello.yaml")});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  EXPECT_NE(submit.out.find("job.batch.volcano.sh/hello created"), std::string::npos);

  auto wait = node.cli({"wait", "job", "hello", "--for=phase=Completed", "--timeout=60s"});
  ASSERT_EQ(wait.exit_code, 0) << wait.err << node.log();

  auto job = get_json({"get", "job", "hello"});
  EXPECT_EQ(job["status"]["state"]["phase"], "Completed");
  EXPECT_EQ(job["status"]["succeeded"], 3);
  EXPECT_EQ(job["status"]["failed"], 0);
  EXPECT_EQ(job["status"]["minAvailable"], 3);
  // Pending -> Running -> Completed, each with a time.
  std::vector<std::string> phases;
  for (const auto& c : job["status"]["conditions"]) {
    phases.push_back(c["status"]);
    EXPECT_FALSE(c["lastTransitionTime"].get<std::string>().empty());
  }
  EXPECT_EQ(phases, (std::vector<std::string>{"Pending", "Running", "Completed"}));

  auto logs = node.cli({"logs", "hello-driver-0"});
  ASSERT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_EQ(logs.out, "hello from the driver (hello-driver-0)\n");
  auto worker = node.cli({"logs", "hello-worker-1"});
  EXPECT_EQ(worker.out, "worker 1 of hello\n");

  auto pods = get_json({"get", "pods"});
  ASSERT_EQ(pods["items"].size(), 3u);
  for (const auto& p : pods["items"]) {
    EXPECT_EQ(p["status"]["phase"], "Succeeded");
    EXPECT_EQ(p["metadata"]["labels"]["volcano.sh/job-name"], "hello");
  }
  auto table = node.cli({"get", "jobs"});
  EXPECT_NE(table.out.find("hello"), std::string::npos);
  EXPECT_NE(table.out.find("Completed"), std::string::npos);
  auto describe = node.cli({"describe", "job", "hello"});
  ASSERT_EQ(describe.exit_code, 0) << describe.err;
  EXPECT_NE(describe.out.find("hello-worker-1"), std::string::npos);
}

TEST_F(JobLifecycle, TaskExitingWithThreeEndsFailedAndShowsTheExitCode) {
  ASSERT_EQ(node.cli({"submit", "-f", source_path("examples/failing.yaml")}).exit_code, 0);
  auto wrong = node.cli({"wait", "job", "failing", "--for=phase=Completed", "--timeout=60s"});
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_NE(wrong.err.find("reached phase Failed"), std::string::npos) << wrong.err;

  auto job = get_json({"get", "job", "failing"});
  EXPECT_EQ(job["status"]["state"]["phase"], "Failed");
  EXPECT_EQ(job["status"]["failed"], 1);

  auto pods = get_json({"get", "pods"});
  ASSERT_EQ(pods["items"].size(), 1u);
  const auto& pod = pods["items"][0];
  EXPECT_EQ(pod["status"]["phase"], "Failed");
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 3);
  auto logs = node.cli({"logs", "failing-main-0"});
  EXPECT_EQ(logs.out, "about to fail\n");
}

TEST_F(JobLifecycle, SimulatedPodsFollowTheSamePath) {
  ASSERT_EQ(node.cli({"submit", "-f", source_path("examples/simulated.yaml")}).exit_code, 0);
  auto wait = node.cli({"wait", "job", "simulated", "--for=phase=Completed", "--timeout=30s"});
  ASSERT_EQ(wait.exit_code, 0) << wait.err;
  EXPECT_EQ(get_json({"get", "job", "simulated"})["status"]["succeeded"], 4);
}

TEST_F(JobLifecycle, WaitTimesOutWithAMessage) {
  auto yaml = R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: slow}
spec:
  tasks:
    - name: main
      replicas: 1
      template: {spec: {containers: [{name: main, command: [sleep, "30"]}]}}
)";
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, yaml).exit_code, 0);
  auto wait = node.cli({"wait", "job", "slow", "--for=phase=Completed", "--timeout=1s"});
  EXPECT_NE(wait.exit_code, 0);
  EXPECT_NE(wait.err.find("timed out"), std::string::npos) << wait.err;
}

TEST_F(JobLifecycle, GangWaitsUntilMinAvailablePodsFitTogether) {
  // The node has 2 cores' worth of cpu at most on CI; ask for more than fits for 3 pods at once.
  auto nodes = get_json({"get", "nodes"});
  auto cpu = nodes["items"][0]["status"]["capacity"]["cpu"].get<std::string>();
  auto yaml = std::string(R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: gang}
spec:
  minAvailable: 2
  tasks:
    - name: main
      replicas: 2
      template:
        spec:
          containers:
            - name: main
              command: [sleep, "30"]
              resources: {requests: {cpu: ")") +
              cpu + R"("}}
)";
  auto submit = node.cli({"submit", "-f", "-"}, yaml);
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  // Each pod alone fits the node, two together do not: neither starts.
  auto job = get_json({"get", "job", "gang"});
  EXPECT_EQ(job["status"]["state"]["phase"], "Pending");
  EXPECT_EQ(job["status"]["running"], 0);
  EXPECT_EQ(job["status"]["pending"], 2);
  auto pods = get_json({"get", "pods"});  // named: a loop over a temporary's member dangles
  ASSERT_EQ(pods["items"].size(), 2u);
  for (const auto& p : pods["items"]) EXPECT_FALSE(p["spec"].contains("nodeName")) << p.dump();
}

TEST_F(JobLifecycle, DeletingARunningJobFreesItsResourcesOnceItsPodsEnd) {
  auto cpu = get_json({"get", "nodes"})["items"][0]["status"]["capacity"]["cpu"].get<std::string>();
  auto whole_node = [&](const std::string& name) {
    return R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: )" +
           name + R"(}
spec:
  tasks:
    - name: main
      replicas: 1
      template:
        spec:
          containers:
            - {name: main, command: [sleep, "60"], resources: {requests: {cpu: ")" +
           cpu + R"("}}}
)";
  };
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, whole_node("first")).exit_code, 0);
  ASSERT_EQ(node.cli({"wait", "job", "first", "--for=phase=Running", "--timeout=30s"}).exit_code,
            0);
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, whole_node("second")).exit_code, 0);
  EXPECT_EQ(get_json({"get", "job", "second"})["status"]["state"]["phase"], "Pending");
  ASSERT_EQ(node.cli({"delete", "job", "first"}).exit_code, 0);
  auto wait = node.cli({"wait", "job", "second", "--for=phase=Running", "--timeout=30s"});
  EXPECT_EQ(wait.exit_code, 0) << wait.err << node.log();
}

TEST_F(JobLifecycle, DeleteRemovesTheJobAndItsPods) {
  ASSERT_EQ(node.cli({"submit", "-f", source_path("examples/failing.yaml")}).exit_code, 0);
  ASSERT_EQ(node.cli({"wait", "job", "failing", "--for=phase=Failed", "--timeout=30s"}).exit_code,
            0);
  auto del = node.cli({"delete", "job", "failing"});
  ASSERT_EQ(del.exit_code, 0) << del.err;
  auto get = node.cli({"get", "job", "failing"});
  EXPECT_NE(get.exit_code, 0);
  EXPECT_NE(get.err.find("not found"), std::string::npos);
  EXPECT_EQ(get_json({"get", "pods"})["items"].size(), 0u);
  // The name is free again.
  EXPECT_EQ(node.cli({"submit", "-f", source_path("examples/failing.yaml")}).exit_code, 0);
}

}  // namespace
}  // namespace caldera::testing
