// Job plugins: what svc, pytorch and mpi give each pod.
#include <gtest/gtest.h>

#include "actors/job/core/plugins.hpp"
#include "actors/job/core/pod_template.hpp"
#include "tests/unit/job_test_support.hpp"

namespace caldera {
namespace {

using namespace caldera::testing;

std::string env_of(const PluginOutput& out, const std::string& name) {
  for (const auto& e : out.env)
    if (e.name == name) return e.value;
  return "<unset>";
}

// A job whose pods are placed on two nodes: index i on 10.0.0.(i % 2 + 1).
JobModel placed(JobSpec spec) {
  auto c = test_clock();
  auto m = new_job(std::move(spec), "u1", c);
  sync_job(m, c);
  int i = 0;
  for (auto& [name, p] : m.pods) {
    p.node = "n" + std::to_string(i % 2 + 1);
    p.host_ip = "10.0.0." + std::to_string(i % 2 + 1);
    ++i;
  }
  return m;
}

TEST(Plugins, SvcGivesEveryTasksHostsAndCountAsEnvAndFiles) {
  auto spec = spec_with({{"ps", 1}, {"my-worker", 2}});
  spec.plugins = {{"svc", {}}};
  auto m = placed(spec);
  auto out = plugin_output(m.job.spec, m.pods.at("job-ps-0"), m.pods);
  // Pods in name order: job-my-worker-0 (10.0.0.1), job-my-worker-1 (.2), job-ps-0 (.1).
  EXPECT_EQ(env_of(out, "VC_MY_WORKER_HOSTS"), "10.0.0.1,10.0.0.2");
  EXPECT_EQ(env_of(out, "VC_MY_WORKER_NUM"), "2");
  EXPECT_EQ(env_of(out, "VC_PS_HOSTS"), "10.0.0.1");
  EXPECT_EQ(out.files.at("volcano/my-worker.host"), "10.0.0.1\n10.0.0.2\n");
  EXPECT_EQ(out.files.at("volcano/ps.host"), "10.0.0.1\n");
}

TEST(Plugins, UnplacedPodsAreNamedInsteadOfAddressed) {
  auto spec = spec_with({{"w", 2}});
  spec.plugins = {{"svc", {}}};
  auto c = test_clock();
  auto m = new_job(spec, "u1", c);
  sync_job(m, c);
  auto out = plugin_output(m.job.spec, m.pods.at("job-w-0"), m.pods);
  EXPECT_EQ(env_of(out, "VC_W_HOSTS"), "job-w-0,job-w-1");
}

TEST(Plugins, PytorchGivesDistinctRanksAndOneMaster) {
  auto spec = spec_with({{"master", 1}, {"worker", 3}});
  spec.plugins = {{"pytorch", {"--master=master", "--worker=worker", "--port=29500"}}};
  auto m = placed(spec);
  std::set<std::string> ranks;
  for (const auto& [name, p] : m.pods) {
    auto out = plugin_output(m.job.spec, p, m.pods);
    EXPECT_EQ(env_of(out, "MASTER_ADDR"), m.pods.at("job-master-0").host_ip) << name;
    EXPECT_EQ(env_of(out, "MASTER_PORT"), "29500");
    EXPECT_EQ(env_of(out, "WORLD_SIZE"), "4");
    ranks.insert(env_of(out, "RANK"));
  }
  EXPECT_EQ(ranks, (std::set<std::string>{"0", "1", "2", "3"}));
  auto master = plugin_output(m.job.spec, m.pods.at("job-master-0"), m.pods);
  EXPECT_EQ(env_of(master, "RANK"), "0");
}

TEST(Plugins, PytorchDefaultsToMasterWorkerAndPort23456) {
  auto spec = spec_with({{"master", 1}, {"worker", 1}});
  spec.plugins = {{"pytorch", {}}};
  auto m = placed(spec);
  auto out = plugin_output(m.job.spec, m.pods.at("job-worker-0"), m.pods);
  EXPECT_EQ(env_of(out, "MASTER_PORT"), "23456");
  EXPECT_EQ(env_of(out, "RANK"), "1");
}

TEST(Plugins, MpiWritesTheWorkersHostfile) {
  auto spec = spec_with({{"mpimaster", 1}, {"mpiworker", 2}});
  spec.plugins = {{"mpi", {"--master=mpimaster", "--worker=mpiworker", "--port=2222"}}};
  auto m = placed(spec);
  auto out = plugin_output(m.job.spec, m.pods.at("job-mpimaster-0"), m.pods);
  // Name order: job-mpimaster-0 on .1, job-mpiworker-0 on .2, job-mpiworker-1 on .1.
  EXPECT_EQ(out.files.at("volcano/mpiworker.host"), "10.0.0.2\n10.0.0.1\n");
  EXPECT_EQ(env_of(out, "MPI_HOST"), "10.0.0.2,10.0.0.1");
  EXPECT_EQ(env_of(out, "OMPI_MCA_orte_default_hostfile"), "$(VC_POD_DIR)/volcano/mpiworker.host");
  // As Volcano's: MPI_HOST for the master task (--master) only; the hostfile for every pod.
  auto worker = plugin_output(m.job.spec, m.pods.at("job-mpiworker-0"), m.pods);
  EXPECT_EQ(env_of(worker, "MPI_HOST"), "<unset>");
  EXPECT_EQ(worker.files.at("volcano/mpiworker.host"), "10.0.0.2\n10.0.0.1\n");
  EXPECT_EQ(env_of(worker, "OMPI_MCA_plm_rsh_args"), "-p 2222");
}

TEST(Plugins, PodRuntimeAddsPluginEnvButTheUsersOwnValueWins) {
  auto spec = spec_with({{"master", 1}, {"worker", 1}});
  spec.plugins = {{"pytorch", {}}};
  Container c;
  c.name = "main";
  c.command = {"true"};
  c.env = {{"MASTER_PORT", "1234"}};
  for (auto& t : spec.tasks) t.template_.containers = {c};
  auto m = placed(spec);
  auto rt = pod_runtime(m.job.spec, m.pods.at("job-worker-0"), m.pods);
  ASSERT_TRUE(rt);
  auto value = [&](const std::string& name) {
    for (const auto& e : rt->containers[0].env)
      if (e.name == name) return e.value;
    return std::string("<unset>");
  };
  EXPECT_EQ(value("MASTER_PORT"), "1234");
  EXPECT_EQ(value("RANK"), "1");
  EXPECT_EQ(value("VC_TASK_INDEX"), "0");
}

TEST(Plugins, WithoutPluginsNothingIsAdded) {
  auto m = placed(spec_with({{"w", 2}}));
  auto out = plugin_output(m.job.spec, m.pods.at("job-w-0"), m.pods);
  EXPECT_TRUE(out.env.empty());
  EXPECT_TRUE(out.files.empty());
}

}  // namespace
}  // namespace caldera

