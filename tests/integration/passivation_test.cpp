// Settled jobs have no actor (passivation): a real calderad reads them from its store for every
// read path, wakes one for what needs it (a command, a delete), and a restart recreates only the
// live ones. The node's Prometheus endpoint tells how many job actors exist.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "harness.hpp"

namespace caldera::testing {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

std::string job_yaml(const std::string& name, const std::string& script) {
  return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: " + name +
         "}\nspec:\n  tasks:\n    - name: main\n      replicas: 1\n      template:\n" +
         "        spec: {containers: [{name: main, command: [sh, -c, \"" + script + "\"]}]}\n";
}

// A node with its metrics port, and what the port says.
struct MeteredNode {
  TempDir dir;
  int port = free_port();
  Calderad node{dir.path() + "/node", {"--metrics-port", std::to_string(port)}};

  // The value of the unlabelled series `name`, or -1 when the port does not show it.
  double metric(const std::string& name) const {
    auto r = run({"curl", "-sf", "http://127.0.0.1:" + std::to_string(port) + "/metrics"});
    auto at = r.out.find("\n" + name + " ");
    if (r.exit_code != 0 || at == std::string::npos) return -1;
    return std::stod(r.out.substr(at + name.size() + 2));
  }
  bool metric_is(const std::string& name, double want) const {
    return eventually([&] { return metric(name) == want; });
  }
  // The phase of the job (or, with kind "jobflow", the flow) `name`, or what went wrong.
  std::string phase(const std::string& name, const char* kind = "job") const {
    auto r = node.cli({"get", kind, name, "-o", "json"});
    if (r.exit_code != 0) return "error: " + r.err;
    return json::parse(r.out)["status"]["state"]["phase"];
  }
};

TEST(Passivation, ASettledJobHasNoActorAndEveryReadFindsItInTheStore) {
  MeteredNode m;
  auto& node = m.node;
  node.start();
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, job_yaml("done", "echo hello")).exit_code, 0);
  ASSERT_EQ(node.cli({"wait", "job", "done", "--for=phase=Completed", "--timeout=30s"}).exit_code,
            0);
  ASSERT_TRUE(m.metric_is("caldera_jobs_passivated_total", 1)) << node.log();
  EXPECT_EQ(m.metric("caldera_job_actors"), 0);

  EXPECT_EQ(m.phase("done"), "Completed");
  auto table = node.cli({"get", "jobs"});
  EXPECT_NE(table.out.find("done"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("Completed"), std::string::npos) << table.out;
  auto jobs = json::parse(node.cli({"get", "jobs", "-o", "json"}).out);
  const auto& items = jobs["items"];
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0]["spec"]["tasks"].size(), 1u);  // the whole job, spec included
  auto yaml = node.cli({"get", "job", "done", "-o", "yaml"});
  EXPECT_NE(yaml.out.find("phase: Completed"), std::string::npos) << yaml.out;
  auto described = node.cli({"describe", "job", "done"});
  EXPECT_EQ(described.exit_code, 0) << described.err;
  EXPECT_NE(described.out.find("done-main-0"), std::string::npos) << described.out;
  auto pods = json::parse(node.cli({"get", "pods", "--job", "done", "-o", "json"}).out);
  const auto& pod_items = pods["items"];
  ASSERT_EQ(pod_items.size(), 1u);
  EXPECT_EQ(pod_items[0]["status"]["phase"], "Succeeded");
  EXPECT_NE(node.cli({"get", "pods", "-A"}).out.find("done-main-0"), std::string::npos);
  EXPECT_EQ(node.cli({"describe", "pod", "done-main-0"}).exit_code, 0);
  EXPECT_EQ(node.cli({"logs", "done-main-0"}).out, "hello\n");
  // A watch (wait) lists it from the store too.
  EXPECT_EQ(node.cli({"wait", "job", "done", "--for=phase=Completed", "--timeout=5s"}).exit_code,
            0);
  // Its name is taken, as long as it exists.
  auto again = node.cli({"submit", "-f", "-"}, job_yaml("done", "true"));
  EXPECT_NE(again.exit_code, 0);
  EXPECT_NE(again.err.find("already exists"), std::string::npos) << again.err;
  EXPECT_EQ(m.metric("caldera_jobs_woken_total"), 0);  // reads wake nothing

  // A delete wakes it, and it goes with its pods' directories (logs and all).
  auto deleted = node.cli({"delete", "job", "done"});
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  EXPECT_NE(m.phase("done").find("not found"), std::string::npos);
  EXPECT_EQ(m.metric("caldera_jobs_woken_total"), 1);
  EXPECT_TRUE(m.metric_is("caldera_job_actors", 0));
  EXPECT_TRUE(eventually([&] { return fs::is_empty(m.dir.path() + "/node/pods"); }));
  EXPECT_EQ(node.cli({"submit", "-f", "-"}, job_yaml("done", "true")).exit_code, 0);
}

