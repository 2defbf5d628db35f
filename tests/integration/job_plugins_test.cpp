// Plugins and partitions with real processes: what each pod is told, and which pods a
// RestartPartition replaces.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

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

namespace caldera::testing {
namespace {

// An svc job whose pods keep writing how many hosts /etc/volcano/w.host lists (and, for the
// fallback, $VC_POD_DIR/volcano/w.host) into their directory, where the test reads it.
std::string watcher(int replicas, const std::string& file) {
  return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: lists}\nspec:\n"
         "  minAvailable: 2\n  plugins: {svc: []}\n  tasks:\n    - name: w\n      replicas: " +
         std::to_string(replicas) +
         "\n      template:\n        spec:\n          containers:\n            - name: main\n"
         "              command: [sh, -c, 'while true; do wc -l < " +
         file +
         " > $VC_POD_DIR/count.new; mv $VC_POD_DIR/count.new $VC_POD_DIR/count; sleep "
         "0.1; done']\n";
}

// What each running pod of `lists` last counted, by pod name.
std::map<std::string, std::string> counts(Calderad& node, const std::string& data) {
  std::map<std::string, std::string> out;
  auto r = node.cli({"get", "pods", "--job", "lists", "-o", "json"});
  if (r.exit_code != 0) return out;
  const auto pods = json::parse(r.out);  // held: a loop over a temporary's member would dangle
  for (const auto& p : pods["items"]) {
    if (p["status"]["phase"] != "Running") continue;
    std::ifstream in(data + "/pods/" + p["metadata"]["uid"].get<std::string>() + "/count");
    std::string n;
    if (in >> n) out[p["metadata"]["name"]] = n;
  }
  return out;
}

bool all_count(const std::map<std::string, std::string>& c, size_t pods, const std::string& n) {
  if (c.size() != pods) return false;
  for (const auto& [name, value] : c)
    if (value != n) return false;
  return true;
}

TEST_F(JobPlugins, PodsReadTheSvcFilesAtEtcVolcanoAndAScaledJobsRunningPodsSeeTheNewLists) {
  auto nodes = get_json({"get", "nodes"});
  const std::string shows = nodes["items"][0]["metadata"]["labels"].value("caldera.io/private-etc",
                                                                          std::string("missing"));
  // This machine's answer (root with mount namespaces and overlayfs: "true"); the other one is
  // covered by the next test on every machine.
  ASSERT_EQ(shows, "true") << "the node cannot show /etc/volcano here; see its log:\n"
                           << node.log();
  auto created = node.cli({"apply", "-f", "-"}, watcher(2, "/etc/volcano/w.host"));
  ASSERT_EQ(created.exit_code, 0) << created.err;
  EXPECT_EQ(created.err, "") << "no warning where every node shows /etc/volcano";
  std::map<std::string, std::string> c;
  ASSERT_TRUE(eventually([&] { return all_count(c = counts(node, data), 2, "2"); }))
      << ::testing::PrintToString(c) << node.cli({"get", "pods", "-o", "wide"}).out;
  ASSERT_EQ(node.cli({"apply", "-f", "-"}, watcher(4, "/etc/volcano/w.host")).exit_code, 0);
  EXPECT_TRUE(eventually([&] { return all_count(c = counts(node, data), 4, "4"); }))
      << ::testing::PrintToString(c);
  // And back to 2, as the issue asks: the surplus pods go, the others hear of it.
  ASSERT_EQ(node.cli({"apply", "-f", "-"}, watcher(2, "/etc/volcano/w.host")).exit_code, 0);
  EXPECT_TRUE(eventually([&] { return all_count(c = counts(node, data), 2, "2"); }))
      << ::testing::PrintToString(c);
  // The host's own /etc never had it.
  EXPECT_FALSE(std::filesystem::exists("/etc/volcano"));
}

class NoPrivateEtc : public ::testing::Test {
 protected:
  TempDir dir;
  std::string data = dir.path() + "/node";
  Calderad node{data, {"--no-private-etc"}};
  void SetUp() override { node.start(); }
};

TEST_F(NoPrivateEtc, AJobIsToldAtSubmitAndItsPodsFindTheFilesInTheirDirectory) {
  auto created = node.cli({"apply", "-f", "-"}, watcher(2, "$VC_POD_DIR/volcano/w.host"));
  ASSERT_EQ(created.exit_code, 0) << created.err;
  EXPECT_NE(created.err.find("spec.plugins: node local cannot show pods their svc files at "
                             "/etc/volcano (its label caldera.io/private-etc is false): pods "
                             "placed there find them in $VC_POD_DIR/volcano"),
            std::string::npos)
      << created.err;
  std::map<std::string, std::string> c;
  ASSERT_TRUE(eventually([&] { return all_count(c = counts(node, data), 2, "2"); }))
      << ::testing::PrintToString(c);
  ASSERT_EQ(node.cli({"apply", "-f", "-"}, watcher(3, "$VC_POD_DIR/volcano/w.host")).exit_code, 0);
  EXPECT_TRUE(eventually([&] { return all_count(c = counts(node, data), 3, "3"); }))
      << ::testing::PrintToString(c);
}

TEST_F(NoPrivateEtc, AnSshJobIsToldAndItsPodsFindTheirKeysInTheirDirectory) {
  auto created = node.cli({"apply", "-f", "-"}, R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: keys}
spec:
  plugins: {ssh: []}
  tasks:
    - name: w
      replicas: 1
      template: {spec: {containers: [{name: main, command: [sh, -c, 'ssh-keygen -y -f $VC_POD_DIR/.ssh/id_rsa | cmp - $VC_POD_DIR/.ssh/authorized_keys && echo same']}]}}
)");
  ASSERT_EQ(created.exit_code, 0) << created.err;
  EXPECT_NE(created.err.find("cannot show pods their ssh keys at /root/.ssh (its label "
                             "caldera.io/private-etc is false): pods placed there find them in "
                             "$VC_POD_DIR/.ssh"),
            std::string::npos)
      << created.err;
  auto wait = node.cli({"wait", "job", "keys", "--for=phase=Completed", "--timeout=30s"});
  EXPECT_EQ(wait.exit_code, 0) << wait.err << node.cli({"logs", "keys-w-0"}).out;
  EXPECT_EQ(node.cli({"logs", "keys-w-0"}).out, "same\n");
}

}  // namespace
}  // namespace caldera::testing

