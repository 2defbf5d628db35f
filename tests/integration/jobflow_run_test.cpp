// JobFlows running on a real node: jobs created in dependency order by real processes, parallel
// branches, failures that stop what follows, retry, probes, retain policy, and kill -9 in the
// middle of a flow.
#include <future>
#include <map>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "actors/jobflow/flow_records.hpp"
#include "client/client.hpp"
#include "messages/codec/codec.hpp"
#include "node_test.hpp"
#include "storage/store.hpp"

namespace caldera::testing {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

// A JobTemplate with one task of one pod running `sh -c script`.
std::string job_template(const std::string& name, const std::string& script, int replicas = 1) {
  return R"(apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: )" +
         name + R"(}
spec:
  tasks:
    - name: main
      replicas: )" +
         std::to_string(replicas) + R"(
      template: {spec: {containers: [{name: main, command: [sh, -c, ')" +
         script +
         R"(']}]}}
---
)";
}

class FlowRuns : public NodeTest {
 protected:
  void submit(const std::string& yaml) {
    auto path = write_file(dir.path(), "flow.yaml", yaml);
    auto r = node.cli({"submit", "-f", path});
    ASSERT_EQ(r.exit_code, 0) << r.err << node.log();
  }

  // The flow as stored, with millisecond times (the CLI's JSON has seconds).
  JobFlow flow(const std::string& name) {
    auto c = Client::connect(node.server(), 2s);
    if (!c) {
      ADD_FAILURE() << c.error();
      return {};
    }
    auto r = (*c)->call([&](api::Request::Builder b) { b.initGetJobFlow().setName(name); });
    if (!r || (*r)->root<api::Response>().which() != api::Response::JOB_FLOW) {
      ADD_FAILURE() << "no jobflow " << name;
      return {};
    }
    return decode((*r)->root<api::Response>().getJobFlow());
  }

  // A flow of one job ("long") that runs until the test ends, once it is Running.
  void submit_running_flow(const std::string& name) {
    const auto gate = dir.path() + "/never";
    submit(job_template("long", "while [ ! -e " + gate + " ]; do sleep 0.05; done") +
           "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: " + name +
           "}\nspec:\n  flows:\n    - name: long\n");
    ASSERT_TRUE(wait_flow(name, "Running"));
  }

  bool wait_flow(const std::string& name, const std::string& phase) {
    auto r = node.cli({"wait", "jobflow", name, "--for=phase=" + phase, "--timeout", "60s"});
    EXPECT_EQ(r.exit_code, 0) << r.err << node.log();
    return r.exit_code == 0;
  }

  static std::map<std::string, FlowJobStatus> lines(const JobFlow& f) {
    std::map<std::string, FlowJobStatus> out;
    for (const auto& l : f.status.job_status_list) out[l.name] = l;
    return out;
  }

  size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  }
};

// Seed 002, 12.2: data-download first; feature-engineering and model-training-v1 in parallel;
// model-training-v2 after feature-engineering; model-ensemble after both trainings.
TEST_F(FlowRuns, ParallelPipelineRunsInDependencyOrderAndDeletesItsJobs) {
  submit(job_template("data-download", "sleep 0.2") +
         job_template("feature-engineering", "sleep 1") +
         job_template("model-training-v1", "sleep 2") +
         job_template("model-training-v2", "sleep 0.5") +
         job_template("model-ensemble", "echo ensemble") + R"(apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: pp}
spec:
  jobRetainPolicy: delete
  flows:
    - name: data-download
    - name: feature-engineering
      dependsOn: {targets: [data-download]}
    - name: model-training-v1
      dependsOn: {targets: [data-download]}
    - name: model-training-v2
      dependsOn: {targets: [feature-engineering]}
    - name: model-ensemble
      dependsOn: {targets: [model-training-v1, model-training-v2]}
)");
  ASSERT_TRUE(wait_flow("pp", "Succeed"));
  auto f = flow("pp");
  auto l = lines(f);
  ASSERT_EQ(l.size(), 5u);
  const auto& dl = l["pp-data-download"];
  const auto& fe = l["pp-feature-engineering"];
  const auto& v1 = l["pp-model-training-v1"];
  const auto& v2 = l["pp-model-training-v2"];
  const auto& ens = l["pp-model-ensemble"];
  for (const auto* j : {&dl, &fe, &v1, &v2, &ens}) {
    EXPECT_EQ(j->state, "Completed") << j->name;
    EXPECT_GT(j->end_ms, j->start_ms) << j->name;
    EXPECT_EQ(j->restart_count, 0) << j->name;
    ASSERT_FALSE(j->running_histories.empty()) << j->name;
    EXPECT_EQ(j->running_histories.front().state, "Pending") << j->name;
    EXPECT_EQ(j->running_histories.back().state, "Completed") << j->name;
  }
  // Each job was created only after every target completed.
  EXPECT_GE(fe.start_ms, dl.end_ms);
  EXPECT_GE(v1.start_ms, dl.end_ms);
  EXPECT_GE(v2.start_ms, fe.end_ms);
  EXPECT_GE(ens.start_ms, v1.end_ms);
  EXPECT_GE(ens.start_ms, v2.end_ms);
  // The two branches ran at the same time.
  EXPECT_LT(fe.start_ms, v1.end_ms);
  EXPECT_LT(v1.start_ms, fe.end_ms);
  EXPECT_EQ(f.status.completed_jobs.size(), 5u);
  EXPECT_EQ(f.status.conditions.at("pp-model-ensemble").phase, "Completed");
  EXPECT_EQ(f.status.conditions.at("pp-model-ensemble").task_status_count.at("main").succeeded, 1);

  // jobRetainPolicy delete: the jobs go once the flow succeeded; its status stays.
  EXPECT_TRUE(eventually([&] { return get_json({"get", "jobs"})["items"].empty(); })) << node.log();
  EXPECT_EQ(flow("pp").status.phase, "Succeed");
  EXPECT_NE(node.log().find("jobflow=default/pp jobs deleted (jobRetainPolicy delete)"),
            std::string::npos);

  auto described = node.cli({"describe", "jobflow", "pp"});
  ASSERT_EQ(described.exit_code, 0) << described.err;
  EXPECT_NE(described.out.find("Phase:"), std::string::npos) << described.out;
  EXPECT_NE(described.out.find("    model-training-v2   feature-engineering"), std::string::npos)
      << described.out;
  EXPECT_NE(described.out.find("pp-model-ensemble:"), std::string::npos) << described.out;
}

TEST_F(FlowRuns, AFailedJobFailsTheFlowAndNothingAfterItIsCreated) {
  submit(job_template("a", "true") + job_template("b", "exit 3") + job_template("c", "true") +
         job_template("d", "sleep 0.3") + R"(apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: broken}
spec:
  flows:
    - name: a
    - name: b
      dependsOn: {targets: [a]}
    - name: c
      dependsOn: {targets: [b]}
    - name: d
      dependsOn: {targets: [a]}
)");
  ASSERT_TRUE(wait_flow("broken", "Failed"));
  auto f = flow("broken");
  EXPECT_EQ(f.status.reason, "JobFailed");
  EXPECT_EQ(f.status.message.rfind("job broken-b Failed", 0), 0u) << f.status.message;
  EXPECT_EQ(f.status.failed_jobs, std::vector<std::string>{"broken-b"});
  // Waiting for Succeed says at once that it cannot come.
  auto r = node.cli({"wait", "jobflow", "broken", "--for=phase=Succeed", "--timeout", "10s"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("jobflow broken reached phase Failed, not Succeed"), std::string::npos)
      << r.err;
  // The branch that does not depend on b still runs to its end; c never exists.
  EXPECT_TRUE(eventually([&] {
    auto l = lines(flow("broken"));
    return l.count("broken-d") && l["broken-d"].state == "Completed";
  })) << node.log();
  auto c = node.cli({"get", "job", "broken-c"});
  EXPECT_NE(c.exit_code, 0);
  EXPECT_EQ(lines(flow("broken")).count("broken-c"), 0u);
  // Ordinary jobs, marked as the flow's (retain: they stay).
  auto b = get_json({"get", "job", "broken-b"});
  EXPECT_EQ(b["metadata"]["labels"]["volcano.sh/createdByJobFlow"], "default.broken");
  EXPECT_EQ(b["metadata"]["annotations"]["volcano.sh/createdByJobTemplate"], "default.b");
}

TEST_F(FlowRuns, RetryCreatesAFailedJobAgain) {
  // "flaky" fails on its first run and succeeds on its second; "never" always fails.
  const auto marker = dir.path() + "/ran-once";
  submit(job_template("flaky",
                      "if [ -e " + marker + " ]; then exit 0; fi; touch " + marker + "; exit 1") +
         job_template("after", "true") + R"(apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: retried}
spec:
  flows:
    - name: flaky
      retry: 2
    - name: after
      dependsOn: {targets: [flaky]}
)");
  ASSERT_TRUE(wait_flow("retried", "Succeed"));
  auto l = lines(flow("retried"));
  EXPECT_EQ(l["retried-flaky"].restart_count, 1);
  EXPECT_EQ(l["retried-flaky"].state, "Completed");
  // Its histories keep the failed run before the new one.
  bool saw_failed = false;
  for (const auto& h : l["retried-flaky"].running_histories) saw_failed |= h.state == "Failed";
  EXPECT_TRUE(saw_failed);
  EXPECT_EQ(l["retried-after"].state, "Completed");

  submit(job_template("never", "exit 1") + R"(apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: hopeless}
spec:
  flows:
    - name: never
      retry: 2
)");
  ASSERT_TRUE(wait_flow("hopeless", "Failed"));
  auto h = lines(flow("hopeless"));
  EXPECT_EQ(h["hopeless-never"].restart_count, 2);  // created three times in all
  EXPECT_EQ(count(node.log(), "job=default/hopeless-never accepted"), 3u) << node.log();
}

TEST_F(FlowRuns, AProbeStartsADependentWhileItsTargetRuns) {
  const auto go = dir.path() + "/go";
  // The server runs until the client has started: only a probe can let this flow finish.
  submit(job_template("server", "while [ ! -e " + go + " ]; do sleep 0.05; done") +
         job_template("client", "touch " + go) + R"(apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: probed}
spec:
  flows:
    - name: server
    - name: client
      dependsOn:
        targets: [server]
        probe:
          taskStatusList: [{taskName: main, phase: Running}]
)");
  ASSERT_TRUE(wait_flow("probed", "Succeed"));
  auto l = lines(flow("probed"));
  EXPECT_LT(l["probed-client"].start_ms, l["probed-server"].end_ms);
}

// The server's pod answers GET /ready on its node's network with 503, then, once the test makes
// its ready file, with 200: the client is created only after that, from the pod's own answer.
TEST_F(FlowRuns, AnHttpGetProbeStartsADependentOnceTheTargetsPodAnswers) {
  const int port = free_port();
  const auto ready = dir.path() + "/ready";
  submit(job_template("web", std::string(CALDERA_READY_SERVER_PATH) + " " + std::to_string(port) +
                                 " " + ready) +
         job_template("caller", "true") + R"(apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: gated}
spec:
  flows:
    - name: web
    - name: caller
      dependsOn:
        targets: [web]
        probe:
          httpGetList:
            - {taskName: main, path: /ready, port: )" +
         std::to_string(port) + R"(, httpHeader: {name: X-Flow, value: gated}}
)");
  // Probed, and refused: the server's log shows the flow's requests, and no caller exists.
  ASSERT_TRUE(eventually([&] {
    return count(node.cli({"logs", "gated-web-main-0"}).out, "GET /ready HTTP/1.1") >= 2;
  })) << node.cli({"get", "jobs"}).out
      << node.log();
  EXPECT_NE(node.cli({"get", "job", "gated-caller"}).exit_code, 0) << "503 is not ready";
  EXPECT_NE(node.cli({"logs", "gated-web-main-0"}).out.find("X-Flow: gated\r\n"),
            std::string::npos);
  write_file(dir.path(), "ready", "");
  ASSERT_TRUE(eventually([&] {
    return node.cli({"get", "job", "gated-caller"}).exit_code == 0;
  })) << node.log();
  auto r = node.cli({"wait", "job", "gated-caller", "--for=phase=Completed", "--timeout=30s"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(node.log().find("jobflow=default/gated flow=caller target=web answered its probe"),
            std::string::npos);
}

// The same with a TCP probe: the caller waits until something accepts connections on the port.
TEST_F(FlowRuns, ATcpSocketProbeWaitsUntilThePortAcceptsConnections) {
  const int port = free_port();
  const auto gate = dir.path() + "/listen";
  const auto done = dir.path() + "/done";
  // db listens once the test opens the gate, and ends once the app has run.
  submit(job_template("db", "while [ ! -e " + gate + " ]; do sleep 0.05; done; " +
                                std::string(CALDERA_READY_SERVER_PATH) + " " +
                                std::to_string(port) + " " + gate + " & while [ ! -e " + done +
                                " ]; do sleep 0.05; done; kill $!") +
         job_template("app", "touch " + done) + R"(apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: tcp}
spec:
  flows:
    - name: db
    - name: app
      dependsOn:
        targets: [db]
        probe: {tcpSocketList: [{taskName: main, port: )" +
         std::to_string(port) + R"(}]}
)");
  auto running = node.cli({"wait", "job", "tcp-db", "--for=phase=Running", "--timeout=30s"});
  ASSERT_EQ(running.exit_code, 0) << running.err;
  // Running, but nothing listens: a few probe rounds pass without the app.
  std::this_thread::sleep_for(1500ms);
  EXPECT_NE(node.cli({"get", "job", "tcp-app"}).exit_code, 0) << "nothing listens yet";
  write_file(dir.path(), "listen", "");
  ASSERT_TRUE(wait_flow("tcp", "Succeed"));
  auto l = lines(flow("tcp"));
  EXPECT_EQ(l["tcp-app"].state, "Completed");
}

TEST_F(FlowRuns, KillNineInTheMiddleOfAFlowCreatesNothingTwice) {
  const auto gate = dir.path() + "/gate";
  submit(job_template("first", "true") +
         job_template("second", "while [ ! -e " + gate + " ]; do sleep 0.05; done") +
         job_template("third", "true") + R"(apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: chain}
spec:
  flows:
    - name: first
    - name: second
      dependsOn: {targets: [first]}
    - name: third
      dependsOn: {targets: [second]}
)");
  ASSERT_TRUE(eventually([&] {
    auto l = lines(flow("chain"));
    return l.count("chain-second") && l["chain-second"].state == "Running";
  })) << node.log();
  const auto before = lines(flow("chain"));
  node.kill9();
  write_file(dir.path(), "gate", "");  // the orphaned pod ends while its node is down
  node.start();
  ASSERT_TRUE(wait_flow("chain", "Succeed"));
  auto after = lines(flow("chain"));
  for (const auto& name : {"chain-first", "chain-second"})
    EXPECT_EQ(after[name].uid, before.at(name).uid) << name;
  for (const auto& [name, line] : after) EXPECT_EQ(line.restart_count, 0) << name;
  const auto log = node.log();
  for (const auto& name : {"chain-first", "chain-second", "chain-third"})
    EXPECT_EQ(count(log, std::string("job=default/") + name + " accepted"), 1u) << name << log;
}

TEST_F(FlowRuns, AMissingTemplateIsWaitedFor) {
  submit(R"(apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: early}
spec:
  flows:
    - name: later
)");
  EXPECT_EQ(flow("early").status.phase, "Pending");
  submit(job_template("later", "true"));
  ASSERT_TRUE(wait_flow("early", "Succeed"));
}

TEST_F(FlowRuns, DeletingAFlowDeletesItsJobs) {
  ASSERT_NO_FATAL_FAILURE(submit_running_flow("doomed"));
  // Two deletes at once (a client that retries): one delete, nothing left behind.
  const std::string cli = std::string(CALDERA_CLI_PATH) + " --server " + node.server();
  auto both =
      run({"sh", "-c", cli + " delete jobflow doomed & " + cli + " delete jobflow doomed & wait"});
  EXPECT_NE(both.out.find("jobflow.flow.volcano.sh \"doomed\" deleted"), std::string::npos)
      << both.out << both.err;
  EXPECT_NE(node.cli({"get", "job", "doomed-long"}).exit_code, 0);
  EXPECT_TRUE(get_json({"get", "pods"})["items"].empty());
  // Nothing comes back after a restart.
  node.kill9();
  node.start();
  EXPECT_NE(node.cli({"get", "jobflow", "doomed"}).exit_code, 0);
  EXPECT_TRUE(get_json({"get", "jobs"})["items"].empty());
}

TEST_F(FlowRuns, AFlowLeftTerminatingByAKillIsDeletedAfterTheRestart) {
  ASSERT_NO_FATAL_FAILURE(submit_running_flow("halfway"));
  // The node dies right after a delete made Terminating durable, before the jobs went: the
  // stored record says so (written here, with the node down, as the delete would have).
  node.kill9();
  {
    auto store = Store::open(data + "/db");
    ASSERT_TRUE(store) << store.error();
    auto row = (*store)->get(Family::Flows, "default/halfway");
    ASSERT_TRUE(row);
    auto stored = FlowKind<JobFlow>::parse(*row);
    ASSERT_TRUE(stored) << stored.error();
    stored->status.phase = "Terminating";
    std::promise<std::string> written;
    (*store)->commit({Write{Family::Flows, "default/halfway", FlowKind<JobFlow>::record(*stored)}},
                     [&](std::string error) { written.set_value(error); });
    ASSERT_EQ(written.get_future().get(), "");
  }
  node.start();
  // The restart finishes the delete: the flow, its job and its pod go, and nothing runs again.
  EXPECT_TRUE(eventually(
      [&] {
        return node.cli({"get", "jobflow", "halfway"}).exit_code != 0;
      },
      30s))
      << node.log();
  EXPECT_TRUE(get_json({"get", "jobs"})["items"].empty());
  EXPECT_TRUE(eventually([&] { return get_json({"get", "pods"})["items"].empty(); }, 30s));
  EXPECT_NE(node.log().find("jobflow=default/halfway deleted"), std::string::npos) << node.log();
}

TEST_F(FlowRuns, APatchedReplicaCountAndEnvAreUsed) {
  submit(job_template("work", "echo \"$GREETING\"") + R"(apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: patched}
spec:
  flows:
    - name: work
      patch:
        spec:
          minAvailable: 3
          tasks:
            - name: main
              replicas: 3
              template: {spec: {containers: [{name: main, env: [{name: GREETING, value: hi}]}]}}
)");
  ASSERT_TRUE(wait_flow("patched", "Succeed"));
  auto job = get_json({"get", "job", "patched-work"});
  EXPECT_EQ(job["spec"]["tasks"][0]["replicas"], 3);
  EXPECT_EQ(job["spec"]["minAvailable"], 3);
  EXPECT_EQ(job["status"]["succeeded"], 3);
  auto log = node.cli({"logs", "patched-work-main-2"});
  EXPECT_EQ(log.out, "hi\n") << log.err;
  // The template itself is unchanged.
  EXPECT_EQ(get_json({"get", "jobtemplate", "work"})["spec"]["tasks"][0]["replicas"], 1);

  // A patch naming a task the template lacks fails the flow, saying why.
  submit(R"(apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: mispatched}
spec:
  flows:
    - name: work
      patch: {spec: {tasks: [{name: nosuch, replicas: 2}]}}
)");
  ASSERT_TRUE(wait_flow("mispatched", "Failed"));
  auto f = flow("mispatched");
  EXPECT_EQ(f.status.reason, "JobCreateFailed");
  EXPECT_NE(f.status.message.find("the JobTemplate has no task \"nosuch\""), std::string::npos)
      << f.status.message;
}

TEST_F(FlowRuns, KillNineDuringARetryCountsItOnce) {
  // "flaky" fails on its first run; its second run waits for a gate, and the node is killed
  // meanwhile: after the restart the retry is still the first one, and nothing is created again.
  const auto marker = dir.path() + "/ran-once";
  const auto gate = dir.path() + "/gate";
  submit(job_template("flaky", "if [ -e " + marker + " ]; then while [ ! -e " + gate +
                                   " ]; do sleep 0.05; done; exit 0; fi; touch " + marker +
                                   "; exit 1") +
         R"(apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: survivor}
spec:
  flows:
    - name: flaky
      retry: 2
)");
  ASSERT_TRUE(eventually([&] {
    auto l = lines(flow("survivor"));
    return l.count("survivor-flaky") && l["survivor-flaky"].restart_count == 1 &&
           l["survivor-flaky"].state == "Running";
  })) << node.log();
  node.kill9();
  node.start();
  write_file(dir.path(), "gate", "");
  ASSERT_TRUE(wait_flow("survivor", "Succeed"));
  auto l = lines(flow("survivor"));
  EXPECT_EQ(l["survivor-flaky"].restart_count, 1);
  EXPECT_EQ(count(node.log(), "job=default/survivor-flaky accepted"), 2u) << node.log();
}

}  // namespace
}  // namespace caldera::testing
