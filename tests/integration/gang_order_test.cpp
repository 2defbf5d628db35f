// Which pods of a gang start when not all fit, on a real node: a task's PriorityClass goes first
// (Volcano's task priority), and a partition starts whole or not at all (partitionPolicy).
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "node_test.hpp"

namespace caldera::testing {
namespace {

using json = nlohmann::json;

class GangOrder : public NodeTest {
 protected:
  // A tenth of the node's cpu, in millis: pods asking a few of these fill it on any machine.
  std::string tenths(int n) {
    auto nodes = get_json({"get", "nodes"});
    const std::string cpu = nodes["items"][0]["status"]["allocatable"].value("cpu", "1");
    const long millis = cpu.ends_with("m") ? std::stol(cpu) : std::lround(std::stod(cpu) * 1000);
    return std::to_string(millis * n / 10) + "m";
  }

  // The job's pods that hold a node, by name, with their labels.
  std::map<std::string, json> placed(const std::string& job) {
    std::map<std::string, json> out;
    auto pods = get_json({"get", "pods", "--job", job});
    for (const auto& p : pods["items"])
      if (!p["spec"].value("nodeName", "").empty())
        out[p["metadata"]["name"]] = p["metadata"]["labels"];
    return out;
  }

  bool running(const std::string& job, size_t n) {
    auto pods = get_json({"get", "pods", "--job", job});
    size_t count = 0;
    for (const auto& p : pods["items"]) count += p["status"]["phase"] == "Running";
    return count == n;
  }
};

TEST_F(GangOrder, APartitionStartsWholeAndTheOddPodThatWouldFitWaits) {
  // Three pods fit the node; partitions are two pods each: one whole partition runs.
  auto r = node.cli({"apply", "-f", "-"}, R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: parts}
spec:
  minAvailable: 2
  tasks:
    - name: w
      replicas: 6
      partitionPolicy: {partitionSize: 2, minPartitions: 1}
      template: {spec: {containers: [{name: main, command: [sleep, "600"], resources: {requests: {cpu: )" +
                                              tenths(3) + R"(}}}]}}
)");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(eventually([&] { return running("parts", 2); }))
      << node.cli({"get", "pods", "-o", "wide"}).out;
  auto pods = placed("parts");
  ASSERT_EQ(pods.size(), 2u) << "never a third pod, alone in its partition";
  std::set<std::string> partitions;
  for (const auto& [name, labels] : pods)
    partitions.insert(labels.value("volcano.sh/task-partition-id", "?"));
  EXPECT_EQ(partitions.size(), 1u) << "both pods of one partition";
  auto job = get_json({"get", "job", "parts"});
  EXPECT_EQ(job["spec"]["tasks"][0].value("minAvailable", -1), 2)
      << "a task's minimum is its minPartitions, whole (Volcano's webhook)";
}

TEST_F(GangOrder, AHigherTaskClassStartsFirstWhenNotEveryPodFits) {
  auto r = node.cli({"apply", "-f", "-"}, R"(apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: task-high}
value: 1000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: task-low}
value: 10
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: ranked}
spec:
  minAvailable: 2
  tasks:
    - name: alpha
      replicas: 2
      template: {spec: {priorityClassName: task-low, containers: [{name: main, command: [sleep, "600"], resources: {requests: {cpu: )" +
                                              tenths(4) + R"(}}}]}}
    - name: omega
      replicas: 2
      template: {spec: {priorityClassName: task-high, containers: [{name: main, command: [sleep, "600"], resources: {requests: {cpu: )" +
                                              tenths(4) + R"(}}}]}}
)");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("priorityClassName"), std::string::npos) << "read, not ignored: " << r.err;
  ASSERT_TRUE(eventually([&] { return running("ranked", 2); }))
      << node.cli({"get", "pods", "-o", "wide"}).out;
  auto pods = placed("ranked");
  EXPECT_EQ(pods.size(), 2u);
  // omega's pods, though alpha's come first by name and in the file.
  for (const auto& [name, labels] : pods) EXPECT_TRUE(name.starts_with("ranked-omega-")) << name;
  // A class a task names is in use: it is not deleted under the job.
  auto del = node.cli({"delete", "priorityclass", "task-high"});
  EXPECT_NE(del.exit_code, 0);
  EXPECT_NE(del.err.find("job default/ranked"), std::string::npos) << del.err;
  // A class that does not exist is refused at the task's field.
  auto bad = node.cli({"apply", "-f", "-"}, R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: nosuch}
spec:
  tasks:
    - name: t
      replicas: 1
      template: {spec: {priorityClassName: nosuch, containers: [{name: main, command: ["true"]}]}}
)");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("spec.tasks[0].template.spec.priorityClassName"), std::string::npos)
      << bad.err;
}

}  // namespace
}  // namespace caldera::testing
