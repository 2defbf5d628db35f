// The Prometheus endpoint of a real calderad (--metrics-port), read with curl as an operator
// would: jobs by phase, pods, flows by namespace, DAG steps, commits and sessions.
#include <gtest/gtest.h>

#include "harness.hpp"

namespace caldera::testing {
namespace {

constexpr const char* kFlow = R"(apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: first}
spec:
  tasks: [{name: main, replicas: 1, template: {spec: {containers: [{name: main, command: ["true"]}]}}}]
---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: second}
spec:
  tasks: [{name: main, replicas: 1, template: {spec: {containers: [{name: main, command: [sh, -c, "exit 2"]}]}}}]
---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: counted}
spec:
  flows:
    - name: first
    - name: second
      dependsOn: {targets: [first]}
)";

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(Metrics, CurlOfTheMetricsPortShowsTheCounters) {
  TempDir dir;
  const int port = free_port();
  Calderad node(dir.path() + "/node", {"--metrics-port", std::to_string(port)});
  node.start();
  auto r = node.cli({"submit", "-f", "-"}, kFlow);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto w = node.cli({"wait", "jobflow", "counted", "--for=phase=Failed", "--timeout", "30s"});
  ASSERT_EQ(w.exit_code, 0) << w.err << node.log();

  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/metrics";
  std::string text;
  // The counters are bumped as the effects leave the actors: the flow's own is last.
  ASSERT_TRUE(eventually([&] {
    auto got = run({"curl", "-sf", url});
    text = got.out;
    return got.exit_code == 0 &&
           has_line(text, "caldera_jobflow_failed_phase_count{namespace=\"default\"} 1");
  })) << text;
  EXPECT_TRUE(
      has_line(text, "caldera_job_phase_total{namespace=\"default\",phase=\"Completed\"} 1"))
      << text;
  EXPECT_TRUE(has_line(text, "caldera_job_phase_total{namespace=\"default\",phase=\"Failed\"} 1"))
      << text;
  EXPECT_TRUE(has_line(text, "caldera_job_phase_total{namespace=\"default\",phase=\"Pending\"} 2"))
      << text;
  EXPECT_TRUE(has_line(text, "caldera_pods_started_total 2")) << text;
  EXPECT_TRUE(has_line(text, "caldera_pods_failed_total 1")) << text;
  EXPECT_TRUE(has_line(text, "caldera_jobflow_dag_step_seconds_count 1")) << text;
  EXPECT_EQ(text.find("caldera_jobflow_succeed_phase_count{"), std::string::npos) << text;
  for (const char* series :
       {"caldera_store_commit_seconds_count ", "caldera_store_commit_batch_writes_sum ",
        "caldera_scheduler_session_seconds_count "})
    EXPECT_NE(text.find(std::string("\n") + series), std::string::npos) << series << text;
  EXPECT_NE(node.log().find("metrics on http://127.0.0.1:" + std::to_string(port) + "/metrics"),
            std::string::npos);
}

TEST(Metrics, KubernetesJobsAreCountedAsKubernetesCountsThemNotByVolcanoPhases) {
  TempDir dir;
  const int port = free_port();
  Calderad node(dir.path() + "/node", {"--metrics-port", std::to_string(port)});
  node.start();
  auto job = [](const std::string& name, const std::string& spec, const std::string& exit) {
    return "apiVersion: batch/v1\nkind: Job\nmetadata: {name: " + name + "}\nspec:\n" + spec +
           "  template:\n    spec:\n      restartPolicy: Never\n      containers:\n"
           "      - {name: main, command: [sh, -c, 'exit " +
           exit + "']}\n";
  };
  auto r = node.cli({"submit", "-f", "-"},
                    job("ok", "  completionMode: Indexed\n  completions: 1\n", "0") + "---\n" +
                        job("bad", "  backoffLimit: 0\n", "1"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/metrics";
  std::string text;
  ASSERT_TRUE(eventually([&] {
    text = run({"curl", "-sf", url}).out;
    return has_line(text,
                    "caldera_jobs_batch_finished_total{completion_mode=\"NonIndexed\","
                    "namespace=\"default\",reason=\"BackoffLimitExceeded\",result=\"failed\"} 1") &&
           has_line(text,
                    "caldera_jobs_batch_finished_total{completion_mode=\"Indexed\","
                    "namespace=\"default\",reason=\"CompletionsReached\",result=\"succeeded\"} "
                    "1");
  })) << text;
  EXPECT_EQ(text.find("caldera_job_phase_total{"), std::string::npos) << text;
}

TEST(Metrics, AMetricsPortInUseIsAClearError) {
  TempDir dir;
  const int port = free_port();
  Calderad first(dir.path() + "/a", {"--metrics-port", std::to_string(port)});
  first.start();
  auto r = run({CALDERAD_PATH, "--data-dir", dir.path() + "/b", "--port", "0", "--cluster-port",
                "0", "--metrics-port", std::to_string(port)});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("cannot serve metrics on 127.0.0.1:" + std::to_string(port)),
            std::string::npos)
      << r.err << r.out;
}

}  // namespace
}  // namespace caldera::testing
