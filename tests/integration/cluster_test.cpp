// A cluster of three real calderad processes from one config: gangs spread over the nodes,
// clients served by any node, a hung node seen NotReady and back, and a node without the
// cluster's token kept out.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/protocol/atoms.hpp"
#include "actors/protocol/membership_port.hpp"
#include "client/client.hpp"
#include "harness.hpp"

namespace caldera::testing {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr auto kHeartbeatTimeout = 2000ms;
// A whole file, "" when missing.
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Whether the process whose pid the file holds is alive.
bool alive(const std::string& pid_file) {
  std::ifstream in(pid_file);
  int pid = 0;
  if (!(in >> pid) || pid <= 0) return false;
  return ::kill(pid, 0) == 0;
}

constexpr const char* kLiveness = "  heartbeatInterval: 500ms\n  heartbeatTimeout: 2s\n";

struct NodeSpec {
  std::string name;
  int client_port = 0, cluster_port = 0, metrics_port = 0;
};

// `liveness`: the cluster's heartbeat and lease fields, as YAML lines.
std::string config_yaml(const std::vector<NodeSpec>& nodes, const std::string& dir,
                        const std::string& token, const std::string& liveness) {
  std::string y = "cluster:\n  name: test\n  coordinator: node-1\n" + liveness;
  if (!token.empty()) y += "  token: " + token + "\n";
  y += "nodes:\n";
  for (const auto& n : nodes)
    y += "  - name: " + n.name +
         "\n    host: 127.0.0.1\n    clientPort: " + std::to_string(n.client_port) +
         "\n    clusterPort: " + std::to_string(n.cluster_port) +
         "\n    metricsPort: " + std::to_string(n.metrics_port) + "\n    dataDir: " + dir + "/" +
         n.name + "\n    resources: {cpu: 2, memory: 4Gi, pods: 20}\n" + "    labels: {zone: z-" +
         n.name + "}\n";
  return y;
}

// Three nodes of two cpus each, node-1 the coordinator.
class Cluster : public ::testing::Test {
 protected:
  void SetUp() override { start_cluster(""); }

  void start_cluster(const std::string& token, const std::string& liveness = kLiveness) {
    for (int i = 1; i <= 3; ++i)
      specs_.push_back({"node-" + std::to_string(i), free_port(), free_port(), free_port()});
    config_ =
        write_file(dir_.path(), "cluster.yaml", config_yaml(specs_, dir_.path(), token, liveness));
    for (const auto& s : specs_) {
      std::vector<std::string> args{"--config", config_, "--node", s.name};
      nodes_.push_back(std::make_unique<Calderad>(dir_.path() + "/" + s.name, args));
    }
    for (auto& n : nodes_) n->start();
    ASSERT_TRUE(eventually([&] { return ready_nodes(*nodes_[0]).size() == 3; }, 20s))
        << nodes_[0]->log();
  }

  // The coordinator dies with its data dir, and starts again from `backup`.
  void restore_coordinator(const std::string& backup) {
    nodes_[0]->kill9();
    std::filesystem::remove_all(dir_.path() + "/node-1");
    nodes_[0] = std::make_unique<Calderad>(
        dir_.path() + "/node-1", std::vector<std::string>{"--config", config_, "--node", "node-1",
                                                          "--restore-from", backup});
    nodes_[0]->start();
  }

  // The names of the nodes `get nodes` (at `at`) says are Ready.
  std::set<std::string> ready_nodes(const Calderad& at) {
    auto r = at.cli({"get", "nodes", "-o", "json"});
    std::set<std::string> out;
    if (r.exit_code != 0) return out;
    auto nodes = json::parse(r.out);
    for (const auto& n : nodes["items"])
      if (n["status"]["conditions"][0]["status"] == "True") out.insert(n["metadata"]["name"]);
    return out;
  }

  std::string job(const std::string& name, int replicas, const std::string& cpu,
                  const std::string& script) {
    return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: " + name +
           "}\nspec:\n  minAvailable: " + std::to_string(replicas) +
           "\n  tasks:\n    - name: w\n      replicas: " + std::to_string(replicas) +
           "\n      template:\n        spec:\n          containers:\n            - name: main\n"
           "              command: [sh, -c, \"" +
           script + "\"]\n              resources: {requests: {cpu: " + cpu + "}}\n";
  }

  // The job one of whose pods runs on `node`, once there is one (within 30 s); "" if none.
  std::string job_running_on(const Calderad& at, const std::string& node) {
    std::string job;
    eventually(
        [&] {
          auto r = at.cli({"get", "pods", "-o", "json"});
          if (r.exit_code != 0) return false;
          auto pods = json::parse(r.out);
          // A pod not placed yet has no nodeName: read with defaults, never a missing key.
          using ptr = json::json_pointer;
          for (const auto& p : pods["items"])
            if (p.value(ptr("/spec/nodeName"), std::string()) == node &&
                p.value(ptr("/status/phase"), std::string()) == "Running")
              job = p.value(ptr("/metadata/labels/volcano.sh~1job-name"), std::string());
          return !job.empty();
        },
        30s);
    return job;
  }

  // Three one-pod jobs of `prefix`0..2 that write their pid and sleep, one per node; the pid files
  // of the two on the workers.
  std::vector<std::string> run_on_every_node(const std::string& prefix) {
    std::string all;
    for (int i = 0; i < 3; ++i) {
      auto name = prefix + std::to_string(i);
      all += job(name, 1, "2", "echo $$ > " + dir_.path() + "/" + name + ".pid; exec sleep 300") +
             "---\n";
    }
    EXPECT_EQ(nodes_[0]->cli({"submit", "-f", "-"}, all).exit_code, 0);
    std::vector<std::string> on_workers;
    for (const auto& node : {"node-2", "node-3"}) {
      auto name = job_running_on(*nodes_[0], node);
      if (name.empty()) {
        ADD_FAILURE() << "no job runs on " << node;
        return {};
      }
      on_workers.push_back(dir_.path() + "/" + name + ".pid");
      const auto& file = on_workers.back();
      if (!eventually([&] { return alive(file); }, 10s)) ADD_FAILURE() << file;
    }
    return on_workers;
  }

  // Three one-pod jobs that restart when a pod is evicted, one per node; then the coordinator
  // and node-3 die, the coordinator first, so that it cannot see node-3's link drop. Returns the
  // job that ran on node-3 ("" if none did).
  std::string kill_coordinator_and_node3() {
    auto& coordinator = *nodes_[0];
    std::string all;
    for (int i = 0; i < 3; ++i)
      all += job("r" + std::to_string(i), 1, "2", "sleep 4") +
             "  policies: [{event: PodEvicted, action: RestartJob}]\n---\n";
    EXPECT_EQ(coordinator.cli({"submit", "-f", "-"}, all).exit_code, 0);
    auto on_node3 = job_running_on(coordinator, "node-3");
    EXPECT_FALSE(on_node3.empty()) << coordinator.cli({"get", "pods", "-o", "wide"}).out;
    coordinator.kill9();
    nodes_[2]->kill9();
    return on_node3;
  }

  // The job lost its pod with node-3, ran again elsewhere and completed.
  void expect_restarted_once(const std::string& job, const std::string& timeout) {
    auto& coordinator = *nodes_[0];
    ASSERT_EQ(coordinator.cli({"wait", "job", job, "--for=phase=Completed", "--timeout=" + timeout})
                  .exit_code,
              0)
        << coordinator.cli({"describe", "job", job}).out << coordinator.log();
    auto job_json = json::parse(coordinator.cli({"get", "job", job, "-o", "json"}).out);
    EXPECT_EQ(job_json.value(json::json_pointer("/status/retryCount"), 0), 1) << job_json.dump();
  }