namespace caldera {
namespace {

using namespace caldera::testing;

// Every pod placed on n1 (10.0.0.1) and running, as its node would report.
void place_on_n1_and_run(JobModel& m, const Clock& c) {
  std::map<std::string, Placement> b;
  for (auto& [name, p] : m.pods)
    if (p.node.empty() && !p.out_of_sync) b[p.uid] = {"n1", "10.0.0.1"};
  on_pods_placed(m, b, c);
  std::vector<std::string> names;
  for (auto& [name, p] : m.pods)
    if (p.phase == PodPhase::Pending && !p.node.empty()) names.push_back(name);
  for (const auto& n : names) report(m, n, PodPhase::Running, c);
}

TEST(PluginFiles, RunningPodsGetTheirTasksHostsAgainOnceNewPodsArePlaced) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 2}});
  spec.plugins = {{"svc", {}}};
  auto m = new_job(spec, "u1", c);
  sync_job(m, c);
  place_on_n1_and_run(m, c);
  ASSERT_EQ(m.job.status.running, 2);
  // Scaled to 3: the new pod is made, and once placed the two running pods hear of it.
  m.job.spec.tasks[0].replicas = 3;
  Effects none;
  sync_job(m, c);
  refresh_plugin_files(m, none);
  ASSERT_EQ(none.files.size(), 2u) << "the new index is named until placed";
  EXPECT_EQ(none.files[0].files.at("volcano/w.host"), "10.0.0.1\n10.0.0.1\njob-w-2\n");
  std::map<std::string, Placement> b{{m.pods.at("job-w-2").uid, {"n2", "10.0.0.2"}}};
  auto fx = on_pods_placed(m, b, c);
  ASSERT_EQ(fx.files.size(), 2u) << "job-w-2 itself starts with them";
  for (const auto& f : fx.files) {
    EXPECT_NE(f.uid, m.pods.at("job-w-2").uid);
    EXPECT_EQ(f.node, "n1");
    EXPECT_EQ(f.files.at("volcano/w.host"), "10.0.0.1\n10.0.0.1\n10.0.0.2\n");
  }
  // Nothing changed since: nothing is sent again.
  Effects again;
  refresh_plugin_files(m, again);
  EXPECT_TRUE(again.files.empty());
}