TEST(Passivation, ACommandWakesASettledJobAndARefusedOneLeavesItSettled) {
  MeteredNode m;
  auto& node = m.node;
  node.start();
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, job_yaml("paused", "sleep 600")).exit_code, 0);
  ASSERT_EQ(node.cli({"wait", "job", "paused", "--for=phase=Running", "--timeout=30s"}).exit_code,
            0);
  ASSERT_EQ(node.cli({"abort", "job", "paused"}).exit_code, 0);
  ASSERT_EQ(node.cli({"wait", "job", "paused", "--for=phase=Aborted", "--timeout=30s"}).exit_code,
            0);
  ASSERT_TRUE(m.metric_is("caldera_job_actors", 0)) << node.log();

  auto resumed = node.cli({"resume", "job", "paused"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(m.metric("caldera_jobs_woken_total"), 1);
  EXPECT_EQ(node.cli({"wait", "job", "paused", "--for=phase=Running", "--timeout=30s"}).exit_code,
            0)
      << node.log();
  EXPECT_EQ(m.metric("caldera_job_actors"), 1);

  // A command its phase ignores is refused as before, and the job settles again.
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, job_yaml("quick", "true")).exit_code, 0);
  ASSERT_EQ(node.cli({"wait", "job", "quick", "--for=phase=Completed", "--timeout=30s"}).exit_code,
            0);
  ASSERT_TRUE(m.metric_is("caldera_jobs_passivated_total", 2));
  auto refused = node.cli({"abort", "job", "quick"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_EQ(m.metric("caldera_jobs_woken_total"), 2);
  EXPECT_TRUE(m.metric_is("caldera_jobs_passivated_total", 3));
  EXPECT_EQ(m.phase("quick"), "Completed");
}

TEST(Passivation, ARestartRecreatesOnlyTheLiveJobsAndFindsTheOthersOnDemand) {
  MeteredNode m;
  auto& node = m.node;
  node.start();
  std::string many;
  for (int i = 0; i < 20; ++i)
    many += "---\n" + job_yaml("fin-" + std::to_string(i), "echo " + std::to_string(i));
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, many).exit_code, 0);
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, job_yaml("long", "sleep 600")).exit_code, 0);
  for (int i = 0; i < 20; ++i)
    ASSERT_EQ(node.cli({"wait", "job", "fin-" + std::to_string(i), "--for=phase=Completed",
                        "--timeout=30s"})
                  .exit_code,
              0);
  ASSERT_EQ(node.cli({"wait", "job", "long", "--for=phase=Running", "--timeout=30s"}).exit_code, 0);
  ASSERT_TRUE(m.metric_is("caldera_job_actors", 1)) << node.log();

  node.kill9();
  node.start();
  // Only the running job has an actor again: the first scrape says so.
  double actors = -1;
  ASSERT_TRUE(eventually([&] { return (actors = m.metric("caldera_job_actors")) >= 0; }));
  EXPECT_EQ(actors, 1);
  EXPECT_NE(node.log().find("coordinator recovered jobs=1"), std::string::npos) << node.log();
  auto table = node.cli({"get", "jobs"});
  EXPECT_NE(table.out.find("fin-0 "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("fin-19 "), std::string::npos) << table.out;
  EXPECT_EQ(m.phase("fin-7"), "Completed");
  EXPECT_EQ(m.phase("long"), "Running");
  EXPECT_EQ(node.cli({"logs", "fin-3-main-0"}).out, "3\n");
  // The node registered again with its ended pods: acknowledged from the store, nothing woken.
  ASSERT_TRUE(eventually([&] {
    return node.cli({"get", "nodes"}).out.find("Ready") != std::string::npos;
  }));
  EXPECT_EQ(m.metric("caldera_jobs_woken_total"), 0);
  EXPECT_EQ(m.metric("caldera_job_actors"), 1);
}