  TempDir dir_;
  std::vector<NodeSpec> specs_;
  std::string config_;
  std::vector<std::unique_ptr<Calderad>> nodes_;
};

TEST_F(Cluster, AGangThatNeedsSeveralNodesRunsWholeAcrossThem) {
  // Six pods of one cpu: no node has more than two.
  auto& coordinator = *nodes_[0];
  ASSERT_EQ(
      coordinator.cli({"submit", "-f", "-"}, job("gang", 6, "1", "echo $VK_TASK_INDEX")).exit_code,
      0);
  ASSERT_EQ(
      coordinator.cli({"wait", "job", "gang", "--for=phase=Completed", "--timeout=60s"}).exit_code,
      0)
      << coordinator.cli({"get", "pods", "-o", "wide"}).out;
  auto pods = json::parse(coordinator.cli({"get", "pods", "-o", "json"}).out)["items"];
  ASSERT_EQ(pods.size(), 6u);
  std::set<std::string> nodes;
  for (const auto& p : pods) nodes.insert(p["spec"]["nodeName"].get<std::string>());
  EXPECT_EQ(nodes, (std::set<std::string>{"node-1", "node-2", "node-3"}));
  // Every report reached its job and was acknowledged back to its node (job -> membership ->
  // node): past the first resend interval (2 s), no node has had to send one again.
  std::this_thread::sleep_for(2500ms);
  for (const auto& n : nodes_)
    EXPECT_EQ(n->log().find("not acknowledged"), std::string::npos) << n->log();
}

// The job's status as JSON, from `at`.
json job_state(const Calderad& at, const std::string& name) {
  auto r = at.cli({"get", "job", name, "-o", "json"});
  return r.exit_code == 0 ? json::parse(r.out)["status"]["state"] : json();
}

// Two gangs of four one-cpu pods on six cpus: each fits alone, not both. The second waits whole,
// saying why, and starts whole once the first has finished.
TEST_F(Cluster, TwoGangsThatFitAloneButNotTogetherRunOneAfterTheOtherEachWhole) {
  auto& coordinator = *nodes_[0];
  const auto gate = dir_.path() + "/open";
  ASSERT_EQ(coordinator
                .cli({"submit", "-f", "-"},
                     job("first", 4, "1", "while [ ! -e " + gate + " ]; do sleep 0.05; done"))
                .exit_code,
            0);
  ASSERT_EQ(
      coordinator.cli({"wait", "job", "first", "--for=phase=Running", "--timeout=30s"}).exit_code,
      0);
  ASSERT_EQ(coordinator.cli({"submit", "-f", "-"}, job("second", 4, "1", "true")).exit_code, 0);
  ASSERT_TRUE(eventually(
      [&] { return job_state(coordinator, "second").value("reason", "") == "Unschedulable"; }, 20s))
      << job_state(coordinator, "second").dump();
  // Two of its pods fit before the statement was discarded; then every node was full.
  EXPECT_EQ(job_state(coordinator, "second")["message"],
            "2/4 tasks in gang unschedulable: 3 nodes: insufficient cpu");
  EXPECT_EQ(job_state(coordinator, "second")["phase"], "Pending");
  auto pods = json::parse(coordinator.cli({"get", "pods", "-o", "json"}).out)["items"];
  for (const auto& p : pods) {
    if (p["metadata"]["labels"]["volcano.sh/job-name"] != "second") continue;
    EXPECT_EQ(p.value(json::json_pointer("/spec/nodeName"), std::string()), "") << p.dump();
  }

  write_file(dir_.path(), "open", "");
  ASSERT_EQ(coordinator.cli({"wait", "job", "second", "--for=phase=Completed", "--timeout=60s"})
                .exit_code,
            0)
      << coordinator.cli({"describe", "job", "second"}).out;
  // The first's pods freed their cpus as they ended; its phase follows on its own path.
  EXPECT_TRUE(
      eventually([&] { return job_state(coordinator, "first")["phase"] == "Completed"; }, 20s))
      << job_state(coordinator, "first").dump();
}

// A gang no node can hold says why, counted per node, a stopped node among them.
TEST_F(Cluster, AGangThatCanNeverFitSaysWhyPerNode) {
  auto& coordinator = *nodes_[0];
  nodes_[2]->signal(SIGSTOP);
  ASSERT_TRUE(eventually([&] { return !ready_nodes(coordinator).count("node-3"); }, 10s));
  // Four pods of two cpus: each fits a node, the gang does not fit the cluster (a warning).
  auto submit = coordinator.cli({"submit", "-f", "-"}, job("wide", 4, "2", "true"));
  ASSERT_EQ(submit.exit_code, 0) << submit.out << submit.err;
  // Two fit the ready nodes before the statement is discarded; the stopped node is NotReady.
  const std::string why =
      "2/4 tasks in gang unschedulable: 2 nodes: insufficient cpu; 1 node: NotReady; "
      "minAvailable 4 needs cpu 8, the ready nodes have 4 in all";
  bool told =
      eventually([&] { return job_state(coordinator, "wide").value("message", "") == why; }, 20s);
  nodes_[2]->signal(SIGCONT);
  EXPECT_TRUE(told) << job_state(coordinator, "wide").dump();
  auto describe = coordinator.cli({"describe", "job", "wide"}).out;
  EXPECT_NE(describe.find("2 nodes: insufficient cpu"), std::string::npos) << describe;
}

// nodeSelector takes the labels of the cluster config: every pod on the node labelled so, and
// a selector no node matches said so per node.
TEST_F(Cluster, ANodeSelectorPlacesPodsOnTheLabelledNodeOnly) {
  auto& coordinator = *nodes_[0];
  auto selected = [&](const std::string& name, const std::string& zone) {
    return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: " + name +
           "}\nspec:\n  minAvailable: 2\n  tasks:\n    - name: w\n      replicas: 2\n"
           "      template:\n        spec:\n          nodeSelector: {zone: " +
           zone +
           "}\n          containers:\n            - name: main\n              command: [true]\n"
           "              resources: {requests: {cpu: 500m}}\n";
  };
  ASSERT_EQ(coordinator.cli({"submit", "-f", "-"}, selected("there", "z-node-2")).exit_code, 0);
  ASSERT_EQ(
      coordinator.cli({"wait", "job", "there", "--for=phase=Completed", "--timeout=60s"}).exit_code,
      0);
  auto pods = json::parse(coordinator.cli({"get", "pods", "-o", "json"}).out)["items"];
  ASSERT_EQ(pods.size(), 2u);
  for (const auto& p : pods) EXPECT_EQ(p["spec"]["nodeName"], "node-2") << p.dump();

  ASSERT_EQ(coordinator.cli({"submit", "-f", "-"}, selected("nowhere", "z-mars")).exit_code, 0);
  const std::string why = "2/2 tasks in gang unschedulable: 3 nodes: node selector does not match";
  EXPECT_TRUE(eventually(
      [&] { return job_state(coordinator, "nowhere").value("message", "") == why; }, 20s))
      << job_state(coordinator, "nowhere").dump();
}

// How many times `what` is in `text`: one log line per eviction.
size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A quantity of cpu as the CLI writes it ("1", "1500m") in milli-cpus; 0 when absent.
int64_t milli_cpu(const json& resources) {
  auto text = resources.value("cpu", std::string());
  if (text.empty()) return 0;
  if (text.back() == 'm') return std::stoll(text.substr(0, text.size() - 1));
  return static_cast<int64_t>(std::stod(text) * 1000);
}

// Two queues of weights 1 and 3, both with more work than the six cpus hold: while both wait,
// queue a holds its share of 1.5 cpu at most and b about three times as much.
TEST_F(Cluster, QueueWeightsOneToThreeSplitASaturatedClusterOneToThree) {
  auto& coordinator = *nodes_[0];
  std::string yaml =
      "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: a}\n"
      "spec: {weight: 1}\n---\n"
      "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: b}\n"
      "spec: {weight: 3}\n";
  // One-pod jobs of half a cpu that run 2 s: the queues' pods come and go all the time, and
  // both queues have jobs waiting for about 13 s (b's 60 on 9 slots, a's 30 on 3).
  for (int i = 0; i < 60; ++i)
    for (const char* q : {"a", "b"})
      if (q[0] == 'b' || i < 30)
        yaml += "---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: " +
                std::string(q) + std::to_string(i) + "}\nspec:\n  queue: " + q +
                "\n  tasks:\n    - name: w\n      replicas: 1\n      template:\n        spec:\n"
                "          containers:\n            - name: main\n"
                "              command: [sh, -c, \"exec sleep 2\"]\n"
                "              resources: {requests: {cpu: 500m}}\n";
  auto submit = coordinator.cli({"submit", "-f", "-"}, yaml);
  ASSERT_EQ(submit.exit_code, 0) << submit.err;

  // Samples while both queues have gangs waiting, once the first pods have ended: the first
  // session may have seen only some of the jobs (a queue asking less than its share leaves the
  // rest to the others), and its pods keep what they got until they end. a0 is among them.
  ASSERT_EQ(
      coordinator.cli({"wait", "job", "a0", "--for=phase=Completed", "--timeout=60s"}).exit_code,
      0);
  bool first_wave = true;
  int64_t a_sum = 0, b_sum = 0, a_max = 0, samples = 0;
  std::string seen;  // what the samples were, for a failure's message
  const auto until = std::chrono::steady_clock::now() + 20s;
  while (samples < 10 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(200ms);
    auto r = coordinator.cli({"get", "queues", "-o", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::map<std::string, json> by_name;
    const auto list = json::parse(r.out);
    for (const auto& q : list["items"]) by_name[q["metadata"]["name"]] = q;
    const auto &a = by_name["a"]["status"], &b = by_name["b"]["status"];
    auto waiting = [](const json& q) { return q.value("pending", 0) + q.value("inqueue", 0); };
    if (waiting(a) == 0 || waiting(b) == 0) break;
    const int64_t a_cpu = milli_cpu(a["allocated"]), b_cpu = milli_cpu(b["allocated"]);
    seen += " " + std::to_string(a_cpu) + "/" + std::to_string(b_cpu);
    // The first wave's last pods may still be ending.
    first_wave = first_wave && a_cpu > 1500;
    if (first_wave) continue;
    EXPECT_EQ(milli_cpu(a["deserved"]), 1500) << a.dump();
    EXPECT_EQ(milli_cpu(b["deserved"]), 4500) << b.dump();
    a_sum += a_cpu;
    b_sum += b_cpu;
    a_max = std::max(a_max, a_cpu);
    ++samples;
  }
  ASSERT_GE(samples, 5) << seen << "\n" << coordinator.cli({"get", "queues"}).out;
  EXPECT_LE(a_max, 1500) << seen;
  const double ratio =
      static_cast<double>(b_sum) / static_cast<double>(std::max<int64_t>(a_sum, 1));
  EXPECT_GE(ratio, 2.2) << seen;
  EXPECT_LE(ratio, 3.8) << seen;
}

// A high-priority gang that does not fit evicts two pods of a lower-priority job: the victims
// end Failed with reason Preempted, their job's PodEvicted policy (RestartPod) makes them again,
// and at no time do fewer than the victim's minAvailable of 4 pods run.
TEST_F(Cluster, AHighPriorityGangPreemptsLowPriorityPodsAndTheirPodEvictedPolicyFires) {
  auto& coordinator = *nodes_[0];
  auto low = job("low", 6, "1", "exec sleep 600");
  low.replace(low.find("minAvailable: 6"), 15, "minAvailable: 4");
  low.replace(low.find("  tasks:"), 0, "  policies: [{event: PodEvicted, action: RestartPod}]\n");
  ASSERT_EQ(coordinator.cli({"submit", "-f", "-"}, low).exit_code, 0);
  auto running_low = [&] {
    auto r = coordinator.cli({"get", "pods", "--job", "low", "-o", "json"});
    int n = 0;
    if (r.exit_code != 0) return -1;
    const auto pods = json::parse(r.out);
    for (const auto& p : pods["items"]) n += p["status"]["phase"] == "Running";
    return n;
  };
  ASSERT_TRUE(eventually([&] { return running_low() == 6; }, 30s))
      << coordinator.cli({"get", "pods"}).out;

  auto high =
      "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\n"
      "value: 100\n---\n" +
      job("high", 2, "1", "exec sleep 1");
  high.replace(high.find("  tasks:"), 0, "  priorityClassName: high\n");
  ASSERT_EQ(coordinator.cli({"submit", "-f", "-"}, high).exit_code, 0);
  int least = 6;
  ASSERT_TRUE(eventually(
      [&] {
        least = std::min(least, running_low());
        return job_state(coordinator, "high")["phase"] == "Completed";
      },
      60s))
      << coordinator.cli({"describe", "job", "high"}).out << coordinator.log();
  EXPECT_GE(least, 4);

  auto describe = coordinator.cli({"describe", "job", "low"}).out;
  EXPECT_NE(describe.find("was evicted: preempted by job default/high of higher priority"),
            std::string::npos)
      << describe;
  EXPECT_NE(describe.find("PodEvicted of pod low-w-"), std::string::npos) << describe;
  EXPECT_NE(describe.find("-> RestartPod"), std::string::npos) << describe;
  const auto log = coordinator.log();
  EXPECT_EQ(occurrences(log, "preempted by job=default/high"), 2u) << log;
  // The victims are made again and run once the high job has left.
  EXPECT_TRUE(eventually([&] { return running_low() == 6; }, 30s))
      << coordinator.cli({"get", "pods"}).out;
}

// Queue a's job holds all six cpus; a gang of queue b (same weight) asks for two: b is below
// its share, so two of a's pods are reclaimed (reason Reclaimed, PodEvicted to their job) and
// b's gang runs; a keeps its share of four.
TEST_F(Cluster, AQueueBelowItsShareReclaimsPodsFromAQueueAboveIt) {
  auto& coordinator = *nodes_[0];
  const std::string queues =
      "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: a}\n---\n"
      "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: b}\n";
  ASSERT_EQ(coordinator.cli({"submit", "-f", "-"}, queues).exit_code, 0);
  auto hog = job("hog", 6, "1", "exec sleep 600");
  hog.replace(hog.find("minAvailable: 6"), 15, "minAvailable: 1");
  hog.replace(hog.find("  tasks:"), 0,
              "  queue: a\n  policies: [{event: PodEvicted, action: RestartPod}]\n");
  ASSERT_EQ(coordinator.cli({"submit", "-f", "-"}, hog).exit_code, 0);
  ASSERT_TRUE(eventually(
      [&] {
        auto q = json::parse(coordinator.cli({"get", "queue", "a", "-o", "json"}).out);
        return milli_cpu(q["status"]["allocated"]) == 6000;
      },
      30s));
  auto gang = job("gang", 2, "1", "exec sleep 1");
  gang.replace(gang.find("  tasks:"), 0, "  queue: b\n");
  ASSERT_EQ(coordinator.cli({"submit", "-f", "-"}, gang).exit_code, 0);
  ASSERT_TRUE(
      eventually([&] { return job_state(coordinator, "gang")["phase"] == "Completed"; }, 60s))
      << coordinator.cli({"describe", "job", "gang"}).out << coordinator.log();
  auto describe = coordinator.cli({"describe", "job", "hog"}).out;
  EXPECT_NE(describe.find("was evicted: reclaimed for job default/gang, whose queue holds less "
                          "than its share"),
            std::string::npos)
      << describe;
  const auto log = coordinator.log();
  EXPECT_EQ(occurrences(log, "reclaimed by job=default/gang"), 2u) << log;
}

TEST_F(Cluster, AWatchAtAWorkerStreamsTheCoordinatorsEventsAndEndsWhenItIsLost) {
  auto& coordinator = *nodes_[0];
  auto& worker = *nodes_[2];
  auto connected = Client::connect(worker.server(), 5s);
  ASSERT_TRUE(connected) << connected.error();
  auto& c = **connected;
  auto id = c.start([](api::Request::Builder b) { b.initWatch().setKind("pods"); });
  ASSERT_TRUE(id);
  auto synced = c.next(*id, 10s);
  ASSERT_TRUE(synced) << synced.error();
  ASSERT_EQ((*synced)->root<api::Response>().getEvent().getType(), api::WatchEvent::Type::SYNCED);
  // Pods on every node, the worker's own included, reach the worker's client.
  ASSERT_EQ(coordinator.cli({"submit", "-f", "-"}, job("seen", 3, "2", "true")).exit_code, 0);
  std::set<std::string> succeeded;
  while (succeeded.size() < 3) {
    auto r = c.next(*id, 30s);
    ASSERT_TRUE(r) << r.error() << " with " << succeeded.size() << " pods Succeeded";
    auto e = (*r)->root<api::Response>();
    ASSERT_TRUE(e.isEvent());
    auto pod = e.getEvent().getPod();
    if (std::string(pod.getPhase().cStr()) == "Succeeded") succeeded.insert(pod.getName().cStr());
  }
  // The coordinator goes: the worker's link notices, and the watch ends with `unavailable`, so
  // the client knows to watch again rather than wait on a dead stream.
  coordinator.kill9();
  for (;;) {
    auto r = c.next(*id, 30s);
    ASSERT_TRUE(r) << r.error();
    auto resp = (*r)->root<api::Response>();
    if (resp.isEvent()) continue;
    ASSERT_TRUE(resp.isErrors());
    EXPECT_EQ(resp.getErrors()[0].getCode(), api::Error::Code::UNAVAILABLE);
    break;
  }
}

TEST_F(Cluster, AClientAtAWorkerSubmitsAndReadsTheLogOfAPodOnAnotherNode) {
  auto& worker = *nodes_[1];
  // Two cpus each: one pod a node, so two of them run away from node-2.
  ASSERT_EQ(
      worker.cli({"submit", "-f", "-"}, job("spread", 3, "2", "echo hello from $VK_TASK_INDEX"))
          .exit_code,
      0);
  ASSERT_EQ(
      worker.cli({"wait", "job", "spread", "--for=phase=Completed", "--timeout=60s"}).exit_code, 0);
  int elsewhere = 0;
  for (int i = 0; i < 3; ++i) {
    auto pod = "spread-w-" + std::to_string(i);
    auto got = json::parse(worker.cli({"get", "pod", pod, "-o", "json"}).out);
    if (got["spec"]["nodeName"] != "node-2") ++elsewhere;
    auto log = worker.cli({"logs", pod});
    EXPECT_EQ(log.exit_code, 0) << log.err;
    EXPECT_EQ(log.out, "hello from " + std::to_string(i) + "\n");
  }
  EXPECT_EQ(elsewhere, 2);
}

TEST_F(Cluster, AStoppedWorkerIsNotReadyWithinTheTimeoutAndReadyAfterItContinues) {
  auto& coordinator = *nodes_[0];
  auto& worker = *nodes_[2];
  worker.signal(SIGSTOP);
  auto stopped = std::chrono::steady_clock::now();
  bool not_ready = eventually([&] { return !ready_nodes(coordinator).count("node-3"); }, 10s);
  auto took = std::chrono::steady_clock::now() - stopped;
  // Read while it is stopped: once it continues it is back within a heartbeat.
  auto nodes = json::parse(coordinator.cli({"get", "nodes", "-o", "json"}).out)["items"];
  worker.signal(SIGCONT);
  ASSERT_TRUE(not_ready);
  EXPECT_LE(took, kHeartbeatTimeout + 500ms)
      << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms";
  EXPECT_GE(took, kHeartbeatTimeout - 600ms) << "NotReady before its heartbeats could be missed";
  for (const auto& n : nodes) {
    if (n["metadata"]["name"] != "node-3") continue;
    auto message = n["status"]["conditions"][0].value("message", "");
    EXPECT_NE(message.find("heartbeat"), std::string::npos) << n.dump();
  }
  EXPECT_TRUE(eventually([&] { return ready_nodes(coordinator).count("node-3") > 0; }, 10s));
  // Schedulable again: a pod that needs its two cpus runs.
  ASSERT_EQ(coordinator.cli({"submit", "-f", "-"}, job("after", 3, "2", "true")).exit_code, 0);
  EXPECT_EQ(
      coordinator.cli({"wait", "job", "after", "--for=phase=Completed", "--timeout=60s"}).exit_code,
      0)
      << coordinator.cli({"describe", "job", "after"}).out << coordinator.log() << worker.log();
}

TEST_F(Cluster, AKilledWorkerEvictsItsPartOfAGangThatRestartsOnTheOtherNodes) {
  auto& coordinator = *nodes_[0];
  // Four pods of one cpu: at least one lands on node-3.
  auto yaml = job("restarts", 4, "1", "sleep 3") +
              "  policies: [{event: PodEvicted, action: RestartJob}]\n  maxRetry: 3\n";
  ASSERT_EQ(coordinator.cli({"submit", "-f", "-"}, yaml).exit_code, 0);
  ASSERT_EQ(coordinator.cli({"wait", "job", "restarts", "--for=phase=Running", "--timeout=30s"})
                .exit_code,
            0);
  auto pods = json::parse(coordinator.cli({"get", "pods", "-o", "json"}).out)["items"];
  int on_node3 = 0;
  for (const auto& p : pods) on_node3 += p["spec"]["nodeName"] == "node-3";
  ASSERT_GT(on_node3, 0) << pods.dump();
  nodes_[2]->kill9();
  ASSERT_EQ(coordinator.cli({"wait", "job", "restarts", "--for=phase=Completed", "--timeout=60s"})
                .exit_code,
            0)
      << coordinator.cli({"describe", "job", "restarts"}).out;
  auto job_json = json::parse(coordinator.cli({"get", "job", "restarts", "-o", "json"}).out);
  EXPECT_EQ(job_json["status"]["retryCount"], 1);
  pods = json::parse(coordinator.cli({"get", "pods", "-o", "json"}).out)["items"];
  ASSERT_EQ(pods.size(), 4u);
  for (const auto& p : pods) EXPECT_NE(p["spec"]["nodeName"], "node-3") << p.dump();
}

// An Indexed Kubernetes Job of four one-cpu pods (spread over the nodes, so some on node-3),
// `policy` lines under its spec.
std::string indexed_batch_job(const std::string& name, const std::string& policy) {
  return "apiVersion: batch/v1\nkind: Job\nmetadata: {name: " + name +
         "}\nspec:\n  completions: 4\n  parallelism: 4\n  completionMode: Indexed\n"
         "  backoffLimit: 0\n" +
         policy +
         "  template:\n    spec:\n      restartPolicy: Never\n      containers:\n"
         "      - name: main\n        command: [sh, -c, 'sleep 3']\n"
         "        resources: {requests: {cpu: 1}}\n";
}

// Kills node-3 under the job once it runs there; the job's pods as they are then.
json kill_node3_under(Calderad& coordinator, Calderad& node3, const std::string& name) {
  json pods;
  EXPECT_TRUE(eventually(
      [&] {
        pods = json::parse(coordinator.cli({"get", "pods", "-o", "json"}).out)["items"];
        int running = 0;
        for (const auto& p : pods) running += p["status"]["phase"] == "Running";
        return running == 4;
      },
      30s))
      << coordinator.cli({"describe", "jobs.batch", name}).out;
  int on_node3 = 0;
  for (const auto& p : pods) on_node3 += p["spec"]["nodeName"] == "node-3";
  EXPECT_GT(on_node3, 0) << pods.dump();
  node3.kill9();
  return pods;
}

TEST_F(Cluster, ALostNodesPodsAreADisruptionTargetThatAnIgnoreRuleDoesNotCount) {
  auto& coordinator = *nodes_[0];
  auto yaml = indexed_batch_job("ignored",
                                "  podFailurePolicy:\n    rules:\n    - action: Ignore\n"
                                "      onPodConditions: [{type: DisruptionTarget}]\n");
  ASSERT_EQ(coordinator.cli({"submit", "-f", "-"}, yaml).exit_code, 0);
  kill_node3_under(coordinator, *nodes_[2], "ignored");
  ASSERT_EQ(coordinator
                .cli({"wait", "jobs.batch", "ignored", "--for=condition=Complete", "--timeout=60s"})
                .exit_code,
            0)
      << coordinator.cli({"describe", "jobs.batch", "ignored"}).out;
  auto job_json = json::parse(coordinator.cli({"get", "jobs.batch", "ignored", "-o", "json"}).out);
  EXPECT_EQ(job_json["status"]["completedIndexes"], "0-3");
  EXPECT_EQ(job_json["status"].value("failed", 0), 0) << "backoffLimit 0 and nothing counted";
  auto described = coordinator.cli({"describe", "jobs.batch", "ignored"}).out;
  EXPECT_NE(described.find("has condition DisruptionTarget matching Ignore rule at index 0"),
            std::string::npos)
      << described;
  // The lost pods were made again on the nodes left.
  auto pods = json::parse(coordinator.cli({"get", "pods", "-o", "json"}).out)["items"];
  int succeeded = 0;
  for (const auto& p : pods)
    if (p["status"]["phase"] == "Succeeded") {
      ++succeeded;
      EXPECT_NE(p["spec"]["nodeName"], "node-3") << p.dump();
    }
  EXPECT_EQ(succeeded, 4);
}

TEST_F(Cluster, ALostNodesPodsCountAgainstBackoffLimitWithoutAPolicy) {
  auto& coordinator = *nodes_[0];
  ASSERT_EQ(coordinator.cli({"submit", "-f", "-"}, indexed_batch_job("counted", "")).exit_code, 0);
  kill_node3_under(coordinator, *nodes_[2], "counted");
  ASSERT_EQ(
      coordinator.cli({"wait", "jobs.batch", "counted", "--for=condition=Failed", "--timeout=60s"})
          .exit_code,
      0)
      << coordinator.cli({"describe", "jobs.batch", "counted"}).out;
  auto job_json = json::parse(coordinator.cli({"get", "jobs.batch", "counted", "-o", "json"}).out);
  bool backoff = false;
  for (const auto& c : job_json["status"]["conditions"])
    backoff = backoff || (c["type"] == "Failed" && c["reason"] == "BackoffLimitExceeded");
  EXPECT_TRUE(backoff) << job_json.dump();
}

TEST_F(Cluster, AKilledCoordinatorRestartedLosesNoJobAndRunsNoPodTwice) {
  auto& coordinator = *nodes_[0];
  auto ran = dir_.path() + "/ran.txt";
  std::string all;
  for (int i = 0; i < 50; ++i) {
    auto name = "j" + std::to_string(i);
    all += job(name, 1, "100m", "echo " + name + " >> " + ran + "; sleep 3") + "---\n";
  }
  ASSERT_EQ(coordinator.cli({"submit", "-f", "-"}, all).exit_code, 0);
  ASSERT_TRUE(eventually(
      [&] {
        auto r = coordinator.cli({"get", "jobs", "-o", "json"});
        if (r.exit_code != 0) return false;
        int running = 0;
        auto jobs = json::parse(r.out);
        for (const auto& j : jobs["items"]) running += j["status"]["state"]["phase"] == "Running";
        return running >= 25;
      },
      30s));
  coordinator.kill9();
  coordinator.start();
  // The outage fell while pods ran: some jobs are not over yet.
  auto after = json::parse(coordinator.cli({"get", "jobs", "-o", "json"}).out);
  ASSERT_EQ(after["items"].size(), 50u);
  int unfinished = 0;
  for (const auto& j : after["items"]) unfinished += j["status"]["state"]["phase"] != "Completed";
  EXPECT_GT(unfinished, 0);
  for (int i = 0; i < 50; ++i) {
    auto name = "j" + std::to_string(i);
    ASSERT_EQ(
        coordinator.cli({"wait", "job", name, "--for=phase=Completed", "--timeout=60s"}).exit_code,
        0)
        << coordinator.cli({"describe", "job", name}).out;
  }
  std::map<std::string, int> runs;
  std::ifstream lines(ran);
  for (std::string line; std::getline(lines, line);) ++runs[line];
  EXPECT_EQ(runs.size(), 50u);
  for (const auto& [name, n] : runs) EXPECT_EQ(n, 1) << name << " ran " << n << " times";
}

// Three times in a row the coordinator dies and stays down 8 s, longer than the workers' 5 s
// lease, while the workers' pods (6 s each) finish: the workers hold their leases through the
// outage (the coordinator's port refuses them), report the ends when it is back, and every job
// completes once, no pod run twice.
TEST_F(Cluster, PodsThatEndWhileTheCoordinatorIsDownAreCompletedOnceAndNeverRunAgain) {
  auto& coordinator = *nodes_[0];
  auto ran = dir_.path() + "/ran.txt";
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::string all;
    std::vector<std::string> names;
    for (int i = 0; i < 3; ++i) {  // two cpus each: one per node
      names.push_back("d" + std::to_string(round) + std::to_string(i));
      all +=
          job(names.back(), 1, "2", "echo " + names.back() + " >> " + ran + "; sleep 6") + "---\n";
    }
    ASSERT_EQ(coordinator.cli({"submit", "-f", "-"}, all).exit_code, 0);
    for (const auto& name : names)
      ASSERT_EQ(
          coordinator.cli({"wait", "job", name, "--for=phase=Running", "--timeout=30s"}).exit_code,
          0);
    coordinator.kill9();
    std::this_thread::sleep_for(8s);
    coordinator.start();
    for (const auto& name : names) {
      ASSERT_EQ(coordinator.cli({"wait", "job", name, "--for=phase=Completed", "--timeout=30s"})
                    .exit_code,
                0)
          << coordinator.cli({"describe", "job", name}).out << nodes_[1]->log() << nodes_[2]->log();
      auto j = json::parse(coordinator.cli({"get", "job", name, "-o", "json"}).out);
      EXPECT_EQ(j.value(json::json_pointer("/status/retryCount"), 0), 0) << j.dump();
    }
  }
  std::map<std::string, int> runs;
  std::ifstream lines(ran);
  for (std::string line; std::getline(lines, line);) ++runs[line];
  EXPECT_EQ(runs.size(), 9u);
  for (const auto& [name, n] : runs) EXPECT_EQ(n, 1) << name << " ran " << n << " times";
}

TEST_F(Cluster, APodAReturningNodeStillRunsForADeletedJobIsKilled) {
  auto& coordinator = *nodes_[0];
  std::string all;
  for (int i = 0; i < 3; ++i) {
    auto name = "p" + std::to_string(i);
    all += job(name, 1, "2", "echo $$ > " + dir_.path() + "/" + name + ".pid; exec sleep 300") +
           "---\n";
  }
  ASSERT_EQ(coordinator.cli({"submit", "-f", "-"}, all).exit_code, 0);
  auto on_node3 = job_running_on(coordinator, "node-3");
  ASSERT_FALSE(on_node3.empty()) << coordinator.cli({"get", "pods", "-o", "wide"}).out;
  auto pid_file = dir_.path() + "/" + on_node3 + ".pid";
  ASSERT_TRUE(eventually([&] { return alive(pid_file); }, 10s));
  // The node dies; its pod's supervisor does not. The job is deleted while the node is away, so
  // the removal never reaches it.
  nodes_[2]->kill9();
  ASSERT_TRUE(eventually([&] { return !ready_nodes(coordinator).count("node-3"); }, 10s));
  ASSERT_EQ(coordinator.cli({"delete", "job", on_node3}).exit_code, 0);
  ASSERT_TRUE(alive(pid_file)) << "the pod outlives its node's calderad";
  // Back, it re-adopts the pod and reports it running: no job owns it, so it is stopped.
  nodes_[2]->start();
  EXPECT_TRUE(eventually([&] { return !alive(pid_file); }, 20s))
      << "the pod of a deleted job runs on after its node returned\n"
      << coordinator.log() << nodes_[2]->log();
  // The other two pods would outlive the test (their supervisors outlive calderad).
  for (int i = 0; i < 3; ++i) {
    auto name = "p" + std::to_string(i);
    if (name == on_node3) continue;
    coordinator.cli({"delete", "job", name});
    EXPECT_TRUE(eventually([&] { return !alive(dir_.path() + "/" + name + ".pid"); }, 20s));
  }
}

TEST_F(Cluster, ANodeThatDoesNotReturnAfterACoordinatorRestartIsLostAndItsJobRunsElsewhere) {
  // Nothing tells the restarted coordinator that node-3 is gone but node-3's silence.
  auto on_node3 = kill_coordinator_and_node3();
  ASSERT_FALSE(on_node3.empty());
  auto& coordinator = *nodes_[0];
  coordinator.start();
  expect_restarted_once(on_node3, "60s");
  auto nodes = json::parse(coordinator.cli({"get", "nodes", "-o", "json"}).out);
  for (const auto& n : nodes["items"]) {
    if (n.value(json::json_pointer("/metadata/name"), std::string()) != "node-3") continue;
    EXPECT_EQ(n.value(json::json_pointer("/status/conditions/0/message"), std::string()),
              "has not registered")
        << n.dump();
  }
}

// An operator takes a dead machine out of the config: the restarted coordinator knows at once
// that it will never register, so the pods bound to it are lost and their job runs elsewhere.
TEST_F(Cluster, ANodeDroppedFromTheConfigIsLostWhenTheCoordinatorRestarts) {
  auto on_node3 = kill_coordinator_and_node3();
  ASSERT_FALSE(on_node3.empty());
  write_file(dir_.path(), "cluster.yaml",
             config_yaml({specs_[0], specs_[1]}, dir_.path(), "", kLiveness));
  auto& coordinator = *nodes_[0];
  coordinator.start();
  expect_restarted_once(on_node3, "30s");
  EXPECT_NE(coordinator.cli({"describe", "job", on_node3}).out.find("not in the cluster config"),
            std::string::npos);
  EXPECT_NE(coordinator.log().find("node=node-3 is not in the cluster config: pods=1"),
            std::string::npos)
      << coordinator.log();
  EXPECT_EQ(ready_nodes(coordinator), (std::set<std::string>{"node-1", "node-2"}));
}

// The coordinator restarted on an empty data dir (its store lost) while the workers run pods of
// the cluster: it acts on nothing and says why, to its log and to clients, and the pods run on
// (their leases held by its heartbeats). Told to start over (--accept-empty-store), it carries on
// the workers' cluster in a new generation, and the pods of jobs it does not know are stopped.
TEST_F(Cluster, ACoordinatorWhoseStoreWasLostHaltsAndThePodsRunOn) {
  std::vector<std::string> on_workers;
  ASSERT_NO_FATAL_FAILURE(on_workers = run_on_every_node("w"));
  nodes_[0]->kill9();
  std::filesystem::remove_all(dir_.path() + "/node-1");
  nodes_[0]->start();
  ASSERT_TRUE(eventually(
      [&] { return nodes_[0]->log().find("coordinator halted") != std::string::npos; }, 10s))
      << nodes_[0]->log();
  auto log = nodes_[0]->log();
  EXPECT_NE(log.find("--restore-from"), std::string::npos) << log;
  auto jobs = nodes_[0]->cli({"get", "jobs"});
  EXPECT_NE(jobs.exit_code, 0);
  EXPECT_NE(jobs.err.find("the coordinator's store is new"), std::string::npos) << jobs.err;
  auto at_worker = nodes_[1]->cli({"get", "jobs"});
  EXPECT_NE(at_worker.err.find("--accept-empty-store"), std::string::npos) << at_worker.err;
  EXPECT_EQ(nodes_[0]->cli({"get", "nodes"}).exit_code, 0);
  // Past the lease and the wait for silent nodes: the workers' pods still run.
  std::this_thread::sleep_for(8s);
  for (const auto& pid : on_workers) EXPECT_TRUE(alive(pid)) << pid;
  for (int i = 1; i < 3; ++i)
    EXPECT_NE(nodes_[i]->log().find("acts on nothing"), std::string::npos) << nodes_[i]->log();

  // The operator starts over: same cluster, next generation; the strays go.
  nodes_[0]->kill9();
  nodes_[0] = std::make_unique<Calderad>(
      dir_.path() + "/node-1",
      std::vector<std::string>{"--config", config_, "--node", "node-1", "--accept-empty-store"});
  nodes_[0]->start();
  for (const auto& pid : on_workers)
    EXPECT_TRUE(eventually([&] { return !alive(pid); }, 20s))
        << pid << nodes_[0]->log() << nodes_[1]->log() << nodes_[2]->log();
  EXPECT_EQ(nodes_[0]->cli({"get", "jobs"}).exit_code, 0);
  EXPECT_NE(nodes_[0]->log().find("generation=1"), std::string::npos) << nodes_[0]->log();
}

// A backup taken while the coordinator runs restores it after its data dir is lost: its jobs are
// back, the workers' pods run on as theirs, and the cluster carries on in the next generation.
TEST_F(Cluster, ABackupTakenWhileRunningRestoresALostCoordinator) {
  std::vector<std::string> on_workers;
  ASSERT_NO_FATAL_FAILURE(on_workers = run_on_every_node("b"));
  const auto backup = dir_.path() + "/backup";
  auto made = nodes_[0]->cli({"admin", "backup", backup});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_NE(made.out.find("--restore-from " + backup), std::string::npos) << made.out;
  auto again = nodes_[0]->cli({"admin", "backup", backup});
  EXPECT_NE(again.exit_code, 0) << "a backup never overwrites one";
  restore_coordinator(backup);
  EXPECT_NE(nodes_[0]->log().find("restored the coordinator's store"), std::string::npos)
      << nodes_[0]->log();
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(
        nodes_[0]
            ->cli({"wait", "job", "b" + std::to_string(i), "--for=phase=Running", "--timeout=20s"})
            .exit_code,
        0)
        << nodes_[0]->log();
  std::this_thread::sleep_for(3s);
  for (const auto& pid : on_workers) EXPECT_TRUE(alive(pid)) << pid << nodes_[0]->log();
  EXPECT_EQ(nodes_[0]->log().find("coordinator halted"), std::string::npos) << nodes_[0]->log();
  EXPECT_NE(nodes_[0]->log().find("generation=1"), std::string::npos) << nodes_[0]->log();
  // A restore never overwrites a store.
  nodes_[0]->kill9();
  auto refused =
      run({CALDERAD_PATH, "--config", config_, "--node", "node-1", "--restore-from", backup});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("already has a store"), std::string::npos) << refused.err;
}

// The pods that ended after the backup was taken, their end acknowledged to the coordinator that
// was then lost: their nodes retired them (out of memory, out of their registration). The
// restored coordinator asks the nodes how they ended, and the jobs end as they did: nothing runs
// twice.
TEST_F(Cluster, ARestoredBackupAsksTheNodesHowThePodsThatEndedSinceEnded) {
  const auto gate = dir_.path() + "/gate";
  std::string all;
  for (int i = 0; i < 3; ++i) {
    auto name = "g" + std::to_string(i);
    all += job(name, 1, "2",
               "echo run >> " + dir_.path() + "/" + name + ".runs; while [ ! -f " + gate +
                   " ]; do sleep 0.1; done") +
           "---\n";
  }
  ASSERT_EQ(nodes_[0]->cli({"submit", "-f", "-"}, all).exit_code, 0);
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(
        nodes_[0]
            ->cli({"wait", "job", "g" + std::to_string(i), "--for=phase=Running", "--timeout=30s"})
            .exit_code,
        0);
  // The coordinator's own node loses its pod's directory with the data dir: how that pod ended
  // is lost with it. The workers' pods are the ones this is about.
  const auto on_coordinator = job_running_on(*nodes_[0], "node-1");
  const auto backup = dir_.path() + "/backup";
  ASSERT_EQ(nodes_[0]->cli({"admin", "backup", backup}).exit_code, 0);
  write_file(dir_.path(), "gate", "");
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(nodes_[0]
                  ->cli({"wait", "job", "g" + std::to_string(i), "--for=phase=Completed",
                         "--timeout=30s"})
                  .exit_code,
              0);
  // Every node has retired its pod: none holds one in memory.
  for (const auto& s : specs_) {
    const auto url = "http://127.0.0.1:" + std::to_string(s.metrics_port) + "/metrics";
    ASSERT_TRUE(eventually([&] {
      return run({"curl", "-sf", url}).out.find("\ncaldera_node_pods 0\n") != std::string::npos;
    })) << s.name
        << run({"curl", "-sf", url}).out;
  }
  restore_coordinator(backup);
  for (int i = 0; i < 3; ++i) {
    auto name = "g" + std::to_string(i);
    if (name == on_coordinator) continue;
    auto r = nodes_[0]->cli({"wait", "job", name, "--for=phase=Completed", "--timeout=20s"});
    EXPECT_EQ(r.exit_code, 0) << name << r.err << nodes_[0]->log();
    std::ifstream runs(dir_.path() + "/" + name + ".runs");
    std::string all_runs((std::istreambuf_iterator<char>(runs)), {});
    EXPECT_EQ(all_runs, "run\n") << name << nodes_[0]->log();
  }
  EXPECT_NE(nodes_[0]->log().find("ended while the coordinator did not know"), std::string::npos)
      << nodes_[0]->log();
}

// Another process may only register and heartbeat through the cluster port: CAF's own type
// check on the published actor refuses the rest.
TEST_F(Cluster, TheClusterPortTakesOnlyRegistrationsAndHeartbeats) {
  caf::actor_system_config cfg;
  cfg.load<caf::io::middleman>();
  caf::actor_system sys{cfg};
  auto port = static_cast<uint16_t>(specs_[0].cluster_port);
  auto untyped = sys.middleman().remote_actor("127.0.0.1", port);
  EXPECT_FALSE(untyped) << "reached as an actor that takes anything";
  auto typed = sys.middleman().remote_actor<protocol::membership_port>("127.0.0.1", port);
  ASSERT_TRUE(typed) << sys.render(typed.error());
  caf::scoped_actor self{sys};
  // A launch for node-2, as the coordinator's own actors send it to the membership.
  bool refused = false;
  self->request(caf::actor_cast<caf::actor>(*typed), 5s, launch_atom::value, std::string("node-2"),
                std::string("bytes"))
      .receive([&](caf::message&) { ADD_FAILURE() << "a launch was taken"; },
               [&](const caf::error& e) { refused = e == caf::sec::unexpected_message; });
  EXPECT_TRUE(refused);
  // A heartbeat is answered: a node it does not know must register.
  self->request(*typed, 5s, heartbeat_atom::value, std::string("node-9"), uint64_t{1})
      .receive([&](bool ok) { EXPECT_FALSE(ok); },
               [&](const caf::error& e) { ADD_FAILURE() << sys.render(e); });
  EXPECT_EQ(ready_nodes(*nodes_[0]).size(), 3u) << "the cluster stays whole";
}

// Leases of 3 s, heartbeats every 250 ms: a cut-off worker's pods are surely dead 4.2 s after its
// last renewal (3 s, 1%, 200 ms, and the stop's 1 s grace for a pod that sets none).
class LeaseCluster : public Cluster {
 protected:
  void SetUp() override {
    start_cluster("", "  heartbeatInterval: 250ms\n  heartbeatTimeout: 1s\n  leaseTimeout: 3s\n");
  }