namespace caldera::testing {
namespace {

class MorePlugins : public JobPlugins {
 protected:
  std::string run_and_log(const std::string& yaml, const std::string& job, const std::string& pod) {
    auto r = node.cli({"submit", "-f", "-"}, yaml);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto wait = node.cli({"wait", "job", job, "--for=phase=Completed", "--timeout=30s"});
    EXPECT_EQ(wait.exit_code, 0) << wait.err << node.cli({"describe", "job", job}).out;
    return node.cli({"logs", pod}).out;
  }
};

TEST_F(MorePlugins, TensorflowTellsEachPodTheClusterAndItsRole) {
  const std::string yaml = R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: tf}
spec:
  minAvailable: 2
  plugins: {tensorflow: ["--ps=ps", "--worker=worker", "--port=2300"], svc: []}
  tasks:
    - name: ps
      replicas: 1
      template: {spec: {containers: [{name: main, command: [sh, -c, 'echo "$TF_CONFIG"']}]}}
    - name: worker
      replicas: 1
      template: {spec: {containers: [{name: main, command: [sh, -c, 'echo "$TF_CONFIG"']}]}}
)";
  auto worker = json::parse(run_and_log(yaml, "tf", "tf-worker-0"));
  EXPECT_EQ(worker["task"], (json{{"type", "worker"}, {"index", 0}}));
  EXPECT_EQ(worker["cluster"]["ps"], json::array({"127.0.0.1:2300"}));
  EXPECT_EQ(worker["cluster"]["worker"], json::array({"127.0.0.1:2301"}));
  auto ps = json::parse(node.cli({"logs", "tf-ps-0"}).out);
  EXPECT_EQ(ps["task"]["type"], "ps");
  EXPECT_EQ(ps["cluster"], worker["cluster"]);
}

TEST_F(MorePlugins, RayStartsItsHeadAndWorkersWithTheHeadsAddress) {
  // A stand-in `ray` that says how it was started, first on the containers' PATH.
  const std::string bin = dir.path() + "/bin";
  std::filesystem::create_directories(bin);
  {
    std::ofstream script(bin + "/ray");
    script << "#!/bin/sh\necho ray \"$@\"\n";
  }
  std::filesystem::permissions(bin + "/ray", std::filesystem::perms::owner_all);
  const std::string yaml = R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: rc}
spec:
  minAvailable: 2
  plugins: {ray: ["--port=6390"], svc: []}
  tasks:
    - name: head
      replicas: 1
      template: {spec: {containers: [{name: head, image: rayproject/ray, env: [{name: PATH, value: ")" +
                           bin + R"(:/usr/bin:/bin"}]}]}}
    - name: worker
      replicas: 1
      template: {spec: {containers: [{name: worker, image: rayproject/ray, env: [{name: PATH, value: ")" +
                           bin + R"(:/usr/bin:/bin"}]}]}}
)";
  EXPECT_EQ(run_and_log(yaml, "rc", "rc-head-0"),
            "ray start --head --block --dashboard-host=0.0.0.0 --port=6390 --dashboard-port=8265 "
            "--ray-client-server-port=10001\n");
  EXPECT_EQ(node.cli({"logs", "rc-worker-0"}).out, "ray start --block --address=127.0.0.1:6390\n");
}

TEST_F(MorePlugins, HcclrankGivesEachPodARankItReadsThroughTheDownwardApi) {
  const std::string yaml = R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: hc}