// Two JobTemplates running `script` and a flow "pair" of them, the second after the first.
std::string pair_flow(const std::string& script = "true") {
  auto tmpl = [&](const std::string& name) {
    return "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate\nmetadata: {name: " + name +
           "}\nspec:\n  tasks: [{name: main, replicas: 1, template: {spec: {containers: [{name: "
           "main, command: [sh, -c, \"" +
           script + "\"]}]}}}]\n---\n";
  };
  return tmpl("first") + tmpl("second") + R"(apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: pair}
spec:
  jobRetainPolicy: retain
  flows:
    - name: first
    - name: second
      dependsOn: {targets: [first]}
)";
}

TEST(Passivation, DeletingAFlowDeletesItsSettledJobs) {
  MeteredNode m;
  auto& node = m.node;
  node.start();
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, pair_flow()).exit_code, 0);
  ASSERT_EQ(node.cli({"wait", "jobflow", "pair", "--for=phase=Succeed", "--timeout=30s"}).exit_code,
            0)
      << node.log();
  ASSERT_TRUE(m.metric_is("caldera_jobs_passivated_total", 2)) << node.log();
  EXPECT_EQ(m.phase("pair-first"), "Completed");
  auto deleted = node.cli({"delete", "jobflow", "pair"});
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  auto jobs = json::parse(node.cli({"get", "jobs", "-o", "json"}).out);
  EXPECT_EQ(jobs["items"].size(), 0u) << jobs.dump();
}

TEST(Passivation, AFinishedFlowHasNoActorAndEveryReadFindsItInTheStore) {
  MeteredNode m;
  auto& node = m.node;
  node.start();
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, pair_flow()).exit_code, 0);
  ASSERT_EQ(node.cli({"wait", "jobflow", "pair", "--for=phase=Succeed", "--timeout=30s"}).exit_code,
            0)
      << node.log();
  ASSERT_TRUE(m.metric_is("caldera_flows_passivated_total", 1)) << node.log();
  EXPECT_EQ(m.metric("caldera_flow_actors"), 0);

  EXPECT_EQ(m.phase("pair", "jobflow"), "Succeed");
  auto flow = json::parse(node.cli({"get", "jobflow", "pair", "-o", "json"}).out);
  EXPECT_EQ(flow["status"]["completedJobs"].size(), 2u) << flow.dump();
  auto table = node.cli({"get", "jobflows"});
  EXPECT_NE(table.out.find("pair"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("Succeed"), std::string::npos) << table.out;
  auto yaml = node.cli({"get", "jobflow", "pair", "-o", "yaml"});
  EXPECT_NE(yaml.out.find("Succeed"), std::string::npos) << yaml.out;
  auto described = node.cli({"describe", "jobflow", "pair"});
  EXPECT_EQ(described.exit_code, 0) << described.err;
  EXPECT_NE(described.out.find("pair-second"), std::string::npos) << described.out;
  // A watch (wait) lists it from the store too; its name stays taken.
  EXPECT_EQ(node.cli({"wait", "jobflow", "pair", "--for=phase=Succeed", "--timeout=5s"}).exit_code,
            0);
  auto again = node.cli({"submit", "-f", "-"}, pair_flow().substr(pair_flow().rfind("apiVersion")));
  EXPECT_NE(again.err.find("jobflows.flow.volcano.sh \"pair\" already exists"), std::string::npos)
      << again.err;
  EXPECT_EQ(m.metric("caldera_flows_woken_total"), 0);  // reads wake nothing

  // One of its jobs deleted wakes it: it hears the news (a Completed job deleted stays done),
  // then stops again.
  ASSERT_EQ(node.cli({"delete", "job", "pair-first"}).exit_code, 0);
  EXPECT_TRUE(m.metric_is("caldera_flows_woken_total", 1)) << node.log();
  EXPECT_TRUE(m.metric_is("caldera_flows_passivated_total", 2)) << node.log();
  EXPECT_EQ(m.metric("caldera_flow_actors"), 0);
  EXPECT_EQ(m.phase("pair", "jobflow"), "Succeed");

  // A restart starts no actor for it; a delete needs none.
  node.kill9();
  node.start();
  double actors = -1;
  ASSERT_TRUE(eventually([&] { return (actors = m.metric("caldera_flow_actors")) >= 0; }));
  EXPECT_EQ(actors, 0);
  EXPECT_NE(node.log().find("coordinator recovered jobflows=1 running=0"), std::string::npos)
      << node.log();
  auto deleted = node.cli({"delete", "jobflow", "pair"});
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  EXPECT_NE(m.phase("pair", "jobflow").find("not found"), std::string::npos);
  EXPECT_NE(m.phase("pair-second").find("not found"), std::string::npos);
  EXPECT_EQ(m.metric("caldera_flows_woken_total"), 0);
}