  // A one-pod job of two cpus (a node's all) whose pod, as it starts, writes "start PID" to
  // `markers` and "overlap PID" first for every earlier copy whose process is still alive. With
  // `on_term`, the pod runs it on SIGTERM and exits 0 (else SIGTERM ends it).
  std::string marked_job(const std::string& name, const std::string& markers,
                         const std::string& on_term = "") {
    std::string script = "for p in $(awk '/^start/ {print $2}' " + markers +
                         " 2>/dev/null); do kill -0 $p 2>/dev/null && echo overlap $p >> " +
                         markers + "; done; echo start $$ >> " + markers + "; ";
    script +=
        on_term.empty() ? "exec sleep 60" : "trap '" + on_term + "; exit 0' TERM; sleep 60 & wait";
    return job(name, 1, "2", script) + "  policies: [{event: PodEvicted, action: RestartJob}]\n";
  }

  // Submits `jobs` (named prefix0, prefix1, prefix2, marking in dir/<name>), waits for the one on
  // node-3 to start, deletes the others (room for its replacement) and stops node-3's calderad,
  // as a hang or a partition would: the victim's name, "" on failure.
  std::string cut_off_node3(const std::string& prefix, const std::vector<std::string>& jobs) {
    auto& coordinator = *nodes_[0];
    std::string all;
    for (const auto& j : jobs) all += j + "---\n";
    if (coordinator.cli({"submit", "-f", "-"}, all).exit_code != 0) return "";
    auto victim = job_running_on(coordinator, "node-3");
    if (victim.empty()) return "";
    const auto markers = dir_.path() + "/" + victim;
    if (!eventually([&] { return slurp(markers).find("start") != std::string::npos; })) return "";
    for (size_t i = 0; i < jobs.size(); ++i) {
      const auto name = prefix + std::to_string(i);
      if (name != victim && coordinator.cli({"delete", "job", name}).exit_code != 0) return "";
    }
    nodes_[2]->signal(SIGSTOP);
    return victim;
  }