TEST(PluginFiles, AJobWithoutSvcOrMpiHasNoFilesToRefresh) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 2}});
  spec.plugins = {{"env", {}}};
  auto m = new_job(spec, "u1", c);
  sync_job(m, c);
  place_on_n1_and_run(m, c);
  m.job.spec.tasks[0].replicas = 1;
  Effects fx;
  refresh_plugin_files(m, fx);
  EXPECT_TRUE(fx.files.empty());
  EXPECT_TRUE(m.plugin_files.empty());
}

}  // namespace
}  // namespace caldera

namespace caldera {
namespace {

using namespace caldera::testing;

std::string env_in(const PodRuntime& rt, const std::string& name) {
  for (const auto& e : rt.containers[0].env)
    if (e.name == name) return e.value;
  return "<unset>";
}

JobModel placed_on_one(JobSpec spec) {
  auto c = test_clock();
  auto m = new_job(std::move(spec), "u1", c);
  sync_job(m, c);
  for (auto& [name, p] : m.pods) {
    p.node = "n1";
    p.host_ip = "10.0.0.1";
  }
  return m;
}

TEST(Plugins, TensorflowGivesEveryPodTheClusterAndItsOwnRoleWithAPortEach) {
  auto spec = spec_with({{"ps", 1}, {"worker", 2}});
  spec.plugins = {{"tensorflow", {"--port=3000"}}};
  auto m = placed_on_one(spec);
  auto out = plugin_output(m.job.spec, m.pods.at("job-worker-1"), m.pods);
  EXPECT_EQ(env_of(out, "TF_CONFIG"),
            "{\"cluster\":{\"ps\":[\"10.0.0.1:3000\"],\"worker\":[\"10.0.0.1:3001\","
            "\"10.0.0.1:3002\"]},\"task\":{\"type\":\"worker\",\"index\":1}}");
  auto ps = plugin_output(m.job.spec, m.pods.at("job-ps-0"), m.pods);
  EXPECT_NE(env_of(ps, "TF_CONFIG").find("\"task\":{\"type\":\"ps\",\"index\":0}"),
            std::string::npos);
  // A stand-alone job (one task, one pod) gets none, as in Volcano.
  auto alone = spec_with({{"worker", 1}});
  alone.plugins = {{"tensorflow", {}}};
  auto a = placed_on_one(alone);
  EXPECT_EQ(env_of(plugin_output(a.job.spec, a.pods.at("job-worker-0"), a.pods), "TF_CONFIG"),
            "<unset>");
}

TEST(Plugins, TensorflowNamesItsRolesAsTheFlagsSay) {
  auto spec = spec_with({{"boss", 1}, {"w", 1}, {"eval", 1}});
  spec.plugins = {{"tensorflow", {"--chief=boss", "--worker=w", "--evaluator=eval"}}};
  auto m = placed_on_one(spec);
  auto out = env_of(plugin_output(m.job.spec, m.pods.at("job-boss-0"), m.pods), "TF_CONFIG");
  EXPECT_EQ(out,
            "{\"cluster\":{\"worker\":[\"10.0.0.1:2222\"],\"chief\":[\"10.0.0.1:2223\"],"
            "\"evaluator\":[\"10.0.0.1:2224\"]},\"task\":{\"type\":\"chief\",\"index\":0}}");
}

TEST(Plugins, RayStartsTheHeadAndPointsEachWorkerAtIt) {
  auto spec = spec_with({{"head", 1}, {"worker", 2}});
  spec.plugins = {{"ray", {"--port=7000"}}};
  Container head;
  head.name = "head";
  head.command = {"python", "x.py"};
  head.args = {"--flag"};
  Container worker;
  worker.name = "worker";
  spec.tasks[0].template_.containers = {head};
  spec.tasks[1].template_.containers = {worker};
  auto m = placed_on_one(spec);
  auto h = pod_runtime(m.job.spec, m.pods.at("job-head-0"), m.pods);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->containers[0].command,
            (std::vector<std::string>{"sh", "-c",
                                      "ray start --head --block --dashboard-host=0.0.0.0 "
                                      "--port=7000 --dashboard-port=8265 "
                                      "--ray-client-server-port=10001"}));
  EXPECT_TRUE(h->containers[0].args.empty()) << "the plugin's command replaces the template's";
  auto w = pod_runtime(m.job.spec, m.pods.at("job-worker-1"), m.pods);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->containers[0].command,
            (std::vector<std::string>{"sh", "-c", "ray start --block --address=10.0.0.1:7000"}));
  EXPECT_TRUE(plugin_sets_command(m.job.spec, "worker", "worker"));
  EXPECT_FALSE(plugin_sets_command(m.job.spec, "worker", "sidecar"));
}