TEST(Passivation, AResumedJobOfAFinishedFlowWakesTheFlowWhichRecordsIt) {
  MeteredNode m;
  auto& node = m.node;
  node.start();
  auto tmpl = [](const std::string& name, const std::string& script) {
    return "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate\nmetadata: {name: " + name +
           "}\nspec:\n  tasks: [{name: main, replicas: 1, template: {spec: {containers: [{name: "
           "main, command: [sh, -c, \"" +
           script + "\"]}]}}}]\n---\n";
  };
  // "bad" fails the flow at once; "slow" runs on.
  ASSERT_EQ(node.cli({"submit", "-f", "-"},
                     tmpl("bad", "exit 3") + tmpl("slow", "sleep 600") +
                         "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: "
                         "mixed}\nspec:\n  flows: [{name: bad}, {name: slow}]\n")
                .exit_code,
            0);
  ASSERT_EQ(node.cli({"wait", "jobflow", "mixed", "--for=phase=Failed", "--timeout=30s"}).exit_code,
            0)
      << node.log();
  ASSERT_EQ(
      node.cli({"wait", "job", "mixed-slow", "--for=phase=Running", "--timeout=30s"}).exit_code, 0);
  EXPECT_EQ(m.metric("caldera_flow_actors"), 1);  // a job of its runs: it may hear more
  // Its last job aborted, nothing is left for it: it stops.
  ASSERT_EQ(node.cli({"abort", "job", "mixed-slow"}).exit_code, 0);
  ASSERT_TRUE(m.metric_is("caldera_flows_passivated_total", 1)) << node.log();
  EXPECT_EQ(m.metric("caldera_flow_actors"), 0);
  // A resume: the job's news wakes the flow, which records it (a finished flow keeps its phase).
  ASSERT_EQ(node.cli({"resume", "job", "mixed-slow"}).exit_code, 0);
  EXPECT_TRUE(m.metric_is("caldera_flows_woken_total", 1)) << node.log();
  EXPECT_TRUE(eventually([&] {
    auto flow = json::parse(node.cli({"get", "jobflow", "mixed", "-o", "json"}).out);
    for (const auto& line : flow["status"]["jobStatusList"])
      if (line["name"] == "mixed-slow" && line["state"] == "Running" &&
          flow["status"]["state"]["phase"] == "Failed")
        return true;
    return false;
  })) << node.cli({"get", "jobflow", "mixed", "-o", "json"}).out;
  EXPECT_EQ(m.metric("caldera_flow_actors"), 1);
}

TEST(Passivation, ARestartRecreatesOnlyTheRunningFlows) {
  MeteredNode m;
  auto& node = m.node;
  node.start();
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, pair_flow()).exit_code, 0);
  ASSERT_EQ(node.cli({"wait", "jobflow", "pair", "--for=phase=Succeed", "--timeout=30s"}).exit_code,
            0);
  ASSERT_EQ(node.cli({"submit", "-f", "-"},
                     "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate\nmetadata: {name: "
                     "slow}\nspec:\n  tasks: [{name: main, replicas: 1, template: {spec: "
                     "{containers: [{name: main, command: [sleep, \"600\"]}]}}}]\n---\n"
                     "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: "
                     "running}\nspec:\n  flows: [{name: slow}]\n")
                .exit_code,
            0);
  ASSERT_EQ(
      node.cli({"wait", "jobflow", "running", "--for=phase=Running", "--timeout=30s"}).exit_code,
      0);
  ASSERT_TRUE(m.metric_is("caldera_flow_actors", 1)) << node.log();

  node.kill9();
  node.start();
  double actors = -1;
  ASSERT_TRUE(eventually([&] { return (actors = m.metric("caldera_flow_actors")) >= 0; }));
  EXPECT_EQ(actors, 1);
  EXPECT_NE(node.log().find("coordinator recovered jobflows=2 running=1"), std::string::npos)
      << node.log();
  EXPECT_EQ(m.phase("pair", "jobflow"), "Succeed");
  EXPECT_EQ(m.phase("running", "jobflow"), "Running");
  EXPECT_EQ(m.metric("caldera_flows_woken_total"), 0);
}

}  // namespace
}  // namespace caldera::testing
