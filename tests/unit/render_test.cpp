#include <gtest/gtest.h>

#include <sstream>

#include <yaml-cpp/yaml.h>

#include "client/render.hpp"

namespace caldera {
namespace {

constexpr int64_t kNow = 1700000600000;  // ten minutes after kCreated
constexpr int64_t kCreated = 1700000000000;

Job sample_job() {
  Job job;
  job.uid = "uid-1";
  job.created_ms = kCreated;
  job.spec.name = "train";
  job.spec.namespace_ = "ml";
  job.spec.labels = {{"team", "vision"}};
  job.spec.min_available = 3;
  job.spec.max_retry = 5;
  job.spec.queue = "gpu";
  job.spec.policies = {
      {{Event::PodFailed}, std::nullopt, Action::RestartJob, std::nullopt},
      {{}, 137, Action::AbortJob, 300000},
      {{Event::PodEvicted, Event::TaskFailed}, std::nullopt, Action::AbortJob, std::nullopt}};
  job.spec.plugins = {{"ssh", {}}, {"env", {"--x"}}};
  job.spec.ttl_seconds_after_finished = 60;

  TaskSpec worker;
  worker.name = "worker";
  worker.replicas = 3;
  worker.max_retry = 1;
  worker.depends_on = DependsOn{{"master"}, "any"};
  worker.partition_policy = PartitionPolicy{2, 1};
  worker.policies = {{{Event::TaskCompleted}, std::nullopt, Action::CompleteJob, std::nullopt}};
  Container c;
  c.name = "main";
  c.command = {"/bin/sh", "-c", "echo yes"};
  c.env = {{"A", "1"}};
  c.requests.values = {{"cpu", 500}, {"memory", 1073741824000LL}};
  c.limits.values = {{"cpu", 2000}};
  worker.template_.containers = {c};
  worker.template_.restart_policy = "Never";
  job.spec.tasks = {worker};

  job.status.state = {JobPhase::Running, "", "", kCreated + 1000};
  job.status.min_available = 3;
  job.status.pending = 1;
  job.status.running = 2;
  job.status.succeeded = 4;
  job.status.failed = 1;
  job.status.version = 2;
  job.status.retry_count = 1;
  job.status.task_status_count = {{"worker", {1, 2, 0, 0, 0}}};
  job.status.conditions = {{JobPhase::Pending, kCreated}, {JobPhase::Running, kCreated + 1000}};
  job.status.running_duration_ms = 12500;
  return job;
}

Pod sample_pod(const std::string& name, PodPhase phase) {
  Pod p;
  p.name = name;
  p.uid = name + "-uid";
  p.namespace_ = "ml";
  p.job_name = "train";
  p.task_name = "worker";
  p.index = 1;
  p.job_version = 2;
  p.node = "node-a";
  p.phase = phase;
  p.created_ms = kCreated;
  return p;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(Render, JobJsonUsesVolcanoNamesAndRoundTrips) {
  nlohmann::json j = job_to_json(sample_job());
  nlohmann::json back = nlohmann::json::parse(j.dump());
  EXPECT_EQ(back, j);
  EXPECT_EQ(back["apiVersion"], "batch.volcano.sh/v1alpha1");
  EXPECT_EQ(back["kind"], "Job");
  EXPECT_EQ(back["metadata"]["name"], "train");
  EXPECT_EQ(back["metadata"]["creationTimestamp"], "2023-11-14T22:13:20Z");
  EXPECT_EQ(back["status"]["state"]["phase"], "Running");
  EXPECT_FALSE(back["status"]["state"].contains("reason"));
  EXPECT_EQ(back["status"]["succeeded"], 4);
  EXPECT_EQ(back["status"]["running"], 2);
  EXPECT_EQ(back["status"]["retryCount"], 1);
  EXPECT_EQ(back["status"]["runningDuration"], "12.5s");
  EXPECT_EQ(back["status"]["taskStatusCount"]["worker"]["phase"],
            (nlohmann::json{{"Pending", 1}, {"Running", 2}}));
  EXPECT_EQ(back["status"]["conditions"][1]["status"], "Running");
  const auto& spec = back["spec"];
  EXPECT_EQ(spec["minAvailable"], 3);
  EXPECT_EQ(spec["maxRetry"], 5);
  EXPECT_FALSE(spec.contains("minSuccess"));
  EXPECT_FALSE(spec.contains("activeDeadlineSeconds"));
  EXPECT_EQ(spec["ttlSecondsAfterFinished"], 60);
  EXPECT_EQ(spec["policies"][0],
            (nlohmann::json{{"event", "PodFailed"}, {"action", "RestartJob"}}));
  EXPECT_EQ(spec["policies"][1],
            (nlohmann::json{{"exitCode", 137}, {"action", "AbortJob"}, {"timeout", "300s"}}));
  EXPECT_EQ(spec["policies"][2]["events"], (nlohmann::json{"PodEvicted", "TaskFailed"}));
  EXPECT_EQ(spec["plugins"]["env"], (nlohmann::json{"--x"}));
  EXPECT_EQ(spec["plugins"]["ssh"], nlohmann::json::array());
  const auto& task = spec["tasks"][0];
  EXPECT_EQ(task["dependsOn"], (nlohmann::json{{"name", {"master"}}, {"iteration", "any"}}));
  EXPECT_EQ(task["partitionPolicy"]["partitionSize"], 2);
  EXPECT_FALSE(task.contains("minAvailable"));
  const auto& container = task["template"]["spec"]["containers"][0];
  EXPECT_EQ(task["template"]["spec"]["restartPolicy"], "Never");
  EXPECT_EQ(container["resources"]["requests"]["cpu"], "500m");
  EXPECT_EQ(container["resources"]["requests"]["memory"], "1Gi");
  EXPECT_EQ(container["resources"]["limits"]["cpu"], "2");
  EXPECT_EQ(container["env"][0], (nlohmann::json{{"name", "A"}, {"value", "1"}}));
  EXPECT_FALSE(container.contains("image"));
}

// A pod group's phase as read off its job: Pending until the scheduler admits it, Inqueue while
// admitted and waiting, Running once minMember run or have succeeded, Unknown when some run and
// the rest do not fit, Completed once the job has finished.
TEST(PodGroupView, PhasesFollowTheJobsCountsAndTheSchedulersVerdict) {
  Job job;
  job.spec.name = "g";
  job.spec.namespace_ = "default";
  TaskSpec ps, worker;
  ps.name = "ps";
  ps.replicas = 1;
  worker.name = "worker";
  worker.replicas = 3;
  worker.template_.containers.resize(1);
  worker.template_.containers[0].requests = ResourceList{{{"cpu", 500}}};
  job.spec.tasks = {ps, worker};
  job.spec.min_available = 4;
  job.spec.priority_class_name = "high";
  job.status.min_available = 4;
  EXPECT_EQ(pod_group_of(job).phase, "Pending");  // new: no verdict yet
  // Its spec as Volcano's job controller would fill it: the first gang's least ask, each pod
  // with its pod slot.
  auto spec = pod_group_to_json(pod_group_of(job))["spec"];
  EXPECT_EQ(spec["minResources"], (nlohmann::json{{"cpu", "1500m"}, {"pods", "4"}}));
  EXPECT_EQ(spec["priorityClassName"], "high");
  EXPECT_EQ(pod_group_of(job).condition, "");
  EXPECT_EQ(pod_group_of(job).min_task_member,
            (std::map<std::string, int32_t>{{"ps", 1}, {"worker", 3}}));
  job.status.state.reason = "Unschedulable";
  job.status.state.message = "4/4 tasks in gang unschedulable: 2 nodes: insufficient cpu";
  auto pg = pod_group_of(job);
  EXPECT_EQ(pg.phase, "Pending");
  EXPECT_EQ(pg.condition, "Unschedulable");
  EXPECT_EQ(pg.message, job.status.state.message);
  job.status.pod_group_phase = "Pending";
  EXPECT_EQ(pod_group_of(job).phase, "Pending");
  job.status.pod_group_phase = "Inqueue";  // admitted, and does not fit
  EXPECT_EQ(pod_group_of(job).phase, "Inqueue");
  EXPECT_EQ(pod_group_of(job).condition, "Unschedulable");
  job.status.running = 2;
  EXPECT_EQ(pod_group_of(job).phase, "Unknown");
  job.status.state.reason = "Scheduled";  // placed: its pods start
  job.status.running = 0;
  EXPECT_EQ(pod_group_of(job).phase, "Inqueue");
  job.status.pod_group_phase = "";  // a record from before the controller kept the phase
  job.status.state.phase = JobPhase::Running;
  job.status.running = 2;
  EXPECT_EQ(pod_group_of(job).phase, "Inqueue");
  job.status.state.reason = "MinAvailableReached";
  job.status.running = 3;
  job.status.succeeded = 1;
  EXPECT_EQ(pod_group_of(job).phase, "Running");
  EXPECT_EQ(pod_group_of(job).condition, "Scheduled");
  job.status.state.phase = JobPhase::Completed;
  EXPECT_EQ(pod_group_of(job).phase, "Completed");
  EXPECT_EQ(pod_group_to_json(pod_group_of(job))["spec"]["minTaskMember"]["worker"], 3);
  // Task minimums above the job's minimum are not the gang's (Volcano skips them).
  job.status.min_available = 2;
  EXPECT_TRUE(pod_group_of(job).min_task_member.empty());
}

TEST(Render, PodJsonIsKubernetesShaped) {
  Pod p = sample_pod("train-worker-1", PodPhase::Failed);
  p.partition = 0;
  p.reason = "Error";
  p.started_ms = kCreated + 1000;
  p.containers = {
      {"main", ContainerState::Terminated, 3, 0, "Error", kCreated + 1000, kCreated + 2000},
      {"side", ContainerState::Running, 0, 0, "", kCreated + 1000, 0},
      {"late", ContainerState::Waiting, 0, 0, "", 0, 0}};
  nlohmann::json j = pod_to_json(p);
  EXPECT_EQ(j["kind"], "Pod");
  EXPECT_EQ(j["metadata"]["labels"]["volcano.sh/job-name"], "train");
  EXPECT_EQ(j["metadata"]["labels"]["volcano.sh/task-spec"], "worker");
  EXPECT_EQ(j["metadata"]["labels"]["volcano.sh/task-index"], "1");
  EXPECT_EQ(j["metadata"]["labels"]["volcano.sh/task-partition-id"], "0");
  EXPECT_EQ(j["metadata"]["annotations"]["volcano.sh/job-version"], "2");
  EXPECT_EQ(j["spec"]["nodeName"], "node-a");
  EXPECT_EQ(j["status"]["phase"], "Failed");
  EXPECT_FALSE(j["status"].contains("message"));
  const auto& cs = j["status"]["containerStatuses"];
  EXPECT_EQ(cs[0]["state"]["terminated"]["exitCode"], 3);
  EXPECT_EQ(cs[0]["state"]["terminated"]["finishedAt"], "2023-11-14T22:13:22Z");
  EXPECT_EQ(cs[1]["state"]["running"]["startedAt"], "2023-11-14T22:13:21Z");
  EXPECT_EQ(cs[2]["state"]["waiting"], nlohmann::json::object());
  EXPECT_FALSE(pod_to_json(sample_pod("x", PodPhase::Pending))["metadata"]["labels"].contains(
      "volcano.sh/task-partition-id"));
}

NodeInfo node(std::string name, std::string address, bool ready, ResourceList capacity,
              ResourceList free, int32_t pods, bool coordinator) {
  NodeInfo n;
  n.name = std::move(name);
  n.address = std::move(address);
  n.ready = ready;
  n.capacity = std::move(capacity);
  n.allocatable = std::move(free);
  n.pods = pods;
  n.coordinator = coordinator;
  return n;
}

TEST(Render, NodeJson) {
  NodeInfo n =
      node("node-a", "127.0.0.1:7071", true, {{{"cpu", 8000}}}, {{{"cpu", 7500}}}, 1, true);
  n.allocated.values = {{"cpu", 500}};
  n.incarnation = 42;
  n.last_heartbeat_ms = 1700000000000;
  n.labels = {{"zone", "a"}};
  nlohmann::json j = node_to_json(n);
  EXPECT_EQ(j["metadata"]["name"], "node-a");
  EXPECT_EQ(j["metadata"]["labels"]["zone"], "a");
  EXPECT_EQ(j["metadata"]["labels"]["node-role.kubernetes.io/coordinator"], "");
  EXPECT_EQ(j["status"]["capacity"]["cpu"], "8");
  EXPECT_EQ(j["status"]["allocatable"]["cpu"], "8");
  EXPECT_EQ(j["status"]["allocated"]["cpu"], "500m");
  EXPECT_EQ(j["status"]["incarnation"], "42");
  EXPECT_EQ(j["status"]["conditions"][0]["status"], "True");
  EXPECT_EQ(j["status"]["conditions"][0]["lastHeartbeatTime"], "2023-11-14T22:13:20Z");
  n.ready = false;
  n.reason = "no heartbeat for 2001ms";
  EXPECT_EQ(node_to_json(n)["status"]["conditions"][0]["message"], "no heartbeat for 2001ms");
}

TEST(Render, YamlOfNestedValuesParsesBack) {
  nlohmann::json j = {
      {"name", "plain"},
      {"tricky",
       {"yes",    "1",           ": x",         "",      "No",         "null",         "~",
        "1.5",    "0x1F",        "a: b",        "x #y",  "-dash",      "trailing ",    "'q'",
        "\"dq\"", "multi\nline", "tab\there",   "*star", "2023-11-14", "busybox:1.36", "ünïcode",
        "[x]",    "{y}",         "10.0.0.1:80", "true"}},
      {"nested",
       {{"list", {{{"a", 1}, {"b", {1, 2}}}, {1, 2}, nlohmann::json::array(), "s"}},
        {"empty", nlohmann::json::object()},
        {"deep", {{"x", {{"y", {{"z", false}}}}}}}}},
      {"numbers", {{"int", -3}, {"float", 2.5}, {"null", nullptr}}},
      {"1", "key needs quotes"},
      {"", "empty key"},
  };
  std::string yaml = to_yaml(j);
  YAML::Node node = YAML::Load(yaml);
  ASSERT_TRUE(node.IsMap()) << yaml;
  EXPECT_EQ(node["name"].as<std::string>(), "plain");
  const auto& tricky = j["tricky"];
  ASSERT_EQ(node["tricky"].size(), tricky.size()) << yaml;
  for (size_t i = 0; i < tricky.size(); ++i) {
    // yaml-cpp resolves plain scalars only on as<T>(); its tag says whether it was quoted.
    EXPECT_EQ(node["tricky"][i].as<std::string>(), tricky[i].get<std::string>()) << yaml;
    if (node["tricky"][i].Tag() == "?") {
      const std::string& s = tricky[i].get<std::string>();
      bool as_bool = false;
      EXPECT_FALSE(YAML::convert<bool>::decode(node["tricky"][i], as_bool)) << s;
    }
  }
  EXPECT_EQ(node["tricky"][0].Tag(), "!");  // "yes" quoted: YAML 1.1 would read a bool
  EXPECT_EQ(node["tricky"][1].Tag(), "!");  // "1" quoted: would read a number
  EXPECT_EQ(node["nested"]["list"][0]["b"][1].as<int>(), 2);
  EXPECT_EQ(node["nested"]["list"][1][0].as<int>(), 1);
  EXPECT_TRUE(node["nested"]["list"][2].IsSequence());
  EXPECT_EQ(node["nested"]["list"][2].size(), 0u);
  EXPECT_EQ(node["nested"]["list"][3].as<std::string>(), "s");
  EXPECT_TRUE(node["nested"]["empty"].IsMap());
  EXPECT_FALSE(node["nested"]["deep"]["x"]["y"]["z"].as<bool>());
  EXPECT_EQ(node["numbers"]["int"].as<int>(), -3);
  EXPECT_DOUBLE_EQ(node["numbers"]["float"].as<double>(), 2.5);
  EXPECT_TRUE(node["numbers"]["null"].IsNull());
  EXPECT_EQ(node["1"].as<std::string>(), "key needs quotes");
  EXPECT_EQ(node[""].as<std::string>(), "empty key");
}

TEST(Render, YamlLooksLikeKubectl) {
  nlohmann::json j = {{"spec",
                       {{"containers", {{{"name", "main"}, {"args", {"a", "b"}}}}},
                        {"replicas", 2},
                        {"cpu", "2"},
                        {"mem", "1Gi"}}}};
  EXPECT_EQ(to_yaml(j),
            "spec:\n"
            "  containers:\n"
            "  - args:\n"
            "    - a\n"
            "    - b\n"
            "    name: main\n"
            "  cpu: \"2\"\n"
            "  mem: 1Gi\n"
            "  replicas: 2\n");
  EXPECT_EQ(to_yaml(nlohmann::json::object()), "{}\n");
  EXPECT_EQ(to_yaml("yes"), "\"yes\"\n");
  EXPECT_EQ(to_yaml(nlohmann::json{{1, 2}, {3}}), "- - 1\n  - 2\n- - 3\n");
}

TEST(Render, JobYamlParsesBackToTheSameFields) {
  Job job = sample_job();
  YAML::Node node = YAML::Load(to_yaml(job_to_json(job)));
  EXPECT_EQ(node["status"]["state"]["phase"].as<std::string>(), "Running");
  EXPECT_EQ(node["metadata"]["creationTimestamp"].as<std::string>(), "2023-11-14T22:13:20Z");
  EXPECT_EQ(
      node["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["command"][2].as<std::string>(),
      "echo yes");
  EXPECT_EQ(node["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["env"][0]["value"]
                .as<std::string>(),
            "1");
  EXPECT_EQ(node["spec"]["policies"][1]["timeout"].as<std::string>(), "300s");
}

// Every column starts at the same offset on every line, as kubectl's tabwriter aligns them.
void expect_aligned(const std::string& table, const std::vector<std::string>& header) {
  auto lines = lines_of(table);
  ASSERT_GE(lines.size(), 2u) << table;
  std::vector<size_t> starts;
  size_t from = 0;
  for (const auto& h : header) {
    starts.push_back(lines[0].find(h, from));
    from = starts.back() + h.size();
    ASSERT_NE(starts.back(), std::string::npos) << h << "\n" << table;
  }
  EXPECT_EQ(starts[0], 0u);
  for (const auto& line : lines) {
    EXPECT_EQ(line.find_last_not_of(' '), line.size() - 1) << "trailing spaces: " << line;
    for (size_t i = 1; i < starts.size(); ++i) {
      ASSERT_GT(line.size(), starts[i]) << line;
      EXPECT_NE(line[starts[i]], ' ') << table;
      EXPECT_EQ(line.substr(starts[i] - 3, 3), "   ") << table;
    }
  }
}

TEST(Render, JobsTable) {
  Job a = sample_job();
  Job b = sample_job();
  b.spec.name = "a-much-longer-job-name";
  b.spec.namespace_ = "default";
  b.status.state.phase = JobPhase::Completed;
  b.created_ms = kNow - 3 * 3600 * 1000;
  std::string t = jobs_table({a, b}, false, kNow);
  EXPECT_EQ(t,
            "NAME                     STATUS      MINAVAILABLE   RUNNINGS   AGE\n"
            "train                    Running     3              2          10m\n"
            "a-much-longer-job-name   Completed   3              2          3h\n");
  std::vector<std::string> wide{"NAMESPACE", "NAME",       "STATUS",  "MINAVAILABLE",
                                "RUNNINGS",  "AGE",        "PENDING", "SUCCEEDED",
                                "FAILED",    "RETRYCOUNT", "VERSION"};
  std::string w = jobs_table({a, b}, true, kNow);
  expect_aligned(w, wide);
  EXPECT_EQ(lines_of(w)[1].substr(0, 2), "ml");
  EXPECT_EQ(jobs_table({}, false, kNow), "No resources found.");
}

TEST(Render, PodsTable) {
  Pod running = sample_pod("train-worker-0", PodPhase::Running);
  running.containers = {{"main", ContainerState::Running, 0, 0, "", kCreated, 0},
                        {"side", ContainerState::Terminated, 0, 0, "Completed", kCreated, kNow}};
  Pod done = sample_pod("train-worker-1", PodPhase::Succeeded);
  done.containers = {{"main", ContainerState::Terminated, 0, 0, "Completed", kCreated, kNow}};
  Pod failed = sample_pod("train-worker-2", PodPhase::Failed);
  failed.node = "";
  failed.containers = {{"main", ContainerState::Terminated, 3, 0, "", kCreated, kNow},
                       {"side", ContainerState::Terminated, 0, 9, "", kCreated, kNow}};
  Pod evicted = sample_pod("train-worker-3", PodPhase::Failed);
  evicted.reason = "Evicted";
  evicted.created_ms = kNow - 45 * 1000;
  std::string t = pods_table({running, done, failed, evicted}, false, kNow);
  EXPECT_EQ(t,
            "NAME             READY   STATUS      RESTARTS   AGE\n"
            "train-worker-0   1/2     Running     0          10m\n"
            "train-worker-1   0/1     Completed   0          10m\n"
            "train-worker-2   0/2     Error       0          10m\n"
            "train-worker-3   0/0     Evicted     0          45s\n");
  std::string w = pods_table({running, done, failed, evicted}, true, kNow);
  expect_aligned(w, {"NAME", "READY", "STATUS", "RESTARTS", "AGE", "NODE", "EXIT"});
  auto lines = lines_of(w);
  EXPECT_NE(lines[1].find("node-a   -,0"), std::string::npos) << w;
  EXPECT_NE(lines[3].find("<none>   3,sig9"), std::string::npos) << w;
  EXPECT_NE(lines[4].find("node-a   <none>"), std::string::npos) << w;
  EXPECT_EQ(pods_table({}, true, kNow), "No resources found.");
}

TEST(Render, NodesTable) {
  NodeInfo a = node("node-a", "127.0.0.1:7071", true,
                    {{{"cpu", 8000}, {"memory", 17179869184000LL}, {"pods", 110000}}},
                    {{{"cpu", 7500}, {"memory", 16106127360000LL}, {"pods", 109000}}}, 1, true);
  a.allocated.values = {{"cpu", 500}, {"memory", 1073741824000LL}, {"pods", 1000}};
  a.joined_ms = kNow - 3600 * 1000;
  a.last_heartbeat_ms = kNow - 300;
  NodeInfo b =
      node("node-b", "127.0.0.1:7072", false, {{{"cpu", 4000}}}, {{{"cpu", 4000}}}, 0, false);
  b.joined_ms = kNow - 90 * 1000;
  b.last_heartbeat_ms = kNow - 5000;
  b.reason = "no heartbeat for 2001ms";
  b.labels = {{"zone", "b"}, {"disk", "ssd"}};
  b.incarnation = 7;
  b.presented.values = {{"cpu", 16000}};  // what it claims; `capacity` is the config's
  EXPECT_EQ(nodes_table({a, b}, false, kNow),
            "NAME     STATUS     ROLES         AGE   CPU(ALLOCATED/ALLOCATABLE)   "
            "MEMORY(ALLOCATED/ALLOCATABLE)   PODS    HEARTBEAT\n"
            "node-a   Ready      coordinator   60m   500m/8                       1Gi/16Gi        "
            "                1/110   0s ago\n"
            "node-b   NotReady   <none>        90s   0/4                          0/0             "
            "                0       5s ago\n");
  std::string w = nodes_table({a, b}, true, kNow);
  expect_aligned(w, {"NAME", "STATUS", "ROLES", "AGE", "CPU(ALLOCATED/ALLOCATABLE)",
                     "MEMORY(ALLOCATED/ALLOCATABLE)", "PODS", "HEARTBEAT", "ADDRESS", "INCARNATION",
                     "LABELS", "PRESENTED", "REASON"});
  EXPECT_NE(w.find("7             disk=ssd,zone=b   cpu=16      no heartbeat for 2001ms"),
            std::string::npos)
      << w;
  EXPECT_NE(w.find("<none>            <none>      <none>"), std::string::npos) << w;
  EXPECT_EQ(nodes_table({}, false, kNow), "No resources found.");
}

TEST(Render, DescribeJob) {
  Job job = sample_job();
  job.status.state.reason = "PodFailed";
  Pod p = sample_pod("train-worker-0", PodPhase::Failed);
  p.containers = {{"main", ContainerState::Terminated, 2, 0, "Error", kCreated, kNow}};
  std::string d = describe_job(job, {p}, kNow);
  for (const char* expected :
       {"Name:             train\n", "Namespace:        ml\n", "UID:              uid-1\n",
        "Created:          2023-11-14T22:13:20Z (10m ago)\n", "Queue:            gpu\n",
        "Min Available:    3\n", "Max Retry:        5\n", "Phase:            Running\n",
        "Reason:           PodFailed\n", "Retry Count:      1\n", "Version:          2\n",
        "Running Duration: 12.5s\n",
        "Counts:           Pending: 1  Running: 2  Succeeded: 4  Failed: 1  Terminating: 0  "
        "Unknown: 0\n",
        "Task Status:\n  worker:   Pending: 1  Running: 2\n",
        "Conditions:\n  PHASE     TIME\n  Pending   2023-11-14T22:13:20Z\n"
        "  Running   2023-11-14T22:13:21Z\n",
        "Pod Group:\n  Phase:           Running\n  Min Member:      3\n"
        "  Min Task Member: worker=3\n  Queue:           gpu\n  Priority Class:  <none>\n"
        "  Min Resources:   <none>\n"  // its one task waits for another: not in the first gang
        "  Condition:       Scheduled: tasks in gang are ready to be scheduled\n",
        "Policies:\n  PodFailed -> RestartJob\n  exitCode=137 -> AbortJob (timeout 300s)\n"
        "  PodEvicted,TaskFailed -> AbortJob\n  task worker: TaskCompleted -> CompleteJob\n",
        "Tasks:\n  NAME     REPLICAS   COMMAND\n  worker   3          /bin/sh -c echo yes\n",
        "Pods:\n  NAME             STATUS   NODE     EXIT   AGE\n"
        "  train-worker-0   Error    node-a   2      10m\n"})
    EXPECT_NE(d.find(expected), std::string::npos) << "missing:\n" << expected << "\nin:\n" << d;
  EXPECT_EQ(d.find("Message:"), std::string::npos);
  EXPECT_NE(describe_job(Job{}, {}, kNow).find("Pods:\n  <none>\n"), std::string::npos);
}

TEST(Render, FormatAgeLikeKubectl) {
  EXPECT_EQ(format_age(0), "0s");
  EXPECT_EQ(format_age(-500), "0s");
  EXPECT_EQ(format_age(-5000), "<invalid>");
  EXPECT_EQ(format_age(5999), "5s");
  EXPECT_EQ(format_age(119 * 1000), "119s");
  EXPECT_EQ(format_age(120 * 1000), "2m");
  EXPECT_EQ(format_age(192 * 1000), "3m12s");
  EXPECT_EQ(format_age(15 * 60 * 1000), "15m");
  EXPECT_EQ(format_age(179 * 60 * 1000), "179m");
  EXPECT_EQ(format_age(3 * 3600 * 1000), "3h");
  EXPECT_EQ(format_age((2 * 3600 + 30 * 60) * 1000 + 3 * 3600 * 1000), "5h30m");
  EXPECT_EQ(format_age(20LL * 3600 * 1000), "20h");
  EXPECT_EQ(format_age((4 * 24 + 3) * 3600LL * 1000), "4d3h");
  EXPECT_EQ(format_age(30 * 24 * 3600LL * 1000), "30d");
  EXPECT_EQ(format_age((3 * 365 + 100) * 24 * 3600LL * 1000), "3y100d");
  EXPECT_EQ(format_age(10 * 365 * 24 * 3600LL * 1000), "10y");
}

TEST(Render, DurationsAndTimestamps) {
  EXPECT_EQ(format_duration(300000), "300s");
  EXPECT_EQ(format_duration(12500), "12.5s");
  EXPECT_EQ(format_duration(1), "0.001s");
  EXPECT_EQ(format_duration(0), "0s");
  EXPECT_EQ(format_timestamp(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(format_timestamp(kCreated + 999), "2023-11-14T22:13:20Z");
}

TEST(Render, AllNamespacesTablesStartWithTheNamespace) {
  Job a = sample_job();
  Job b = sample_job();
  b.spec.name = "other";
  b.spec.namespace_ = "team-b";
  EXPECT_EQ(jobs_table({a, b}, false, kNow, true),
            "NAMESPACE   NAME    STATUS    MINAVAILABLE   RUNNINGS   AGE\n"
            "ml          train   Running   3              2          10m\n"
            "team-b      other   Running   3              2          10m\n");
  // -o wide already has it: once.
  expect_aligned(jobs_table({a}, true, kNow, true),
                 {"NAMESPACE", "NAME", "STATUS", "MINAVAILABLE", "RUNNINGS", "AGE", "PENDING",
                  "SUCCEEDED", "FAILED", "RETRYCOUNT", "VERSION"});
  Pod p = sample_pod("train-worker-0", PodPhase::Pending);
  Pod q = sample_pod("other-main-0", PodPhase::Pending);
  q.namespace_ = "team-b";
  EXPECT_EQ(pods_table({p, q}, false, kNow, true),
            "NAMESPACE   NAME             READY   STATUS    RESTARTS   AGE\n"
            "ml          train-worker-0   0/0     Pending   0          10m\n"
            "team-b      other-main-0     0/0     Pending   0          10m\n");
  expect_aligned(pods_table({p}, true, kNow, true),
                 {"NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "EXIT"});
}

TEST(Render, DescribePod) {
  Pod p = sample_pod("train-worker-0", PodPhase::Failed);
  p.host_ip = "10.0.0.7";
  p.started_ms = kCreated;
  p.containers = {{"main", ContainerState::Terminated, 2, 0, "Error", kCreated, kNow}};
  std::string d = describe_pod(p, kNow);
  for (const char* expected :
       {"Name:          train-worker-0\n", "Namespace:     ml\n",
        "Node:          node-a/10.0.0.7\n", "Start Time:    2023-11-14T22:13:20Z (10m ago)\n",
        "Labels:        volcano.sh/job-name=train\n"
        "               volcano.sh/task-spec=worker\n",
        "Status:        Error\n", "IP:            10.0.0.7\n", "Controlled By: Job/train\n",
        "Containers:\n  main:\n    State:         Terminated\n      Reason:      Error\n"
        "      Exit Code:   2\n"})
    EXPECT_NE(d.find(expected), std::string::npos) << "missing:\n" << expected << "\nin:\n" << d;
  EXPECT_NE(describe_pod(Pod{}, kNow).find("Containers:\n  <none>\n"), std::string::npos);
}

TEST(Render, LastLines) {
  EXPECT_EQ(last_lines("a\nb\nc\n", 2), "b\nc\n");
  EXPECT_EQ(last_lines("a\nb\nc", 2), "b\nc");
  EXPECT_EQ(last_lines("a\nb\nc\n", 3), "a\nb\nc\n");
  EXPECT_EQ(last_lines("a\nb\nc\n", 10), "a\nb\nc\n");
  EXPECT_EQ(last_lines("a\nb\n", 0), "");
  EXPECT_EQ(last_lines("", 5), "");
  EXPECT_EQ(last_lines("\n\n\n", 1), "\n");
}

// get queues: the share columns leave out pod slots and zeros, but a capability of zero shows.
TEST(Render, QueuesTableAndJson) {
  QueueView research{Queue{"u", 1000,
                           QueueSpec{"research",
                                     {},
                                     {},
                                     3,
                                     ResourceList{{{"cpu", 4000}, {"memory", 0}}},
                                     true,
                                     kQueueClosed}},
                     QueueStatus{"research", ResourceList{{{"cpu", 1500}, {"pods", 3000}}},
                                 ResourceList{{{"cpu", 1500}, {"memory", 0}}}, 17, 2, 3}};
  QueueView def{Queue{"", 0, QueueSpec{"default"}}, QueueStatus{"default"}};
  EXPECT_EQ(queues_table({def, research}, false, 61000),
            "NAME       WEIGHT   STATE     CAPABILITY       ALLOCATED   DESERVED    PENDING   "
            "INQUEUE   RUNNING   AGE\n"
            "default    1        Open      <none>           <none>      <none>      0         "
            "0         0         <unknown>\n"
            "research   3        Closing   cpu=4,memory=0   cpu=1500m   cpu=1500m   17        "
            "2         3         60s\n");
  EXPECT_NE(queues_table({research}, true, 61000).find("RECLAIMABLE"), std::string::npos);
  auto j = queue_to_json(research);
  EXPECT_EQ(j["kind"], "Queue");
  EXPECT_EQ(j["spec"]["weight"], 3);
  EXPECT_EQ(j["spec"]["capability"]["cpu"], "4");
  EXPECT_EQ(j["status"]["allocated"]["cpu"], "1500m");
  EXPECT_EQ(j["status"]["pending"], 17);
  EXPECT_EQ(j["status"]["inqueue"], 2);
  EXPECT_EQ(j["status"]["running"], 3);
  EXPECT_EQ(j["status"]["state"], "Closing") << "Closed, with pod groups still in it";
  EXPECT_EQ(j["metadata"]["generation"], 1);
  EXPECT_EQ(queues_table({}, false, 0), "No resources found.");
}

TEST(Render, PriorityClassesTableLikeKubectl) {
  PriorityClass high;
  high.name = "high";
  high.value = 1000;
  high.created_ms = 1000;
  high.global_default = true;
  EXPECT_EQ(priority_classes_table({high}, false, 61000),
            "NAME   VALUE   GLOBAL-DEFAULT   AGE   PREEMPTIONPOLICY\n"
            "high   1000    true             60s   PreemptLowerPriority\n");
  auto j = priority_class_to_json(high);
  EXPECT_EQ(j["value"], 1000);
  EXPECT_EQ(j["globalDefault"], true);
}

}  // namespace
}  // namespace caldera