  // The node other than node-3 that `victim`'s pod runs on, once it does (within `timeout`).
  std::string moved(const std::string& victim, std::chrono::milliseconds timeout) {
    std::string elsewhere;
    eventually(
        [&] {
          elsewhere = running_node(*nodes_[0], victim);
          return !elsewhere.empty() && elsewhere != "node-3";
        },
        timeout);
    return elsewhere != "node-3" ? elsewhere : "";
  }

  // The node a job's Running pod is on, "" if none.
  std::string running_node(const Calderad& at, const std::string& name) {
    auto r = at.cli({"get", "pods", "-o", "json"});
    if (r.exit_code != 0) return "";
    using ptr = json::json_pointer;
    const auto pods = json::parse(r.out);
    for (const auto& p : pods["items"])
      if (p.value(ptr("/metadata/labels/volcano.sh~1job-name"), std::string()) == name &&
          p.value(ptr("/status/phase"), std::string()) == "Running")
        return p.value(ptr("/spec/nodeName"), std::string());
    return "";
  }
};

// A worker cut off from the coordinator (its calderad stopped for 12 s, its pods' supervisors
// running on): its pod runs again on another node within the outage, but only once the first copy
// is dead, and the worker's return changes nothing.
TEST_F(LeaseCluster, ACutOffWorkersPodRunsAgainElsewhereOnlyAfterItsCopyIsDead) {
  auto& coordinator = *nodes_[0];
  std::vector<std::string> jobs;
  for (int i = 0; i < 3; ++i)
    jobs.push_back(marked_job("m" + std::to_string(i), dir_.path() + "/m" + std::to_string(i)));
  const auto victim = cut_off_node3("m", jobs);
  const auto cut = std::chrono::steady_clock::now();
  ASSERT_FALSE(victim.empty()) << coordinator.cli({"get", "pods", "-o", "wide"}).out;
  const auto markers = dir_.path() + "/" + victim;
  const auto elsewhere = moved(victim, 11s);
  const auto took = std::chrono::steady_clock::now() - cut;
  std::this_thread::sleep_until(cut + 12s);
  nodes_[2]->signal(SIGCONT);
  ASSERT_FALSE(elsewhere.empty()) << coordinator.cli({"describe", "job", victim}).out
                                  << coordinator.log();
  // NotReady after 1 s, lease over 4.2 s after the last renewal; and not much later.
  EXPECT_GE(took, 3s) << "replaced before the lease could be over";
  EXPECT_LE(took, 8s);
  auto text = slurp(markers);
  EXPECT_EQ(text.find("overlap"), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
  // Back: it reports the first copy stopped by its lease, which changes nothing.
  EXPECT_TRUE(eventually([&] { return ready_nodes(coordinator).count("node-3") > 0; }, 10s));
  std::this_thread::sleep_for(2s);
  auto job_json = json::parse(coordinator.cli({"get", "job", victim, "-o", "json"}).out);
  EXPECT_EQ(job_json.value(json::json_pointer("/status/retryCount"), 0), 1) << job_json.dump();
  EXPECT_EQ(running_node(coordinator, victim), elsewhere);
  text = slurp(markers);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
}

// A pod with terminationGracePeriodSeconds: 3 whose TERM handler takes 2 s: when its worker is cut
// off, the lease's stop gives it its 3 s (not the 1 s of a pod that sets none), and its
// replacement starts only after that, once it has cleaned up and ended.
TEST_F(LeaseCluster, ACutOffWorkersPodHasItsOwnGracePeriodBeforeItsReplacementStarts) {
  auto& coordinator = *nodes_[0];
  std::vector<std::string> jobs;
  for (int i = 0; i < 3; ++i) {
    const auto markers = dir_.path() + "/g" + std::to_string(i);
    auto yaml = marked_job("g" + std::to_string(i), markers,
                           "echo term $$ >> " + markers + "; sleep 2; echo clean $$ >> " + markers);
    const std::string spec = "        spec:\n";
    yaml.replace(yaml.find(spec), spec.size(),
                 spec + "          terminationGracePeriodSeconds: 3\n");
    jobs.push_back(yaml);
  }
  const auto victim = cut_off_node3("g", jobs);
  const auto cut = std::chrono::steady_clock::now();
  ASSERT_FALSE(victim.empty()) << coordinator.cli({"get", "pods", "-o", "wide"}).out;
  const auto markers = dir_.path() + "/" + victim;
  const auto elsewhere = moved(victim, 15s);
  const auto took = std::chrono::steady_clock::now() - cut;
  nodes_[2]->signal(SIGCONT);
  ASSERT_FALSE(elsewhere.empty()) << coordinator.cli({"describe", "job", victim}).out
                                  << coordinator.log();
  // The lease is over 3.23 s after the last renewal (at most 250 ms before the cut), and the pod's
  // 3 s follow.
  EXPECT_GE(took, 5500ms) << "replaced before its grace period could be over";
  ASSERT_TRUE(eventually([&] {
    const auto text = slurp(markers);
    return std::count(text.begin(), text.end(), '\n') >= 4;
  }));
  const auto text = slurp(markers);
  EXPECT_EQ(text.find("overlap"), std::string::npos) << text;
  std::istringstream lines(text);
  std::vector<std::string> words;
  for (std::string w, pid; lines >> w >> pid;) words.push_back(w);
  EXPECT_EQ(words, (std::vector<std::string>{"start", "term", "clean", "start"})) << text;
}

// A worker restarted on a config of its own that gives it 16 cpus (the cluster's says 2): the
// coordinator keeps the cluster config's figure, says what the node presented, and a pod that
// only the node's claim would fit is refused.
TEST_F(Cluster, AWorkerClaimingMoreThanTheConfigIsNotBelieved) {
  auto& coordinator = *nodes_[0];
  auto own = config_yaml(specs_, dir_.path(), "", kLiveness);
  const std::string two = "resources: {cpu: 2, memory: 4Gi, pods: 20}";
  auto at = own.rfind(two);  // node-3's entry is the last
  ASSERT_NE(at, std::string::npos);
  own.replace(at, two.size(), "resources: {cpu: 16, memory: 4Gi, pods: 20}");
  auto own_path = write_file(dir_.path(), "own.yaml", own);
  nodes_[2]->kill9();
  nodes_[2] = std::make_unique<Calderad>(
      dir_.path() + "/node-3", std::vector<std::string>{"--config", own_path, "--node", "node-3"});
  nodes_[2]->start();
  json node3;
  ASSERT_TRUE(eventually(
      [&] {
        auto r = coordinator.cli({"get", "nodes", "-o", "json"});
        if (r.exit_code != 0) return false;
        const auto nodes = json::parse(r.out);
        for (const auto& n : nodes["items"])
          if (n["metadata"]["name"] == "node-3" && n["status"].contains("presented")) node3 = n;
        return !node3.is_null() && node3["status"]["conditions"][0]["status"] == "True";
      },
      20s))
      << coordinator.cli({"get", "nodes", "-o", "json"}).out;
  EXPECT_EQ(node3["status"]["capacity"]["cpu"], "2") << node3.dump();
  EXPECT_EQ(node3["status"]["presented"]["cpu"], "16") << node3.dump();
  // The config names no ephemeral-storage: the node's own data dir's file system is offered.
  EXPECT_EQ(node3["status"]["capacity"].value("ephemeral-storage", ""),
            node3["status"]["presented"].value("ephemeral-storage", "?"))
      << node3.dump();
  auto wide = coordinator.cli({"get", "nodes", "-o", "wide"}).out;
  EXPECT_NE(wide.find("cpu=16"), std::string::npos) << wide;
  EXPECT_NE(coordinator.log().find("node=node-3 presents"), std::string::npos);
  // Admission checks a pod against the nodes' resources, the config's: it fits none.
  auto big = coordinator.cli({"submit", "-f", "-"}, job("big", 1, "12", "true"));
  EXPECT_NE(big.exit_code, 0);
  EXPECT_NE(big.err.find("cpu"), std::string::npos) << big.err;
}

// Leases of 6 s renewed every 250 ms: a worker rides out a coordinator's pause of up to about
// 5.5 s, with room for a loaded machine's late heartbeats (the default 5 s and 500 ms leave
// about 4.5 s, which a busy CI machine eats into).
class PauseCluster : public Cluster {
 protected:
  void SetUp() override {
    start_cluster("", "  heartbeatInterval: 250ms\n  heartbeatTimeout: 2s\n  leaseTimeout: 6s\n");
  }
};

// The coordinator stopped for 4 s (less than the lease): nothing is evicted, no job restarts,
// and it says why it judged nobody.
TEST_F(PauseCluster, ACoordinatorPausedForFourSecondsEvictsNothing) {
  auto& coordinator = *nodes_[0];
  std::string all;
  for (int i = 0; i < 3; ++i)
    all += job("p" + std::to_string(i), 1, "2", "sleep 60") +
           "  policies: [{event: PodEvicted, action: RestartJob}]\n---\n";
  ASSERT_EQ(coordinator.cli({"submit", "-f", "-"}, all).exit_code, 0);
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(
        coordinator
            .cli({"wait", "job", "p" + std::to_string(i), "--for=phase=Running", "--timeout=30s"})
            .exit_code,
        0);
  coordinator.signal(SIGSTOP);
  std::this_thread::sleep_for(4s);
  coordinator.signal(SIGCONT);
  // Long enough for any verdict: a heartbeat timeout, and the lease after the pause.
  std::this_thread::sleep_for(6s);
  EXPECT_NE(coordinator.log().find("did not run for"), std::string::npos) << coordinator.log();
  EXPECT_EQ(ready_nodes(coordinator).size(), 3u);
  for (int i = 0; i < 3; ++i) {
    auto j =
        json::parse(coordinator.cli({"get", "job", "p" + std::to_string(i), "-o", "json"}).out);
    EXPECT_EQ(j.value(json::json_pointer("/status/state/phase"), std::string()), "Running")
        << j.dump();
    EXPECT_EQ(j.value(json::json_pointer("/status/retryCount"), 0), 0) << j.dump();
  }
  auto log = coordinator.log();
  EXPECT_EQ(log.find("lost: its lease is over"), std::string::npos) << log;
}

class TokenCluster : public Cluster {
 protected:
  void SetUp() override {}
};

TEST_F(TokenCluster, ANodeWithTheWrongTokenIsRefused) {
  for (int i = 1; i <= 2; ++i)
    specs_.push_back({"node-" + std::to_string(i), free_port(), free_port()});
  auto good =
      write_file(dir_.path(), "good.yaml", config_yaml(specs_, dir_.path(), "s3cret", kLiveness));
  auto bad =
      write_file(dir_.path(), "bad.yaml", config_yaml(specs_, dir_.path(), "guess", kLiveness));
  ::setenv("CALDERA_TOKEN", "s3cret", 1);  // for the CLI
  Calderad coordinator(dir_.path() + "/node-1", {"--config", good, "--node", "node-1"});
  coordinator.start();
  Calderad intruder(dir_.path() + "/node-2", {"--config", bad, "--node", "node-2"});
  intruder.launch();  // it never answers: its coordinator will not have it
  EXPECT_TRUE(eventually(
      [&] { return coordinator.log().find("node=node-2 refused") != std::string::npos; }, 20s))
      << coordinator.log();
  EXPECT_NE(coordinator.log().find("token"), std::string::npos);
  EXPECT_NE(intruder.log().find("refused by the coordinator"), std::string::npos) << intruder.log();
  auto r = coordinator.cli({"get", "nodes", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto items = json::parse(r.out)["items"];
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0]["metadata"]["name"], "node-1");
  EXPECT_EQ(items[0]["status"]["conditions"][0]["status"], "True");
  // The config lists it, so it is shown, never Ready.
  EXPECT_EQ(items[1]["metadata"]["name"], "node-2");
  EXPECT_EQ(items[1]["status"]["conditions"][0]["status"], "False");
  EXPECT_EQ(items[1]["status"]["conditions"][0]["message"], "has not registered");
  ::unsetenv("CALDERA_TOKEN");
}

// Volcano's own examples (example/integrations/mpi, tensorflow, ray; example/jobflow) as a Volcano
// user has them, each command replaced by a stand-in that reads the same files and variables, run
// on three nodes without rewriting a path: pods of one job land on different nodes (each asks
// 1200m of a node's 2 cpus) and read the same host lists at /etc/volcano.
TEST_F(Cluster, VolcanosMpiTensorflowRayAndJobFlowExamplesRunUnchangedOnThreeNodes) {
  auto& c = *nodes_[0];
  auto get_json = [&](std::vector<std::string> args) {
    args.insert(args.end(), {"-o", "json"});
    auto r = c.cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? json::parse(r.out) : json::object();
  };
  const auto nodes = get_json({"get", "nodes"});
  ASSERT_EQ(nodes["items"].size(), 3u);
  for (const auto& n : nodes["items"])
    ASSERT_EQ(n["metadata"]["labels"].value("caldera.io/private-etc", std::string()), "true")
        << "this machine cannot give pods /etc/volcano: " << c.log();
  auto nodes_of = [&](const std::string& job) {
    std::set<std::string> out;
    const auto pods = get_json({"get", "pods", "--job", job});
    for (const auto& p : pods["items"]) out.insert(p["spec"]["nodeName"].get<std::string>());
    return out;
  };
  // Where stand-ins leave a mark for one another, as mpiexec waits for the workers' sshd.
  const std::string marks = dir_.path() + "/marks";
  std::filesystem::create_directories(marks);
  auto logs = [&](const std::string& pod) { return c.cli({"logs", pod}).out; };
  // A stand-in's mark: what it read, then its pod's directory, which is under its node's.
  auto mark = [&](const std::string& name) {
    std::ifstream in(marks + "/" + name);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  auto node_dir = [&](const std::string& text) {
    for (const char* n : {"/node-1/", "/node-2/", "/node-3/"})
      if (text.find(n) != std::string::npos) return std::string(n);
    return std::string("none");
  };
  auto run = [&](const std::string& yaml, const std::string& job) {
    auto r = c.cli({"submit", "-f", "-"}, yaml);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto w = c.cli({"wait", "job", job, "--for=phase=Completed", "--timeout=60s"});
    EXPECT_EQ(w.exit_code, 0) << w.err << c.cli({"describe", "job", job}).out;
  };

  // example/integrations/mpi/mpi-example.yaml: the master reads the workers' hosts where the svc
  // plugin puts them; sshd and mpiexec are stand-ins.
  run(R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: lm-mpi-job
spec:
  minAvailable: 3
  schedulerName: volcano
  plugins:
    ssh: []
    svc: []
  tasks:
    - replicas: 1
      name: mpimaster
      policies:
        - event: TaskCompleted
          action: CompleteJob
      template:
        spec:
          containers:
            - command:
                - /bin/sh
                - -c
                - |
                  until [ -e )" +
          marks + R"(/mpi-0 ] && [ -e )" + marks + R"(/mpi-1 ]; do sleep 0.1; done;
                  MPI_HOST=`cat /etc/volcano/mpiworker.host | tr "\n" ","`;
                  echo mpiexec --allow-run-as-root --host ${MPI_HOST} -np 2 mpi_hello_world;
              image: volcanosh/example-mpi:0.0.3
              name: mpimaster
              ports:
                - containerPort: 22
                  name: mpijob-port
              workingDir: /home
              resources: {requests: {cpu: 1200m}}
          restartPolicy: OnFailure
    - replicas: 2
      name: mpiworker
      template:
        spec:
          containers:
            - command:
                - /bin/sh
                - -c
                - |
                  M=)" +
          marks +
          R"(/mpi-$VK_TASK_INDEX; { cat /etc/volcano/mpiworker.host; echo $VC_POD_DIR; } > $M.new; mv $M.new $M; exec sleep 60
              image: volcanosh/example-mpi:0.0.3
              name: mpiworker
              ports:
                - containerPort: 22
                  name: mpijob-port
              workingDir: /home
              resources: {requests: {cpu: 1200m}}
          restartPolicy: OnFailure
)",
      "lm-mpi-job");
  EXPECT_EQ(logs("lm-mpi-job-mpimaster-0"),
            "mpiexec --allow-run-as-root --host 127.0.0.1,127.0.0.1, -np 2 mpi_hello_world\n");
  // The workers (stopped by CompleteJob, and gone as Volcano's are) read the same list.
  const auto w0 = mark("mpi-0"), w1 = mark("mpi-1");
  EXPECT_EQ(w0.substr(0, 20), "127.0.0.1\n127.0.0.1\n") << w0;
  EXPECT_EQ(w1.substr(0, 20), "127.0.0.1\n127.0.0.1\n") << w1;
  std::string master_node = "none";
  const auto mpi_pods = get_json({"get", "pods", "--job", "lm-mpi-job"});
  for (const auto& p : mpi_pods["items"])
    if (p["metadata"]["name"] == "lm-mpi-job-mpimaster-0")
      master_node = "/" + p["spec"]["nodeName"].get<std::string>() + "/";
  EXPECT_EQ((std::set<std::string>{master_node, node_dir(w0), node_dir(w1)}).size(), 3u)
      << "one pod per node: " << master_node << w0 << w1;

  // example/integrations/tensorflow/tf-example.yaml: ps and workers build their host lists from
  // /etc/volcano/*.host; the benchmark is a stand-in.
  const std::string tf_task = R"(
              image: volcanosh/example-tf:0.0.1
              name: tensorflow
              ports:
                - containerPort: 2222
                  name: tfjob-port
              resources: {requests: {cpu: 1200m}}
          restartPolicy: OnFailure
)";
  const std::string hosts =
      R"(                  PS_HOST=`cat /etc/volcano/ps.host | sed 's/$/&:2222/g' | tr "\n" ","`;
                  WORKER_HOST=`cat /etc/volcano/worker.host | sed 's/$/&:2222/g' | tr "\n" ","`;
)";
  run(R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: tensorflow-benchmark
spec:
  minAvailable: 3
  schedulerName: kube-batch
  plugins:
    env: []
    svc: []
  policies:
    - event: PodEvicted
      action: RestartJob
  tasks:
    - replicas: 1
      name: ps
      template:
        spec:
          imagePullSecrets:
            - name: default-secret
          containers:
            - command:
                - sh
                - -c
                - |
)" + hosts +
          R"(                  echo --job_name=ps --task_index=${VK_TASK_INDEX} --ps_hosts=${PS_HOST} --worker_hosts=${WORKER_HOST} > )" +
          marks + R"(/tf.new; mv )" + marks + R"(/tf.new )" + marks + R"(/tf-ps; exec sleep 60)" +
          tf_task + R"(    - replicas: 2
      name: worker
      policies:
        - event: TaskCompleted
          action: CompleteJob
      template:
        spec:
          imagePullSecrets:
            - name: default-secret
          containers:
            - command:
                - sh
                - -c
                - |
)" + hosts +
          R"(                  until [ -e )" + marks +
          R"(/tf-ps ]; do sleep 0.1; done; echo --job_name=worker --task_index=${VK_TASK_INDEX} --ps_hosts=${PS_HOST} --worker_hosts=${WORKER_HOST})" +
          tf_task,
      "tensorflow-benchmark");
  EXPECT_EQ(nodes_of("tensorflow-benchmark").size(), 2u)
      << "the workers; the ps went with CompleteJob";
  EXPECT_EQ(logs("tensorflow-benchmark-worker-1"),
            "--job_name=worker --task_index=1 --ps_hosts=127.0.0.1:2222, "
            "--worker_hosts=127.0.0.1:2222,127.0.0.1:2222,\n");
  EXPECT_EQ(mark("tf-ps"),
            "--job_name=ps --task_index=0 --ps_hosts=127.0.0.1:2222, "
            "--worker_hosts=127.0.0.1:2222,127.0.0.1:2222,\n");

  // example/integrations/ray/ray-example.yaml: no command at all, the ray plugin gives it; `ray`
  // is a stand-in first on the containers' PATH.
  const std::string bin = dir_.path() + "/bin";
  std::filesystem::create_directories(bin);
  write_file(bin, "ray", "#!/bin/sh\necho ray \"$@\"\n");
  std::filesystem::permissions(bin + "/ray", std::filesystem::perms::owner_all);
  const std::string ray_env = "              env: [{name: PATH, value: \"" + bin +
                              ":/usr/bin:/bin\"}]\n              resources: {requests: {cpu: "
                              "1200m}}\n";
  run(R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: ray-cluster-job
spec:
  minAvailable: 3
  schedulerName: volcano
  plugins:
    ray: []
  policies:
    - event: PodEvicted
      action: RestartJob
  queue: default
  tasks:
    - replicas: 1
      name: head
      template:
        spec:
          containers:
            - name: head
              image: bitnami/ray:2.49.0
)" + ray_env +
          R"(          restartPolicy: OnFailure
    - replicas: 2
      name: worker
      template:
        spec:
          containers:
            - name: worker
              image: bitnami/ray:2.49.0
)" + ray_env +
          R"(          restartPolicy: OnFailure
)",
      "ray-cluster-job");
  EXPECT_EQ(nodes_of("ray-cluster-job").size(), 3u);
  EXPECT_EQ(logs("ray-cluster-job-head-0"),
            "ray start --head --block --dashboard-host=0.0.0.0 --port=6379 --dashboard-port=8265 "
            "--ray-client-server-port=10001\n");
  EXPECT_EQ(logs("ray-cluster-job-worker-1"), "ray start --block --address=127.0.0.1:6379\n");

  // example/jobflow: five templates (the PriorityClass they name, as a cluster has it) and the
  // flow a -> b -> (c, d) -> e.
  std::string templates =
      "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high-priority}\n"
      "value: 1000\n";
  for (const char* name : {"a", "b", "c", "d", "e"})
    templates += std::string(
                     "---\napiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate\n"
                     "metadata:\n  name: ") +
                 name + R"(
