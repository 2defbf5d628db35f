// The scheduler conf on real calderad processes: the cluster config names its file, every
// gateway shows the coordinator's with `caldera get schedulerconfig`, and a conf calderad cannot
// run with stops it at start, saying why.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "actors/scheduler/framework/scheduler_conf.hpp"
#include "harness.hpp"

namespace caldera::testing {
namespace {

constexpr const char* kConf = R"(actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
- plugins:
  - name: predicates
  - name: binpack
    arguments:
      binpack.weight: 10
)";

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

sched::SchedulerConf parsed(const std::string& text) {
  Diagnostics diags;
  auto conf = sched::parse_scheduler_conf(text, "", diags);
  EXPECT_TRUE(conf) << text;
  return conf ? *conf : sched::SchedulerConf{};
}

// The CLI's token for the nodes a test starts, and none after it.
class WithToken {
 public:
  explicit WithToken(const char* token) { ::setenv("CALDERA_TOKEN", token, 1); }
  ~WithToken() { ::unsetenv("CALDERA_TOKEN"); }
};

TEST(SchedulerConfig, EveryGatewayShowsTheConfTheClusterConfigNames) {
  TempDir dir;
  write_file(dir.path(), "volcano-scheduler.conf", kConf);
  std::string nodes;
  for (const std::string name : {"n1", "n2"})
    nodes += "  - {name: " + name +
             ", host: 127.0.0.1, clientPort: " + std::to_string(free_port()) +
             ", clusterPort: " + std::to_string(free_port()) + ", dataDir: " + dir.path() + "/" +
             name + ", resources: {cpu: 2, memory: 2Gi, pods: 10}}\n";
  // Relative to the config's directory, not to calderad's working directory.
  auto config = write_file(dir.path(), "cluster.yaml",
                           "cluster: {name: sc, coordinator: n1, token: s3cret, scheduler: "
                           "volcano-scheduler.conf}\nnodes:\n" +
                               nodes);
  WithToken token("s3cret");
  Calderad coordinator(dir.path() + "/n1", {"--config", config, "--node", "n1"});
  Calderad worker(dir.path() + "/n2", {"--config", config, "--node", "n2"});
  coordinator.start();
  worker.start();

  auto shown = coordinator.cli({"get", "schedulerconfig"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  for (const char* part : {"actions: \"enqueue, allocate, backfill\"", "  - name: priority",
                           "  - name: gang\n    enablePreemptable: false", "  - name: predicates",
                           "  - name: binpack\n    arguments:\n      binpack.weight: 10"})
    EXPECT_TRUE(contains(shown.out, part)) << part << " in:\n" << shown.out;
  EXPECT_EQ(parsed(shown.out), parsed(kConf));

  // A worker's gateway passes the request on to the coordinator, as every other one.
  auto from_worker = worker.cli({"get", "schedulerconf", "-o", "yaml"});
  ASSERT_EQ(from_worker.exit_code, 0) << from_worker.err;
  EXPECT_EQ(from_worker.out, shown.out);

  auto wrong = coordinator.cli({"get", "schedulerconfig", "--token", "guess"});
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_TRUE(contains(wrong.err, "token")) << wrong.err;
  EXPECT_TRUE(wrong.out.empty()) << wrong.out;
}

TEST(SchedulerConfig, TheEmbeddedNodeShowsTheDefaultOrTheConfItsFlagNames) {
  TempDir dir;
  Calderad plain(dir.path() + "/plain");
  plain.start();
  auto shown = plain.cli({"get", "schedulerconfig"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_EQ(shown.out, sched::scheduler_conf_yaml(sched::default_scheduler_conf()));
  plain.stop();

  // Kept as Volcano users keep it: the scheduler's ConfigMap.
  std::string config_map =
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: volcano-scheduler-configmap}\n"
      "data:\n  volcano-scheduler.conf: |\n";
  for (std::string_view rest = kConf; !rest.empty();) {
    auto nl = rest.find('\n');
    config_map += "    " + std::string(rest.substr(0, nl)) + "\n";
    rest.remove_prefix(nl + 1);
  }
  auto file = write_file(dir.path(), "scheduler-configmap.yaml", config_map);
  Calderad flagged(dir.path() + "/flagged", {"--scheduler-conf", file});
  flagged.start();
  shown = flagged.cli({"get", "schedulerconfig"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_EQ(parsed(shown.out), parsed(kConf));
}

TEST(SchedulerConfig, CalderadRefusesToStartWithAConfItCannotRun) {
  TempDir dir;
  auto bad = write_file(dir.path(), "bad.conf",
                        "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: gang\n  - "
                        "name: tdm\n");
  const std::string known =
      "\"tdm\" is not a plugin caldera's scheduler has; known: priority, gang, conformance, "
      "overcommit, drf, proportion, predicates, nodeorder, binpack";
  auto config =
      write_file(dir.path(), "cluster.yaml",
                 "cluster: {name: sc, scheduler: bad.conf}\nnodes: [{name: n, "
                 "clientPort: " +
                     std::to_string(free_port()) + ", clusterPort: " + std::to_string(free_port()) +
                     ", dataDir: " + dir.path() + "/n}]\n");
  auto refused = run({CALDERAD_PATH, "--config", config});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_TRUE(contains(refused.err, "cluster.scheduler.tiers[0].plugins[1].name: " + known))
      << refused.err;

  auto flag = run({CALDERAD_PATH, "--data-dir", dir.path() + "/embedded", "--port", "0",
                   "--cluster-port", "0", "--scheduler-conf", bad});
  EXPECT_NE(flag.exit_code, 0);
  EXPECT_TRUE(contains(flag.err, bad + ": tiers[0].plugins[1].name: " + known)) << flag.err;

  auto missing = run({CALDERAD_PATH, "--data-dir", dir.path() + "/embedded", "--port", "0",
                      "--cluster-port", "0", "--scheduler-conf", dir.path() + "/none.conf"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_TRUE(contains(missing.err, "cannot read the scheduler conf " + dir.path() + "/none.conf"))
      << missing.err;

  // A config's node takes its conf from the config.
  auto good = write_file(dir.path(), "good.yaml", "nodes: [{name: n}]\n");
  auto both = run({CALDERAD_PATH, "--config", good, "--scheduler-conf", bad});
  EXPECT_NE(both.exit_code, 0);
  EXPECT_TRUE(contains(both.err, "set cluster.scheduler")) << both.err;
}

// A one-node cluster of two cpus whose scheduler runs `actions` (with the default plugins): low's
// two pods of one cpu fill it, then a job of a higher PriorityClass asks for one.
class Preemption {
 public:
  Preemption(const TempDir& dir, const std::string& name, const std::string& actions) {
    write_file(dir.path(), name + ".conf",
               "actions: \"" + actions +
                   "\"\ntiers:\n- plugins: [{name: priority}, {name: gang}, {name: conformance}]\n"
                   "- plugins: [{name: overcommit}, {name: drf}, {name: predicates}, "
                   "{name: proportion}, {name: nodeorder}]\n");
    auto config = write_file(
        dir.path(), name + ".yaml",
        "cluster: {name: " + name + ", coordinator: n1, scheduler: " + name +
            ".conf}\nnodes:\n  - {name: n1, host: 127.0.0.1, clientPort: " +
            std::to_string(free_port()) + ", clusterPort: " + std::to_string(free_port()) +
            ", dataDir: " + dir.path() + "/" + name + ", resources: {cpu: 2, pods: 10}}\n");
    node_ = std::make_unique<Calderad>(
        dir.path() + "/" + name, std::vector<std::string>{"--config", config, "--node", "n1"});
    node_->start();
    auto low = job("low", 2, 1, "low", "exec sleep 600");
    EXPECT_EQ(node_->cli({"submit", "-f", "-"}, classes() + low).exit_code, 0);
    EXPECT_TRUE(eventually([&] { return running("low") == 2; }))
        << node_->cli({"get", "pods", "--job", "low", "-o", "json"}).out << describe("low");
    EXPECT_EQ(node_->cli({"submit", "-f", "-"}, job("high", 1, 1, "high", "exec true")).exit_code,
              0);
  }
  static std::string classes() {
    return "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\nvalue: "
           "1\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: "
           "high}\nvalue: 100\n---\n";
  }
  static std::string job(const std::string& name, int replicas, int min, const std::string& klass,
                         const std::string& script) {
    return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: " + name +
           "}\nspec:\n  minAvailable: " + std::to_string(min) + "\n  priorityClassName: " + klass +
           "\n  tasks:\n    - name: w\n      replicas: " + std::to_string(replicas) +
           "\n      template:\n        spec:\n          containers:\n            - name: main\n"
           "              command: [sh, -c, \"" +
           script + "\"]\n              resources: {requests: {cpu: 1}}\n";
  }
  int running(const std::string& job) const {
    auto r = node_->cli({"get", "pods", "--job", job, "-o", "json"});
    if (r.exit_code != 0) return -1;
    const auto pods = nlohmann::json::parse(r.out);  // kept: the loop reads into it
    int n = 0;
    for (const auto& p : pods["items"]) n += p["status"]["phase"] == "Running";
    return n;
  }
  std::string phase(const std::string& job) const {
    auto r = node_->cli({"get", "job", job, "-o", "json"});
    return r.exit_code == 0 ? nlohmann::json::parse(r.out)["status"]["state"].value("phase", "")
                            : "";
  }
  std::string describe(const std::string& job) const {
    return node_->cli({"describe", "job", job}).out;
  }
  Calderad& node() { return *node_; }

 private:
  std::unique_ptr<Calderad> node_;
};

TEST(SchedulerConfig, WithoutThePreemptActionAHigherClassWaitsForRoomAndEvictsNothing) {
  TempDir dir;
  Preemption c(dir, "nopreempt", "enqueue, allocate, backfill");
  // A session has looked at high and left it waiting for room: it says so, and low runs on.
  ASSERT_TRUE(eventually([&] {
    return c.describe("high").find("tasks in gang unschedulable") != std::string::npos;
  })) << c.describe("high");
  EXPECT_EQ(c.running("low"), 2);
  EXPECT_EQ(c.node().log().find("preempted by"), std::string::npos) << c.node().log();
  // Its room comes when low goes, not before.
  ASSERT_EQ(c.node().cli({"delete", "job", "low"}).exit_code, 0);
  EXPECT_TRUE(eventually([&] { return c.phase("high") == "Completed"; })) << c.describe("high");
  EXPECT_EQ(c.node().log().find("preempted by"), std::string::npos) << c.node().log();
}

TEST(SchedulerConfig, WithThePreemptActionAndThePriorityPluginAHigherClassEvicts) {
  TempDir dir;
  Preemption c(dir, "preempt", "enqueue, allocate, preempt, backfill");
  EXPECT_TRUE(eventually([&] { return c.phase("high") == "Completed"; })) << c.describe("high");
  const auto log = c.node().log();
  EXPECT_NE(log.find("preempted by job=default/high"), std::string::npos) << log;
  EXPECT_NE(c.describe("low").find("preempted by job default/high of higher priority"),
            std::string::npos)
      << c.describe("low");
}

}  // namespace
}  // namespace caldera::testing