TEST(Plugins, HcclrankGivesMastersThenWorkersARankAnnotationThatFieldRefsRead) {
  auto spec = spec_with({{"master", 1}, {"worker", 2}});
  spec.plugins = {{"hcclrank", {}}};
  Container c;
  c.name = "main";
  c.command = {"true"};
  c.env = {{"RANK_INDEX", "", "metadata.annotations['hccl/rankIndex']"},
           {"POD", "", "metadata.name"},
           {"HOST", "", "status.hostIP"},
           {"TASK", "", "metadata.labels['volcano.sh/task-spec']"},
           {"NONE", "", "metadata.annotations['absent']"}};
  for (auto& t : spec.tasks) t.template_.containers = {c};
  auto m = placed_on_one(spec);
  std::map<std::string, std::string> ranks;
  for (auto pod : {"job-master-0", "job-worker-0", "job-worker-1"}) {
    auto rt = pod_runtime(m.job.spec, m.pods.at(pod), m.pods);
    ASSERT_TRUE(rt);
    ranks[pod] = env_in(*rt, "RANK_INDEX");
    EXPECT_EQ(env_in(*rt, "POD"), pod);
    EXPECT_EQ(env_in(*rt, "HOST"), "10.0.0.1");
    EXPECT_EQ(env_in(*rt, "NONE"), "") << "a missing key reads empty, as in Kubernetes";
    for (const auto& e : rt->containers[0].env) EXPECT_EQ(e.field_path, "") << e.name;
  }
  EXPECT_EQ(ranks, (std::map<std::string, std::string>{
                       {"job-master-0", "0"}, {"job-worker-0", "1"}, {"job-worker-1", "2"}}));
  auto w = pod_runtime(m.job.spec, m.pods.at("job-worker-1"), m.pods);
  EXPECT_EQ(env_in(*w, "TASK"), "worker");
  // A pod that sets RANK has that rank.
  spec.tasks[1].template_.containers[0].env.push_back({"RANK", "7"});
  auto m2 = placed_on_one(spec);
  auto out = plugin_output(m2.job.spec, m2.pods.at("job-worker-0"), m2.pods);
  EXPECT_EQ(out.annotations.at("hccl/rankIndex"), "7");
}

}  // namespace
}  // namespace caldera