spec:
  minAvailable: 1
  schedulerName: volcano
  priorityClassName: high-priority
  policies:
    - event: PodEvicted
      action: RestartJob
  plugins:
    ssh: []
    env: []
    svc: []
  maxRetry: 5
  queue: default
  tasks:
    - replicas: 1
      name: "default-nginx"
      template:
        metadata:
          name: web
        spec:
          containers:
            - image: nginx:1.14.2
              command:
                - sh
                - -c
                - sleep 0.2s
              imagePullPolicy: IfNotPresent
              name: nginx
              resources:
                requests:
                  cpu: "1"
          restartPolicy: OnFailure
)";
  ASSERT_EQ(c.cli({"submit", "-f", "-"}, templates).exit_code, 0);
  ASSERT_EQ(c.cli({"submit", "-f", "-"}, R"(apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata:
  name: test
  namespace: default
spec:
  jobRetainPolicy: delete   # After jobflow runs, keep the generated job. Otherwise, delete it.
  flows:
    - name: a
      maxRetry: 5           # When the maxRetry defined, use this maxRetry count for JobFlowTemplate
    - name: b
      maxRetry: 2
      dependsOn:
        targets: ['a']
    - name: c
      dependsOn:
        targets: ['b']
    - name: d
      dependsOn:
        targets: ['b']
    - name: e
      dependsOn:
        targets: ['c','d']
)")
                .exit_code,
            0);
  auto w = c.cli({"wait", "jobflow", "test", "--for=phase=Succeed", "--timeout=60s"});
  EXPECT_EQ(w.exit_code, 0) << w.err << c.cli({"get", "jobflow", "test", "-o", "yaml"}).out;
}

}  // namespace
}  // namespace caldera::testing
