// Plugins and partitions with real processes: what each pod is told, and which pods a
// RestartPartition replaces.
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "node_test.hpp"

namespace caldera::testing {
namespace {

using json = nlohmann::json;

class JobPlugins : public NodeTest {
 protected:
  std::string logs(const std::string& pod) {
    auto r = node.cli({"logs", pod});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }
};

TEST_F(JobPlugins, PytorchGivesEveryPodADistinctRankAndOneMaster) {
  const std::string yaml = R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: torch}
spec:
  plugins: {pytorch: ["--master=master", "--worker=worker", "--port=29511"], svc: []}
  tasks:
    - name: master
      replicas: 1
      template: {spec: {containers: [{name: main, command: [sh, -c, 'echo $RANK $MASTER_ADDR:$MASTER_PORT $WORLD_SIZE; cat volcano/worker.host']}]}}
    - name: worker
      replicas: 3
      template: {spec: {containers: [{name: main, command: [sh, -c, 'echo $RANK $MASTER_ADDR:$MASTER_PORT $WORLD_SIZE']}]}}
)";
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, yaml).exit_code, 0);
  auto wait = node.cli({"wait", "job", "torch", "--for=phase=Completed", "--timeout=60s"});
  ASSERT_EQ(wait.exit_code, 0) << wait.err << node.log();
  std::set<std::string> ranks, masters;
  for (auto pod : {"torch-master-0", "torch-worker-0", "torch-worker-1", "torch-worker-2"}) {
    std::istringstream out(logs(pod));
    std::string rank, master, world;
    out >> rank >> master >> world;
    ranks.insert(rank);
    masters.insert(master);
    EXPECT_EQ(world, "4") << pod;
  }
  EXPECT_EQ(ranks, (std::set<std::string>{"0", "1", "2", "3"}));
  ASSERT_EQ(masters.size(), 1u);
  auto pod = get_json({"get", "pods"})["items"][0];
  EXPECT_EQ(*masters.begin(), pod["status"]["hostIP"].get<std::string>() + ":29511");
  // svc: the worker hosts file sits in the pod's directory, where the pod starts.
  auto master_log = logs("torch-master-0");
  EXPECT_NE(master_log.find("127.0.0.1\n127.0.0.1\n127.0.0.1\n"), std::string::npos) << master_log;
}

TEST_F(JobPlugins, RestartPartitionReplacesOnlyThatPartitionsPods) {
  // Pod 2 (partition 1) fails once; the other partition keeps running untouched.
  const std::string marker = dir.path() + "/failed-once";
  const std::string yaml =
      R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: parts}
spec:
  minAvailable: 4
  tasks:
    - name: w
      replicas: 4
      partitionPolicy: {partitionSize: 2, minPartitions: 2}
      policies: [{event: PodFailed, action: RestartPartition}]
      template:
        spec:
          containers:
            - name: main
              command: [sh, -c, 'if [ "$VC_TASK_INDEX" = 2 ] && [ ! -f )" +
      marker + R"( ]; then touch )" + marker +
      R"(; sleep 0.5; exit 1; fi; echo partition $VC_TASK_PARTITION_ID; sleep 30']
)";
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, yaml).exit_code, 0);
  ASSERT_EQ(node.cli({"wait", "job", "parts", "--for=phase=Running", "--timeout=30s"}).exit_code,
            0);
  auto uids = [&] {
    std::map<std::string, std::string> out;
    auto pods = get_json({"get", "pods"});  // the loop must not range over a temporary's member
    for (const auto& p : pods["items"]) out[p["metadata"]["name"]] = p["metadata"]["uid"];
    return out;
  };
  auto before = uids();
  ASSERT_EQ(before.size(), 4u);
  // Running again after the restart of partition 1, with its pods replaced.
  ASSERT_TRUE(eventually([&] {
    auto job = get_json({"get", "job", "parts"});
    auto now = uids();
    return job["status"]["retryCount"] == 1 && job["status"]["state"]["phase"] == "Running" &&
           job["status"]["running"] == 4 && now.size() == 4 &&
           now["parts-w-2"] != before["parts-w-2"];
  })) << node.cli({"describe", "job", "parts"}).out;
  auto after = uids();
  EXPECT_EQ(after["parts-w-0"], before["parts-w-0"]);
  EXPECT_EQ(after["parts-w-1"], before["parts-w-1"]);
  EXPECT_NE(after["parts-w-3"], before["parts-w-3"]);
  auto job = get_json({"get", "job", "parts"});
  EXPECT_EQ(job["status"]["version"], 0) << "a partition restart keeps the job's version";
  // The partition is a label and a column, and the pod is told its own.
  auto pods = get_json({"get", "pods"});
  for (const auto& p : pods["items"]) {
    auto index = std::stoi(p["metadata"]["labels"]["volcano.sh/task-index"].get<std::string>());
    EXPECT_EQ(p["metadata"]["labels"]["volcano.sh/task-partition-id"], std::to_string(index / 2));
  }
  auto table = node.cli({"get", "pods"});
  EXPECT_NE(table.out.find("PARTITION"), std::string::npos) << table.out;
  ASSERT_TRUE(
      eventually([&] { return logs("parts-w-3").find("partition 1") != std::string::npos; }));
}

}  // namespace
}  // namespace caldera::testing