namespace caldera {
namespace {

using namespace caldera::testing;

const SshKeyPair kKeys{"-----BEGIN RSA PRIVATE KEY-----\nk\n-----END RSA PRIVATE KEY-----\n",
                       "ssh-rsa AAAAB3 \n"};

TEST(Plugins, SshGivesEveryPodTheKeysAuthorizedForThemselvesAndAConfigNamingEachPod) {
  auto spec = spec_with({{"master", 1}, {"worker", 2}});
  spec.plugins = {{"ssh", {"--ssh-port=2222"}}};
  auto m = placed(spec);
  auto out = plugin_output(m.job.spec, m.pods.at("job-worker-1"), m.pods, kKeys);
  EXPECT_EQ(out.files.at(".ssh/id_rsa"), kKeys.private_key);
  EXPECT_EQ(out.files.at(".ssh/id_rsa.pub"), kKeys.public_key);
  EXPECT_EQ(out.files.at(".ssh/authorized_keys"), kKeys.public_key);
  // Pods in name order: job-master-0 (10.0.0.1), job-worker-0 (.2), job-worker-1 (.1).
  EXPECT_EQ(out.files.at(".ssh/config"),
            "StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\n"
            "Host job-master-0\n  HostName 10.0.0.1\n  Port 2222\n"
            "Host job-worker-0\n  HostName 10.0.0.2\n  Port 2222\n"
            "Host job-worker-1\n  HostName 10.0.0.1\n  Port 2222\n");
  EXPECT_EQ(out.views, (std::map<std::string, std::string>{{"/root/.ssh", ".ssh"}}));
  // The same for every pod: one Secret in Volcano.
  EXPECT_EQ(plugin_output(m.job.spec, m.pods.at("job-master-0"), m.pods, kKeys).files, out.files);
}

TEST(Plugins, SshShowsTheKeysWhereTheFlagSaysAndPort22ByDefault) {
  auto spec = spec_with({{"w", 1}});
  spec.plugins = {{"ssh", {"--ssh-key-file-path=/home/ann/.ssh"}}, {"svc", {}}};
  auto m = placed(spec);
  auto out = plugin_output(m.job.spec, m.pods.at("job-w-0"), m.pods, kKeys);
  EXPECT_NE(out.files.at(".ssh/config").find("  Port 22\n"), std::string::npos);
  EXPECT_EQ(out.views, (std::map<std::string, std::string>{{"/home/ann/.ssh", ".ssh"},
                                                           {"/etc/volcano", "volcano"}}));
  // Without the job's keys (none made), no ssh files at all.
  auto none = plugin_output(m.job.spec, m.pods.at("job-w-0"), m.pods);
  EXPECT_EQ(none.files.count(".ssh/id_rsa"), 0u);
  auto rt = pod_runtime(m.job.spec, m.pods.at("job-w-0"), m.pods, kKeys);
  ASSERT_TRUE(rt);
  EXPECT_EQ(rt->files.at(".ssh/authorized_keys"), kKeys.public_key);
  EXPECT_EQ(rt->views.at("/home/ann/.ssh"), ".ssh");
}

TEST(PluginFiles, RunningPodsOfAnSshJobGetTheConfigAgainOnceTheirPeersArePlaced) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 2}});
  spec.plugins = {{"ssh", {}}};
  auto m = new_job(spec, "u1", c);
  m.ssh_keys = kKeys;
  sync_job(m, c);
  place_on_n1_and_run(m, c);
  m.job.spec.tasks[0].replicas = 3;
  sync_job(m, c);
  std::map<std::string, Placement> b{{m.pods.at("job-w-2").uid, {"n2", "10.0.0.2"}}};
  auto fx = on_pods_placed(m, b, c);
  ASSERT_EQ(fx.files.size(), 2u);
  for (const auto& f : fx.files) {
    EXPECT_NE(f.files.at(".ssh/config").find("Host job-w-2\n  HostName 10.0.0.2\n"),
              std::string::npos);
    EXPECT_EQ(f.files.at(".ssh/id_rsa"), kKeys.private_key);
  }
}

}  // namespace
}  // namespace caldera