spec:
  minAvailable: 3
  plugins: {hcclrank: []}
  tasks:
    - name: master
      replicas: 1
      template: &pod
        spec:
          containers:
            - name: main
              command: [sh, -c, 'echo $RANK_INDEX $POD $NODE']
              env:
                - {name: RANK_INDEX, valueFrom: {fieldRef: {fieldPath: "metadata.annotations['hccl/rankIndex']"}}}
                - {name: POD, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
                - {name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
    - name: worker
      replicas: 2
      template: *pod
)";
  EXPECT_EQ(run_and_log(yaml, "hc", "hc-master-0"), "0 hc-master-0 local\n");
  EXPECT_EQ(node.cli({"logs", "hc-worker-0"}).out, "1 hc-worker-0 local\n");
  EXPECT_EQ(node.cli({"logs", "hc-worker-1"}).out, "2 hc-worker-1 local\n");
}

// Each pod of an ssh job: the modes of /root/.ssh and its key, the public half of the key it
// holds (as ssh-keygen reads it), the key it authorizes, and where ssh itself would reach the
// other pod.
std::string ssh_job(const std::string& dir, const std::string& name = "sshj") {
  return R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: )" +
         name + R"(}
spec:
  minAvailable: 2
  plugins: {ssh: ["--ssh-port=2222"], svc: []}
  tasks:
    - name: w
      replicas: 2
      template:
        spec:
          containers:
            - name: main
              command:
                - sh
                - -c
                - |
                  D=)" +
         dir + R"(
                  stat -c %a $D $D/id_rsa
                  ssh-keygen -y -f $D/id_rsa | cut -d' ' -f2
                  cut -d' ' -f2 $D/authorized_keys
                  ssh -G $VC_JOB_NAME-w-$((1 - VC_TASK_INDEX)) 2>/dev/null | grep -E '^(hostname|port) '
)";
}

// The pod's log: the ssh directory's and key's modes, the key twice, then ssh's view of its peer.
void expect_ssh_log(const std::string& log, std::string* key) {
  std::istringstream in(log);
  std::string dir_mode, key_mode, derived, authorized, hostname, port;
  std::getline(in, dir_mode);
  std::getline(in, key_mode);
  std::getline(in, derived);
  std::getline(in, authorized);
  std::getline(in, hostname);
  std::getline(in, port);
  EXPECT_EQ(dir_mode, "700") << log;
  EXPECT_EQ(key_mode, "600") << log;
  EXPECT_GT(derived.size(), 300u) << "an RSA 2048 public key: " << log;
  EXPECT_EQ(derived, authorized) << "the pod authorizes the key it holds: " << log;
  EXPECT_EQ(hostname, "hostname 127.0.0.1") << log;
  EXPECT_EQ(port, "port 2222") << log;
  *key = derived;
}

TEST_F(MorePlugins, SshGivesBothPodsOneKeyPairAtRootSshAndAConfigThatReachesThePeer) {
  const bool had_root_ssh = std::filesystem::exists("/root/.ssh");
  std::string first, second;
  expect_ssh_log(run_and_log(ssh_job("/root/.ssh"), "sshj", "sshj-w-0"), &first);
  expect_ssh_log(node.cli({"logs", "sshj-w-1"}).out, &second);
  EXPECT_EQ(first, second) << "one key pair per job";
  EXPECT_EQ(std::filesystem::exists("/root/.ssh"), had_root_ssh) << "the host's own is untouched";
  // Another job has a pair of its own.
  std::string again;
  expect_ssh_log(run_and_log(ssh_job("/root/.ssh", "other"), "other", "other-w-0"), &again);
  EXPECT_NE(again, first);
}

// A pod of an ssh job writes the key it authorizes into its directory and stays up.
std::string keeper(int replicas) {
  return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: kept}\nspec:\n"
         "  plugins: {ssh: []}\n  tasks:\n    - name: w\n      replicas: " +
         std::to_string(replicas) +
         "\n      template: {spec: {containers: [{name: main, command: [sh, -c, 'cp "
         "/root/.ssh/authorized_keys $VC_POD_DIR/key; sleep 600']}]}}\n";
}

TEST_F(MorePlugins, TheKeysOutliveARestartAPodMadeAfterItGetsTheSamePair) {
  ASSERT_EQ(node.cli({"apply", "-f", "-"}, keeper(1)).exit_code, 0);
  auto key_of = [&](const std::string& pod) {
    auto uid = get_json({"get", "pod", pod, "-o", "json"})["metadata"].value("uid", "");
    std::ifstream in(data + "/pods/" + uid + "/key");
    std::string line;
    std::getline(in, line);
    return line;
  };
  std::string first;
  ASSERT_TRUE(eventually([&] { return !(first = key_of("kept-w-0")).empty(); }));
  node.kill9();
  node.start();
  ASSERT_EQ(node.cli({"apply", "-f", "-"}, keeper(2)).exit_code, 0);
  std::string second;
  ASSERT_TRUE(eventually([&] { return !(second = key_of("kept-w-1")).empty(); }))
      << node.cli({"get", "pods", "-o", "wide"}).out;
  EXPECT_EQ(second, first);
  EXPECT_TRUE(first.starts_with("ssh-rsa ")) << first;
}

}  // namespace
}  // namespace caldera::testing
