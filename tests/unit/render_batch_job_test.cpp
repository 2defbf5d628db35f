#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "client/render.hpp"
#include "client/render_batch_job.hpp"
#include "messages/model/batch_job.hpp"

namespace caldera {
namespace {

constexpr int64_t kCreated = 1700000000000;  // 2023-11-14T22:13:20Z
constexpr int64_t kNow = kCreated + 600000;  // ten minutes later

// What a user writes with no more than a name and a container.
BatchJobSpec minimal_spec(const std::string& name) {
  BatchJobSpec s;
  s.name = name;
  s.namespace_ = "ml";
  Container c;
  c.name = "main";
  c.image = "busybox:1.36";
  c.command = {"sh", "-c", "echo done"};
  s.template_.containers = {c};
  s.template_.restart_policy = "Never";
  return s;
}

BatchJobSpec with_counts(const std::string& name, std::optional<int32_t> parallelism,
                         std::optional<int32_t> completions) {
  BatchJobSpec s = minimal_spec(name);
  s.parallelism = parallelism;
  s.completions = completions;
  return s;
}

BatchJobCondition condition(const char* type, std::string reason, int64_t ms) {
  BatchJobCondition c;
  c.type = type;
  c.reason = std::move(reason);
  c.last_probe_ms = ms;
  c.last_transition_ms = ms;
  return c;
}

Job make_job(BatchJobSpec spec, std::optional<BatchJobStatus> status,
             const std::string& uid = "uid-1") {
  Job job;
  job.uid = uid;
  job.created_ms = kCreated;
  job.spec = to_job_spec(std::move(spec));
  job.status.batch = std::move(status);
  return job;
}

// Started a second after it was created and still going.
BatchJobStatus running(int32_t active, int32_t succeeded) {
  BatchJobStatus s;
  s.active = active;
  s.ready = active;
  s.succeeded = succeeded;
  s.start_ms = kCreated + 1000;
  return s;
}

// Five of five done a minute after they started.
Job complete_job() {
  BatchJobStatus s;
  s.succeeded = 5;
  s.start_ms = kCreated + 5000;
  s.completion_ms = kCreated + 65000;
  s.conditions = {condition(kJobSuccessCriteriaMet, "CompletionsReached", kCreated + 65000),
                  condition(kJobComplete, "CompletionsReached", kCreated + 65000)};
  return make_job(with_counts("done", 2, 5), s);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool has_line(const std::string& text, const std::string& line) {
  auto lines = lines_of(text);
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

TEST(RenderBatchJob, JsonFillsInTheApiServersDefaults) {
  nlohmann::json j = batch_job_to_json(make_job(minimal_spec("plain"), running(1, 0)));
  EXPECT_EQ(j["apiVersion"], "batch/v1");
  EXPECT_EQ(j["kind"], "Job");
  EXPECT_EQ(j["metadata"], (nlohmann::json{{"name", "plain"},
                                           {"namespace", "ml"},
                                           {"uid", "uid-1"},
                                           {"generation", 1},
                                           {"creationTimestamp", "2023-11-14T22:13:20Z"}}));
  const auto& spec = j["spec"];
  EXPECT_EQ(spec["parallelism"], 1);
  EXPECT_EQ(spec["completions"], 1);  // neither written: one pod that must succeed
  EXPECT_EQ(spec["completionMode"], "NonIndexed");
  EXPECT_EQ(spec["backoffLimit"], 6);
  EXPECT_EQ(spec["suspend"], false);
  EXPECT_EQ(spec["podReplacementPolicy"], "TerminatingOrFailed");
  for (const char* absent : {"backoffLimitPerIndex", "maxFailedIndexes", "activeDeadlineSeconds",
                             "ttlSecondsAfterFinished", "podFailurePolicy", "successPolicy",
                             "manualSelector", "selector"})
    EXPECT_FALSE(spec.contains(absent)) << absent;
  const auto& pod = spec["template"]["spec"];
  EXPECT_EQ(spec["template"]["metadata"], nlohmann::json::object());
  EXPECT_EQ(pod["restartPolicy"], "Never");
  EXPECT_EQ(pod["containers"][0]["name"], "main");
  EXPECT_EQ(pod["containers"][0]["image"], "busybox:1.36");
  EXPECT_EQ(pod["containers"][0]["command"], (nlohmann::json{"sh", "-c", "echo done"}));

  // A work queue keeps its completions unset.
  nlohmann::json queue = batch_job_to_json(make_job(with_counts("q", 3, {}), running(3, 0)));
  EXPECT_EQ(queue["spec"]["parallelism"], 3);
  EXPECT_FALSE(queue["spec"].contains("completions"));
}

TEST(RenderBatchJob, JsonShowsEverythingTheUserWrote) {
  BatchJobSpec s = with_counts("shards", 2, 4);
  s.labels = {{"team", "vision"}};
  s.annotations = {{kQueueNameAnnotation, "gpu"}};
  s.completion_mode = "Indexed";
  s.backoff_limit_per_index = 1;
  s.max_failed_indexes = 2;
  s.active_deadline_seconds = 600;
  s.ttl_seconds_after_finished = 60;
  s.suspend = true;
  s.pod_failure_policy = std::vector<PodFailurePolicyRule>{
      {"FailJob", ExitCodeRequirement{"main", "In", {42, 43}}, {}},
      {"Ignore", std::nullopt, {{"DisruptionTarget", "True"}}}};
  s.success_policy = std::vector<SuccessPolicyRule>{{"0-2", 2}, {std::nullopt, 3}};
  s.manual_selector = true;
  s.selector = std::map<std::string, std::string>{{"app", "shards"}};
  s.template_.labels = {{"app", "shards"}};
  s.template_.termination_grace_seconds = 5;
  nlohmann::json j = batch_job_to_json(make_job(s, BatchJobStatus{}));

  EXPECT_EQ(j["metadata"]["labels"], (nlohmann::json{{"team", "vision"}}));
  EXPECT_EQ(j["metadata"]["annotations"][kQueueNameAnnotation], "gpu");
  const auto& spec = j["spec"];
  EXPECT_EQ(spec["parallelism"], 2);
  EXPECT_EQ(spec["completions"], 4);
  EXPECT_EQ(spec["completionMode"], "Indexed");
  EXPECT_EQ(spec["backoffLimit"], 2147483647);  // none job-wide under backoffLimitPerIndex
  EXPECT_EQ(spec["backoffLimitPerIndex"], 1);
  EXPECT_EQ(spec["maxFailedIndexes"], 2);
  EXPECT_EQ(spec["activeDeadlineSeconds"], 600);
  EXPECT_EQ(spec["ttlSecondsAfterFinished"], 60);
  EXPECT_EQ(spec["suspend"], true);
  EXPECT_EQ(spec["podReplacementPolicy"], "Failed");  // the default with a podFailurePolicy
  EXPECT_EQ(spec["podFailurePolicy"], nlohmann::json::parse(R"({"rules": [
              {"action": "FailJob", "onPodConditions": [],
               "onExitCodes": {"containerName": "main", "operator": "In", "values": [42, 43]}},
              {"action": "Ignore",
               "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]})"));
  EXPECT_EQ(spec["successPolicy"], nlohmann::json::parse(R"({"rules": [
              {"succeededIndexes": "0-2", "succeededCount": 2}, {"succeededCount": 3}]})"));
  EXPECT_EQ(spec["manualSelector"], true);
  EXPECT_EQ(spec["selector"], (nlohmann::json{{"matchLabels", {{"app", "shards"}}}}));
  EXPECT_EQ(spec["template"]["metadata"]["labels"], (nlohmann::json{{"app", "shards"}}));
  EXPECT_EQ(spec["template"]["spec"]["terminationGracePeriodSeconds"], 5);

  // A replacement policy the user wrote is kept.
  s.pod_replacement_policy = "TerminatingOrFailed";
  EXPECT_EQ(batch_job_to_json(make_job(s, {}))["spec"]["podReplacementPolicy"],
            "TerminatingOrFailed");
}

TEST(RenderBatchJob, JsonStatusLeavesOutZeroCountersAsTheApiServerDoes) {
  nlohmann::json status = batch_job_to_json(complete_job())["status"];
  EXPECT_FALSE(status.contains("active"));
  EXPECT_FALSE(status.contains("failed"));
  EXPECT_EQ(status["succeeded"], 5);
  // Pointers the controller always sets: kubectl shows them at 0.
  EXPECT_EQ(status["ready"], 0);
  EXPECT_EQ(status["terminating"], 0);
  EXPECT_EQ(status["uncountedTerminatedPods"], nlohmann::json::object());
  EXPECT_EQ(status["startTime"], "2023-11-14T22:13:25Z");
  EXPECT_EQ(status["completionTime"], "2023-11-14T22:14:25Z");
  EXPECT_FALSE(status.contains("completedIndexes"));
  EXPECT_FALSE(status.contains("failedIndexes"));
  ASSERT_EQ(status["conditions"].size(), 2u);
  EXPECT_EQ(status["conditions"][1],
            (nlohmann::json{{"type", "Complete"},
                            {"status", "True"},
                            {"reason", "CompletionsReached"},
                            {"lastProbeTime", "2023-11-14T22:14:25Z"},
                            {"lastTransitionTime", "2023-11-14T22:14:25Z"}}));

  // Still running: its start, no completion and no conditions yet.
  status = batch_job_to_json(make_job(with_counts("busy", 2, 5), running(2, 1)))["status"];
  EXPECT_EQ(status["active"], 2);
  EXPECT_EQ(status["ready"], 2);
  EXPECT_EQ(status["succeeded"], 1);
  EXPECT_FALSE(status.contains("completionTime"));
  EXPECT_FALSE(status.contains("conditions"));

  // Not synced yet: the empty status a new Job has.
  EXPECT_EQ(batch_job_to_json(make_job(minimal_spec("new"), std::nullopt))["status"],
            nlohmann::json::object());
}

TEST(RenderBatchJob, JsonStatusShowsAnIndexedJobsIndexes) {
  BatchJobSpec s = with_counts("shards", 2, 8);
  s.completion_mode = "Indexed";
  BatchJobStatus st = running(2, 5);
  st.failed = 1;
  st.completed_indexes = "0-3,5";
  nlohmann::json status = batch_job_to_json(make_job(s, st))["status"];
  EXPECT_EQ(status["completedIndexes"], "0-3,5");
  EXPECT_EQ(status["failed"], 1);
  EXPECT_FALSE(status.contains("failedIndexes"));

  // With backoffLimitPerIndex the controller sets failedIndexes, empty at first.
  s.backoff_limit_per_index = 1;
  EXPECT_EQ(batch_job_to_json(make_job(s, st))["status"]["failedIndexes"], "");
  st.failed_indexes = "4,6";
  EXPECT_EQ(batch_job_to_json(make_job(s, st))["status"]["failedIndexes"], "4,6");
}

TEST(RenderBatchJob, YamlParsesBackWithYamlCpp) {
  Job job = complete_job();
  job.spec.labels = {{"team", "vision"}};
  const std::string yaml = to_yaml(batch_job_to_json(job));
  YAML::Node node = YAML::Load(yaml);
  ASSERT_TRUE(node.IsMap()) << yaml;
  EXPECT_EQ(node["apiVersion"].as<std::string>(), "batch/v1");
  EXPECT_EQ(node["kind"].as<std::string>(), "Job");
  EXPECT_EQ(node["metadata"]["creationTimestamp"].as<std::string>(), "2023-11-14T22:13:20Z");
  EXPECT_EQ(node["metadata"]["labels"]["team"].as<std::string>(), "vision");
  EXPECT_EQ(node["spec"]["backoffLimit"].as<int>(), 6);
  EXPECT_EQ(node["spec"]["completions"].as<int>(), 5);
  EXPECT_FALSE(node["spec"]["suspend"].as<bool>());
  EXPECT_EQ(node["spec"]["completionMode"].as<std::string>(), "NonIndexed");
  EXPECT_EQ(node["spec"]["template"]["spec"]["containers"][0]["command"][2].as<std::string>(),
            "echo done");
  EXPECT_EQ(node["status"]["succeeded"].as<int>(), 5);
  EXPECT_EQ(node["status"]["conditions"][1]["type"].as<std::string>(), "Complete");
  EXPECT_EQ(node["status"]["conditions"][1]["status"].as<std::string>(), "True");
  EXPECT_TRUE(node["status"]["uncountedTerminatedPods"].IsMap());
  EXPECT_EQ(node["status"]["uncountedTerminatedPods"].size(), 0u);
  EXPECT_FALSE(node["status"]["active"]);
  // kubectl's YAML quotes a True/False condition status, lest it read as a bool.
  EXPECT_NE(yaml.find("status: \"True\""), std::string::npos) << yaml;
}

TEST(RenderBatchJob, GetShowsCompletionsAndKubectlsStatus) {
  BatchJobStatus suspended;
  suspended.conditions = {condition(kJobSuspended, "JobSuspended", kCreated)};
  BatchJobStatus failed = running(0, 1);
  failed.ready = 0;
  failed.failed = 7;
  failed.conditions = {condition(kJobFailureTarget, "BackoffLimitExceeded", kNow - 2000),
                       condition(kJobFailed, "BackoffLimitExceeded", kNow - 1000)};
  BatchJobStatus doomed = running(1, 0);
  doomed.conditions = {condition(kJobFailureTarget, "PodFailurePolicy", kNow - 1000)};
  BatchJobSpec held = with_counts("held", 2, 5);
  held.suspend = true;
  std::vector<Job> jobs{complete_job(),
                        make_job(with_counts("busy", 2, 5), running(2, 2)),
                        make_job(held, suspended),
                        make_job(with_counts("broke", 1, 3), failed),
                        make_job(with_counts("queue", 3, {}), running(3, 1)),
                        make_job(with_counts("doomed", 1, 2), doomed)};
  EXPECT_EQ(batch_jobs_table(jobs, false, kNow),
            "NAME     STATUS          COMPLETIONS   DURATION   AGE\n"
            "done     Complete        5/5           60s        10m\n"
            "busy     Running         2/5           9m59s      10m\n"
            "held     Suspended       0/5                      10m\n"
            "broke    Failed          1/3           9m59s      10m\n"
            "queue    Running         1/1 of 3      9m59s      10m\n"
            "doomed   FailureTarget   0/2           9m59s      10m\n");
}

TEST(RenderBatchJob, GetCountsAWorkQueueOfOnePodAsKubectlDoes) {
  std::vector<Job> jobs{make_job(with_counts("one", 1, {}), running(1, 0)),
                        make_job(minimal_spec("plain"), running(1, 0))};
  auto lines = lines_of(batch_jobs_table(jobs, false, kNow));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(words_of(lines[1])[2], "0/1");  // no completions: "of" only past one pod
  EXPECT_EQ(words_of(lines[2])[2], "0/1");  // neither written: completions 1
}

TEST(RenderBatchJob, GetWideShowsContainersImagesAndTheSelector) {
  BatchJobSpec two = with_counts("two", 2, 2);
  Container side;
  side.name = "side";
  side.image = "alpine";
  two.template_.containers.push_back(side);
  BatchJobSpec picked = minimal_spec("picked");
  picked.manual_selector = true;
  picked.selector = std::map<std::string, std::string>{{"team", "y"}, {"app", "x"}};
  std::vector<Job> jobs{make_job(two, running(2, 0), "c0ffee"),
                        make_job(picked, running(1, 0), "u2")};
  auto lines = lines_of(batch_jobs_table(jobs, true, kNow, true));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(words_of(lines[0]),
            (std::vector<std::string>{"NAMESPACE", "NAME", "STATUS", "COMPLETIONS", "DURATION",
                                      "AGE", "CONTAINERS", "IMAGES", "SELECTOR"}));
  EXPECT_EQ(words_of(lines[1]),
            (std::vector<std::string>{"ml", "two", "Running", "0/2", "9m59s", "10m", "main,side",
                                      "busybox:1.36,alpine",
                                      "batch.kubernetes.io/controller-uid=c0ffee"}));
  EXPECT_EQ(words_of(lines[2]).back(), "app=x,team=y");
  // Columns line up under their headers.
  for (const char* h : {"NAME", "STATUS", "IMAGES", "SELECTOR"}) {
    const size_t at = lines[0].find(std::string(" ") + h) + 1;
    EXPECT_NE(lines[1][at], ' ') << h;
    EXPECT_EQ(lines[1][at - 1], ' ') << h;
  }

  // Without -A there is no NAMESPACE, and wide alone does not add it, as in kubectl.
  EXPECT_EQ(words_of(lines_of(batch_jobs_table(jobs, true, kNow))[0])[0], "NAME");
  EXPECT_EQ(batch_jobs_table({}, false, kNow), "No resources found.");
}

TEST(RenderBatchJob, DescribeReadsLikeKubectls) {
  Job job = complete_job();
  job.spec.labels = {{"team", "vision"}, {"app", "train"}};
  job.spec.ttl_seconds_after_finished = 100;
  job.spec.active_deadline_seconds = 3600;
  job.spec.tasks[0].template_.labels = {{"app", "train"}};
  auto& container = job.spec.tasks[0].template_.containers[0];
  container.args = {"--epochs", "3"};
  container.env = {{"MODE", "fast"}};
  container.requests.values = {{"cpu", 500}};
  job.events = {{kCreated + 5000, "Normal", "SuccessfulCreate", "Created pod: done-0-abcde"},
                {kCreated + 65000, "Normal", "Completed", "Job completed"}};
  Pod pod;
  pod.name = "done-0-abcde";
  pod.phase = PodPhase::Succeeded;
  pod.node = "node-a";
  EXPECT_EQ(describe_batch_job(job, {pod}, kNow),
            "Name:                        done\n"
            "Namespace:                   ml\n"
            "Selector:                    batch.kubernetes.io/controller-uid=uid-1\n"
            "Labels:                      app=train\n"
            "                             team=vision\n"
            "Annotations:                 <none>\n"
            "Parallelism:                 2\n"
            "Completions:                 5\n"
            "Completion Mode:             NonIndexed\n"
            "Suspend:                     false\n"
            "Backoff Limit:               6\n"
            "TTL Seconds After Finished:  100\n"
            "Start Time:                  Tue, 14 Nov 2023 22:13:25 +0000\n"
            "Completed At:                Tue, 14 Nov 2023 22:14:25 +0000\n"
            "Duration:                    60s\n"
            "Active Deadline Seconds:     3600s\n"
            "Pods Statuses:               0 Active (0 Ready) / 5 Succeeded / 0 Failed\n"
            "Pod Template:\n"
            "  Labels:  app=train\n"
            "  Containers:\n"
            "   main:\n"
            "    Image:  busybox:1.36\n"
            "    Command:\n"
            "      sh\n"
            "      -c\n"
            "      echo done\n"
            "    Args:\n"
            "      --epochs\n"
            "      3\n"
            "    Requests:\n"
            "      cpu:  500m\n"
            "    Environment:\n"
            "      MODE:  fast\n"
            "Conditions:\n"
            "  Type                Status  Reason\n"
            "  ----                ------  ------\n"
            "  SuccessCriteriaMet  True    CompletionsReached\n"
            "  Complete            True    CompletionsReached\n"
            "Pods:\n"
            "  NAME           PHASE       NODE\n"
            "  done-0-abcde   Succeeded   node-a\n"
            "Events:\n"
            "  TYPE     REASON             AGE     MESSAGE\n"
            "  Normal   SuccessfulCreate   9m55s   Created pod: done-0-abcde\n"
            "  Normal   Completed          8m55s   Job completed\n");
}

TEST(RenderBatchJob, DescribeShowsAWorkQueueAndAnIndexedJobsIndexes) {
  std::string queue =
      describe_batch_job(make_job(with_counts("queue", 3, {}), running(3, 0)), {}, kNow);
  EXPECT_TRUE(has_line(queue, "Completions:      <unset>")) << queue;
  EXPECT_TRUE(has_line(queue, "Start Time:       Tue, 14 Nov 2023 22:13:21 +0000")) << queue;
  EXPECT_TRUE(has_line(queue, "Pods Statuses:    3 Active (3 Ready) / 0 Succeeded / 0 Failed"))
      << queue;
  // kubectl gives a duration only once the job is complete.
  EXPECT_EQ(queue.find("Duration:"), std::string::npos) << queue;
  EXPECT_EQ(queue.find("Completed Indexes:"), std::string::npos) << queue;
  EXPECT_EQ(queue.find("Conditions:"), std::string::npos) << queue;
  EXPECT_TRUE(has_line(queue, "Pods:")) << queue;
  EXPECT_TRUE(has_line(queue, "Events:")) << queue;
  EXPECT_TRUE(has_line(queue, "Labels:           <none>")) << queue;
  EXPECT_TRUE(has_line(queue, "  Labels:  <none>")) << queue;
  EXPECT_TRUE(has_line(queue, "    Environment:  <none>")) << queue;

  BatchJobSpec s = with_counts("shards", 2, 8);
  s.completion_mode = "Indexed";
  s.backoff_limit_per_index = 1;
  BatchJobStatus st = running(2, 5);
  st.completed_indexes = "0-3,5";
  std::string indexed = describe_batch_job(make_job(s, st), {}, kNow);
  EXPECT_TRUE(has_line(indexed, "Completion Mode:    Indexed")) << indexed;
  EXPECT_TRUE(has_line(indexed, "Backoff Limit:      2147483647")) << indexed;
  EXPECT_TRUE(has_line(indexed, "Completed Indexes:  0-3,5")) << indexed;
  EXPECT_TRUE(has_line(indexed, "Failed Indexes:     <none>")) << indexed;

  // A long list is cut, as kubectl cuts it, at the first comma past 50 characters.
  std::string many;
  for (int i = 0; i < 40; i += 2) many += (many.empty() ? "" : ",") + std::to_string(i);
  st.completed_indexes = many;
  indexed = describe_batch_job(make_job(s, st), {}, kNow);
  EXPECT_TRUE(
      has_line(indexed, "Completed Indexes:  " + many.substr(0, many.find(',', 50) + 1) + "..."))
      << indexed;
}

}  // namespace
}  // namespace caldera
