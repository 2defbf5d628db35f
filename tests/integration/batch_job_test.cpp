// Kubernetes Jobs (batch/v1) on one real node, through the CLI as a kubectl user drives them:
// Indexed completions, the failure back-off and backoffLimit, podFailurePolicy, suspend and a
// merge patch, a restart in the middle, and a Volcano Job of the same name beside one.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "client/client.hpp"
#include "messages/codec/codec.hpp"
#include "messages/model/batch_job.hpp"
#include "node_test.hpp"

namespace caldera::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

// A batch/v1 Job whose pods run `command` (sh -c); `spec` lines go under spec: (2 spaces).
std::string batch_job(const std::string& name, const std::string& spec,
                      const std::string& command) {
  return "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: " + name + "\nspec:\n" + spec +
         "  template:\n    spec:\n      restartPolicy: Never\n      containers:\n"
         "      - name: main\n        image: busybox\n        command: [\"sh\", \"-c\", " +
         json(command).dump() + "]\n";
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

class BatchJobs : public NodeTest {
 protected:
  TempDir marks;  // what the pods write

  json job(const std::string& name) { return get_json({"get", "jobs.batch", name}); }

  // The condition of this type, or null.
  static json condition(const json& job, const std::string& type) {
    for (const auto& c : job["status"].value("conditions", json::array()))
      if (c["type"] == type) return c;
    return nullptr;
  }

  void submit(const std::string& yaml) {
    auto r = node.cli({"submit", "-f", "-"}, yaml);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  void wait_for(const std::string& name, const std::string& condition, const char* timeout) {
    auto r = node.cli({"wait", "jobs.batch", name, "--for=condition=" + condition,
                       std::string("--timeout=") + timeout});
    ASSERT_EQ(r.exit_code, 0) << r.err << node.cli({"describe", "jobs.batch", name}).out;
  }
};

TEST_F(BatchJobs, AnIndexedJobRunsEachIndexOnceNeverMoreThanParallelismAtATime) {
  // Each pod notes its index and when it started and ended, in nanoseconds.
  const std::string log = marks.path() + "/runs";
  submit(batch_job("indexed", "  completions: 5\n  parallelism: 2\n  completionMode: Indexed\n",
                   "echo \"start $JOB_COMPLETION_INDEX $(date +%s%N)\" >> " + log +
                       "; sleep 0.3; echo \"end $JOB_COMPLETION_INDEX $(date +%s%N)\" >> " + log));
  wait_for("indexed", "Complete", "60s");
  auto j = job("indexed");
  EXPECT_EQ(j["status"]["completedIndexes"], "0-4");
  EXPECT_EQ(j["status"]["succeeded"], 5);
  EXPECT_EQ(condition(j, "Complete")["reason"], "CompletionsReached");
  std::multiset<std::string> started;
  std::vector<std::pair<int64_t, int>> moments;  // (time, +1 start / -1 end)
  for (const auto& line : lines_of(log)) {
    std::istringstream in(line);
    std::string what, index;
    int64_t ns = 0;
    in >> what >> index >> ns;
    if (what == "start") started.insert(index);
    moments.emplace_back(ns, what == "start" ? 1 : -1);
  }
  EXPECT_EQ(started, (std::multiset<std::string>{"0", "1", "2", "3", "4"}))
      << "each index once, told by JOB_COMPLETION_INDEX";
  std::sort(moments.begin(), moments.end());
  int running = 0, most = 0;
  for (const auto& [ns, step] : moments) most = std::max(most, running += step);
  EXPECT_LE(most, 2) << "never more than parallelism at once";
  auto table = node.cli({"get", "jobs.batch"});
  EXPECT_NE(table.out.find("COMPLETIONS"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("Complete"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("5/5"), std::string::npos) << table.out;
  // The pods are named <job>-<index>-<suffix> and carry their index.
  auto pods = get_json({"get", "pods", "--job", "indexed"})["items"];
  ASSERT_EQ(pods.size(), 5u);
  std::set<std::string> annotated;
  for (const auto& p : pods) {
    const auto& meta = p["metadata"];
    const std::string index = meta["annotations"]["batch.kubernetes.io/job-completion-index"];
    annotated.insert(index);
    EXPECT_EQ(meta["name"].get<std::string>().rfind("indexed-" + index + "-", 0), 0u) << p.dump();
    EXPECT_EQ(meta["labels"]["batch.kubernetes.io/job-completion-index"], index) << p.dump();
    EXPECT_EQ(meta["labels"]["job-name"], "indexed") << p.dump();
    EXPECT_EQ(meta["ownerReferences"][0]["kind"], "Job") << p.dump();
  }
  EXPECT_EQ(annotated, (std::set<std::string>{"0", "1", "2", "3", "4"}));
}

TEST_F(BatchJobs, ThePriorityClassOfItsTemplateIsTheJobsAndMustExist) {
  auto yaml = batch_job("urgent", "", "true");
  yaml.insert(yaml.find("      restartPolicy"), "      priorityClassName: high\n");
  auto refused = node.cli({"submit", "-f", "-"}, yaml);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("spec.template.spec.priorityClassName: no PriorityClass named "
                             "\"high\""),
            std::string::npos)
      << refused.err;
  submit(
      "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\n"
      "value: 1000\n---\n" +
      yaml);
  wait_for("urgent", "Complete", "30s");
  EXPECT_EQ(job("urgent")["spec"]["template"]["spec"]["priorityClassName"], "high");
}

TEST_F(BatchJobs, BackoffLimitOneFailsAfterTwoPodsTheSecondAtLeastTenSecondsLater) {
  const std::string log = marks.path() + "/failures";
  submit(batch_job("flaky", "  backoffLimit: 1\n", "date +%s%N >> " + log + "; exit 1"));
  wait_for("flaky", "Failed", "60s");
  auto j = job("flaky");
  EXPECT_EQ(condition(j, "Failed")["reason"], "BackoffLimitExceeded");
  EXPECT_EQ(condition(j, "FailureTarget")["reason"], "BackoffLimitExceeded");
  EXPECT_EQ(j["status"]["failed"], 2);
  auto runs = lines_of(log);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_GE(std::stoll(runs[1]) - std::stoll(runs[0]), 10'000'000'000LL)
      << "the second pod waits out the 10 s back-off";
}

TEST_F(BatchJobs, PodFailurePolicyFailJobOnExitCode42FailsAfterOnePod) {
  submit(batch_job("fortytwo",
                   "  completions: 3\n  podFailurePolicy:\n    rules:\n"
                   "    - action: FailJob\n"
                   "      onExitCodes: {containerName: main, operator: In, values: [42]}\n",
                   "exit 42"));
  wait_for("fortytwo", "Failed", "30s");
  auto j = job("fortytwo");
  auto failed = condition(j, "Failed");
  EXPECT_EQ(failed["reason"], "PodFailurePolicy");
  EXPECT_NE(failed["message"].get<std::string>().find("Container main for pod default/fortytwo-"),
            std::string::npos)
      << failed.dump();
  EXPECT_NE(failed["message"].get<std::string>().find(
                "failed with exit code 42 matching FailJob rule at index 0"),
            std::string::npos)
      << failed.dump();
  EXPECT_EQ(j["status"]["failed"], 1);
  EXPECT_EQ(get_json({"get", "pods", "--job", "fortytwo"})["items"].size(), 1u);
}

TEST_F(BatchJobs, ASuspendedJobHasNoPodUntilAMergePatchResumesIt) {
  submit(batch_job("later", "  suspend: true\n  completions: 2\n  parallelism: 2\n", "true"));
  wait_for("later", "Suspended", "10s");
  EXPECT_EQ(get_json({"get", "pods", "--job", "later"})["items"].size(), 0u);
  auto table = node.cli({"get", "jobs.batch", "later"});
  EXPECT_NE(table.out.find("Suspended"), std::string::npos) << table.out;
  EXPECT_FALSE(job("later")["status"].contains("startTime"));

  auto refused = node.cli({"patch", "jobs.batch", "later", "--type", "merge", "-p",
                           R"({"spec":{"completions":4,"template":{}}})"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("spec.completions: Invalid value: 4: field is immutable"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("spec.template"), std::string::npos) << refused.err;

  auto r = node.cli(
      {"patch", "jobs.batch", "later", "--type", "merge", "-p", R"({"spec":{"suspend":false}})"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "job.batch/later patched\n");
  wait_for("later", "Complete", "30s");
  auto j = job("later");
  EXPECT_EQ(condition(j, "Suspended")["status"], "False");
  EXPECT_EQ(condition(j, "Suspended")["reason"], "JobResumed");
  EXPECT_EQ(j["spec"]["suspend"], false);
  EXPECT_TRUE(j["status"].contains("startTime"));
}

TEST_F(BatchJobs, AVolcanoJobAndAKubernetesJobMayShareANameAndAreListedApart) {
  submit(batch_job("twin", "", "true"));
  submit(
      "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: twin}\nspec:\n"
      "  tasks:\n  - name: t\n    replicas: 1\n    template:\n      spec:\n        containers:\n"
      "        - {name: main, command: [\"true\"]}\n");
  wait_for("twin", "Complete", "30s");
  ASSERT_EQ(node.cli({"wait", "job", "twin", "--for=phase=Completed", "--timeout=30s"}).exit_code,
            0);
  auto batch = get_json({"get", "jobs.batch"})["items"];
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0]["apiVersion"], "batch/v1");
  auto volcano = get_json({"get", "vcjobs"})["items"];
  ASSERT_EQ(volcano.size(), 1u);
  EXPECT_EQ(volcano[0]["apiVersion"], "batch.volcano.sh/v1alpha1");
  // A second one of a kind is refused, as Kubernetes refuses it.
  auto again = node.cli({"submit", "-f", "-"}, batch_job("twin", "", "true"));
  EXPECT_NE(again.exit_code, 0);
  EXPECT_NE(again.err.find("jobs.batch \"twin\" already exists"), std::string::npos) << again.err;
  // Deleting one leaves the other.
  auto del = node.cli({"delete", "jobs.batch", "twin"});
  EXPECT_EQ(del.exit_code, 0) << del.err;
  EXPECT_EQ(del.out, "job.batch \"twin\" deleted\n");
  EXPECT_NE(node.cli({"get", "jobs.batch", "twin"}).exit_code, 0);
  EXPECT_EQ(node.cli({"get", "job", "twin"}).exit_code, 0);
}

TEST_F(BatchJobs, AKillNineInTheMiddleRunsEachIndexOnceAfterTheRestart) {
  // Ten indexes of half a second, two at a time: the kill lands among them.
  const std::string log = marks.path() + "/runs";
  submit(batch_job("survivor", "  completions: 10\n  parallelism: 2\n  completionMode: Indexed\n",
                   "sleep 0.5; echo $JOB_COMPLETION_INDEX >> " + log));
  ASSERT_TRUE(eventually([&] { return lines_of(log).size() >= 3; }, 30s));
  node.kill9();
  node.start();
  wait_for("survivor", "Complete", "60s");
  auto j = job("survivor");
  EXPECT_EQ(j["status"]["completedIndexes"], "0-9");
  EXPECT_EQ(j["status"]["succeeded"], 10);
  auto runs = lines_of(log);
  std::set<std::string> indexes(runs.begin(), runs.end());
  EXPECT_EQ(indexes.size(), 10u);
  // The pods that ran through the kill were not run again: their supervisors outlive calderad.
  EXPECT_EQ(runs.size(), 10u);
}

TEST_F(BatchJobs, AnUnknownKindIsRefusedRatherThanTakenForAVolcanoJob) {
  submit(batch_job("kinds", "", "true"));
  auto c = Client::connect(node.server(), 5s);
  ASSERT_TRUE(c) << c.error();
  auto ask = [&](const std::string& kind) {
    auto r = (*c)->call([&](api::Request::Builder b) {
      auto ref = b.initDeleteJob();
      ref.setName("kinds");
      ref.setKind(kind);
    });
    EXPECT_TRUE(r) << r.error();
    auto resp = (*r)->root<api::Response>();
    return resp.isErrors() ? std::string(resp.getErrors()[0].getMessage().cStr()) : "ok";
  };
  EXPECT_NE(ask("jbos.batch").find("unknown kind \"jbos.batch\""), std::string::npos);
  EXPECT_NE(ask("jobs").find("jobs.batch.volcano.sh \"kinds\" not found"), std::string::npos);
  EXPECT_EQ(ask("job.batch"), "ok");
  EXPECT_NE(node.cli({"get", "jobs.batch", "kinds"}).exit_code, 0);
}

TEST_F(BatchJobs, AStructuredSubmissionOfAKubernetesJobIsAdmittedAsOne) {
  BatchJobSpec spec;
  spec.name = "structured";
  spec.completions = 2;
  spec.completion_mode = "Indexed";
  spec.template_.restart_policy = "Never";
  spec.template_.containers.push_back(Container{"main", "", {"true"}, {}, {}, {}, {}, {}});
  auto c = Client::connect(node.server(), 5s);
  ASSERT_TRUE(c) << c.error();
  auto send = [&](const JobSpec& s) {
    auto r = (*c)->call([&](api::Request::Builder b) { encode(s, b.initSubmitJob()); });
    EXPECT_TRUE(r) << r.error();
    auto resp = (*r)->root<api::Response>();
    return resp.isErrors() ? std::string(resp.getErrors()[0].getMessage().cStr())
                           : std::string(resp.getSubmitted()[0].getKind().cStr());
  };
  EXPECT_EQ(send(to_job_spec(spec)), "Job.batch");
  wait_for("structured", "Complete", "30s");
  // Checked as a YAML one is: an Indexed job needs completions.
  spec.name = "unchecked";
  spec.completions.reset();
  spec.parallelism = 2;  // with neither, the API server's default is one completion
  EXPECT_NE(send(to_job_spec(spec)).find("Required value"), std::string::npos);
}

TEST_F(BatchJobs, TheExamplesDoWhatTheirCommentsSay) {
  ASSERT_EQ(node.cli({"submit", "-f", source_path("examples/indexed.yaml")}).exit_code, 0);
  ASSERT_EQ(node.cli({"submit", "-f", source_path("examples/pod-failure-policy.yaml")}).exit_code,
            0);
  ASSERT_EQ(node.cli({"submit", "-f", source_path("examples/suspended.yaml")}).exit_code, 0);
  wait_for("indexed", "Complete", "60s");
  EXPECT_EQ(job("indexed")["status"]["completedIndexes"], "0-4");
  auto logs = node.cli(
      {"logs", get_json({"get", "pods", "--job", "indexed"})["items"][3]["metadata"]["name"]
                   .get<std::string>()});
  EXPECT_NE(logs.out.find("of 5 on indexed-"), std::string::npos) << logs.out << logs.err;
  wait_for("checker", "Failed", "60s");
  EXPECT_EQ(condition(job("checker"), "Failed")["reason"], "PodFailurePolicy");
  EXPECT_NE(node.cli({"get", "jobs.batch", "later"}).out.find("Suspended"), std::string::npos);
  ASSERT_EQ(node.cli({"patch", "jobs.batch", "later", "--type", "merge", "-p",
                      R"({"spec":{"suspend":false}})"})
                .exit_code,
            0);
  wait_for("later", "Complete", "60s");
}

}  // namespace
}  // namespace caldera::testing
