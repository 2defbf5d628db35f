// Lifecycle policies, delayed actions, dependsOn, deadlines, TTL and client commands on one real
// node, checked through the CLI's Volcano JSON and, where whole seconds are too coarse, through
// the API's millisecond times.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "client/client.hpp"
#include "messages/codec/codec.hpp"
#include "node_test.hpp"

namespace caldera::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

int64_t wall_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// Processes whose command line holds `needle`: a pod's shell still alive.
int processes_mentioning(const std::string& needle) {
  int n = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    // Through rdbuf: a process gone mid-read is a failed stream, not an exception (ESRCH).
    std::ifstream in(entry.path() / "cmdline");
    std::stringstream read;
    read << in.rdbuf();
    const std::string cmdline = read.str();
    if (cmdline.find(needle) != std::string::npos) ++n;
  }
  return n;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// `date +%s%N` written by a pod: nanoseconds since the epoch.
int64_t nanos_in(const std::string& path) {
  auto lines = lines_of(path);
  EXPECT_EQ(lines.size(), 1u) << path;
  return lines.empty() ? 0 : std::stoll(lines[0]);
}

// The phases the job's conditions went through, oldest first, space-separated.
std::string condition_phases(const json& job) {
  std::string out;
  for (const auto& c : job["status"]["conditions"])
    out += (out.empty() ? "" : " ") + c["status"].get<std::string>();
  return out;
}

// The JSON's times (whole seconds): every condition has one, they never go back, and the state's
// lastTransitionTime is the newest condition's.
void expect_json_times_ordered(const json& job) {
  const auto& conditions = job["status"]["conditions"];
  ASSERT_FALSE(conditions.empty()) << job.dump();
  std::string created = job["metadata"]["creationTimestamp"];
  std::string previous = created;
  for (const auto& c : conditions) {
    std::string t = c["lastTransitionTime"];
    EXPECT_LE(previous, t) << job.dump();  // RFC 3339 in UTC: text order is time order
    previous = t;
  }
  EXPECT_EQ(job["status"]["state"]["lastTransitionTime"], conditions.back()["lastTransitionTime"]);
  EXPECT_EQ(job["status"]["state"]["phase"], conditions.back()["status"]);
}

// The same in milliseconds, from the API.
void expect_times_ordered(const Job& job) {
  ASSERT_FALSE(job.status.conditions.empty());
  int64_t previous = job.created_ms;
  for (const auto& c : job.status.conditions) {
    EXPECT_LE(previous, c.last_transition_ms) << to_string(c.status);
    previous = c.last_transition_ms;
  }
  EXPECT_EQ(job.status.state.last_transition_ms, job.status.conditions.back().last_transition_ms);
  EXPECT_EQ(job.status.state.phase, job.status.conditions.back().status);
}

// When the job last entered `phase` (ms), or 0.
int64_t entered_ms(const Job& job, JobPhase phase) {
  int64_t at = 0;
  for (const auto& c : job.status.conditions)
    if (c.status == phase) at = c.last_transition_ms;
  return at;
}

std::string task_yaml(const std::string& name, int replicas, const std::string& script,
                      const std::string& extra = "", const std::string& cpu = "") {
  std::string out = "    - name: " + name + "\n      replicas: " + std::to_string(replicas) + "\n";
  out += extra;
  out += "      template:\n        spec:\n          containers:\n";
  out += "            - name: main\n              command: [sh, -c, \"" + script + "\"]\n";
  if (!cpu.empty()) out += "              resources: {requests: {cpu: \"" + cpu + "\"}}\n";
  return out;
}

std::string job_yaml(const std::string& name, const std::string& spec, const std::string& tasks) {
  return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: " + name +
         "}\nspec:\n" + spec + "  tasks:\n" + tasks;
}

class JobPolicies : public NodeTest {
 protected:
  void submit(const std::string& yaml) {
    auto r = node.cli({"submit", "-f", "-"}, yaml);
    ASSERT_EQ(r.exit_code, 0) << r.err << "\n" << yaml;
  }

  // `caldera wait job NAME --for=phase=PHASE`; the message says what went wrong.
  ::testing::AssertionResult reaches(const std::string& job, const std::string& phase,
                                     const std::string& timeout = "30s") {
    auto r = node.cli({"wait", "job", job, "--for=phase=" + phase, "--timeout=" + timeout});
    if (r.exit_code == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << r.err << node.cli({"describe", "job", job}).out;
  }

  // The node's whole cpu: a pod asking for it fits alone, two such pods never fit together.
  std::string whole_cpu() {
    return get_json({"get", "nodes"})["items"][0]["status"]["capacity"]["cpu"].get<std::string>();
  }

  std::unique_ptr<Client> client() {
    auto c = Client::connect(node.server(), 5s);
    EXPECT_TRUE(c) << c.error();
    return c ? std::move(*c) : nullptr;
  }

  // The job as the API holds it: millisecond times, where the JSON shows whole seconds.
  Job job_ms(const std::string& name) {
    auto c = client();
    if (!c) return {};
    auto r = c->call([&](api::Request::Builder b) { b.initGetJob().setName(name); });
    EXPECT_TRUE(r) << r.error();
    if (!r) return {};
    auto resp = (*r)->root<api::Response>();
    EXPECT_EQ(resp.which(), api::Response::JOB);
    return resp.which() == api::Response::JOB ? decode(resp.getJob()) : Job{};
  }

  std::map<std::string, Pod> pods_ms(const std::string& job) {
    std::map<std::string, Pod> out;
    auto c = client();
    if (!c) return out;
    auto r = c->call([&](api::Request::Builder b) { b.initListPods().setJobName(job); });
    EXPECT_TRUE(r) << r.error();
    if (!r) return out;
    auto resp = (*r)->root<api::Response>();
    EXPECT_EQ(resp.which(), api::Response::PODS);
    if (resp.which() != api::Response::PODS) return out;
    for (auto p : resp.getPods()) {
      auto pod = decode(p);
      out[pod.name] = pod;
    }
    return out;
  }

  // A `command` request sent by hand, with the caller's command id.
  std::unique_ptr<FlatReader> command(const std::string& job, const std::string& action,
                                      const std::string& id) {
    auto c = client();
    if (!c) return nullptr;
    auto r = c->call([&](api::Request::Builder b) {
      auto cmd = b.initCommand();
      cmd.getJob().setName(job);
      cmd.setAction(action);
      cmd.setCommandId(id);
    });
    EXPECT_TRUE(r) << r.error();
    return r ? std::move(*r) : nullptr;
  }

  std::string gang_yaml(const std::string& name, const std::string& policies) {
    return job_yaml(name, "  minAvailable: 2\n" + policies,
                    task_yaml("main", 2, "sleep 60", "", whole_cpu()));
  }
};

TEST_F(JobPolicies, RestartJobOnPodFailedRunsThreeTimesThenFailsWithMaxRetryExceeded) {
  auto runs = dir.path() + "/runs";
  submit(job_yaml("retry", "  maxRetry: 2\n  policies: [{event: PodFailed, action: RestartJob}]\n",
                  task_yaml("main", 1, "echo run >> " + runs + "; exit 1")));
  ASSERT_TRUE(reaches("retry", "Failed"));

  EXPECT_EQ(lines_of(runs).size(), 3u);  // maxRetry 2: two restarts, three runs
  auto job = get_json({"get", "job", "retry"});
  EXPECT_EQ(job["status"]["state"]["reason"], "MaxRetryExceeded");
  EXPECT_EQ(job["status"]["retryCount"], 2);
  EXPECT_EQ(job["status"]["version"], 2);
  // A pod can fail before the controller saw it run, so Running is optional in each round.
  std::regex three_rounds(
      "Pending( Running)? Restarting Pending( Running)? Restarting Pending( Running)? Restarting "
      "Failed");
  EXPECT_TRUE(std::regex_match(condition_phases(job), three_rounds)) << condition_phases(job);
  expect_json_times_ordered(job);
  expect_times_ordered(job_ms("retry"));

  // The last run's pod stays visible for inspection.
  auto pods = get_json({"get", "pods", "--job", "retry"})["items"];
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0]["status"]["phase"], "Failed");
  EXPECT_EQ(pods[0]["metadata"]["annotations"]["volcano.sh/job-version"], "2");
  auto describe = node.cli({"describe", "job", "retry"}).out;
  EXPECT_NE(describe.find("PolicyMatched"), std::string::npos) << describe;
  EXPECT_NE(describe.find("MaxRetryExceeded"), std::string::npos) << describe;
}

TEST_F(JobPolicies, ExitCodeThreeTerminatesWithoutARestart) {
  auto runs = dir.path() + "/runs";
  // The exit code policy comes first: the PodFailed one must not act on the same failure.
  submit(job_yaml("exit3",
                  "  maxRetry: 3\n  policies:\n    - {exitCode: 3, action: TerminateJob}\n"
                  "    - {event: PodFailed, action: RestartJob}\n",
                  task_yaml("main", 1, "echo run >> " + runs + "; exit 3")));
  ASSERT_TRUE(reaches("exit3", "Terminated"));

  EXPECT_EQ(lines_of(runs).size(), 1u);
  auto job = get_json({"get", "job", "exit3"});
  EXPECT_EQ(job["status"]["retryCount"], 0);
  EXPECT_EQ(job["status"]["version"], 0);
  EXPECT_EQ(job["status"]["state"]["reason"], "PodFailed");
  std::regex once("Pending( Running)? Terminating Terminated");
  EXPECT_TRUE(std::regex_match(condition_phases(job), once)) << condition_phases(job);
  expect_json_times_ordered(job);
  expect_times_ordered(job_ms("exit3"));
  auto pods = get_json({"get", "pods", "--job", "exit3"})["items"];
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0]["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 3);
}

TEST_F(JobPolicies, PodPendingTimeoutAbortsAnUnplaceableGangAndAgainAfterResume) {
  submit(gang_yaml("stuck", "  policies: [{event: PodPending, action: AbortJob, timeout: 2s}]\n"));
  ASSERT_TRUE(reaches("stuck", "Aborted", "15s"));

  auto first = job_ms("stuck");
  auto waited = first.status.state.last_transition_ms - first.created_ms;
  EXPECT_GE(waited, 2000);
  EXPECT_LT(waited, 6000);
  expect_times_ordered(first);
  auto job = get_json({"get", "job", "stuck"});
  EXPECT_EQ(condition_phases(job), "Pending Aborting Aborted");
  EXPECT_EQ(job["status"]["state"]["reason"], "PodPending");
  EXPECT_EQ(job["status"]["retryCount"], 0);
  EXPECT_EQ(job["status"]["version"], 0);
  expect_json_times_ordered(job);
  auto describe = node.cli({"describe", "job", "stuck"}).out;
  EXPECT_NE(describe.find("DelayedActionScheduled"), std::string::npos) << describe;
  EXPECT_NE(describe.find("DelayedActionFired"), std::string::npos) << describe;

  auto resume = node.cli({"resume", "job", "stuck"});
  ASSERT_EQ(resume.exit_code, 0) << resume.err;
  job = get_json({"get", "job", "stuck"});
  // Nothing ran, so Restarting is over at once; the new version's pods wait again.
  EXPECT_EQ(condition_phases(job), "Pending Aborting Aborted Restarting Pending");
  EXPECT_EQ(job["status"]["retryCount"], 0);
  EXPECT_EQ(job["status"]["version"], 1);
  expect_json_times_ordered(job);

  ASSERT_TRUE(reaches("stuck", "Aborted", "15s"));
  auto second = job_ms("stuck");
  auto again = second.status.state.last_transition_ms - entered_ms(second, JobPhase::Restarting);
  EXPECT_GE(again, 2000);
  EXPECT_LT(again, 6000);
  expect_times_ordered(second);
  job = get_json({"get", "job", "stuck"});
  EXPECT_EQ(condition_phases(job), "Pending Aborting Aborted Restarting Pending Aborting Aborted");
  EXPECT_EQ(job["status"]["retryCount"], 0);
  EXPECT_EQ(job["status"]["version"], 1);
}

TEST_F(JobPolicies, TaskCompletedOnTheDriverCompletesTheJobAndStopsTheWorkers) {
  // In the workers' command line, to find their shells.
  auto marker = dir.path() + "/worker-marker";
  submit(job_yaml(
      "driven", "",
      task_yaml("driver", 1, "sleep 0.5",
                "      policies: [{event: TaskCompleted, action: CompleteJob}]\n") +
          task_yaml("worker", 2,
                    "touch " + dir.path() + "/worker-$VC_TASK_INDEX; sleep 60; : " + marker)));
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(reaches("driven", "Completed", "30s"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 20s);

  auto job = get_json({"get", "job", "driven"});
  EXPECT_EQ(job["status"]["state"]["reason"], "TaskCompleted");
  EXPECT_EQ(condition_phases(job), "Pending Running Completing Completed");
  expect_json_times_ordered(job);
  auto ms = job_ms("driven");
  expect_times_ordered(ms);
  EXPECT_LT(ms.status.state.last_transition_ms - ms.created_ms, 20000);

  // The killed workers are gone, as Volcano deletes the pods it kills; the driver stays.
  auto pods = get_json({"get", "pods", "--job", "driven"})["items"];
  ASSERT_EQ(pods.size(), 1u) << pods.dump();
  EXPECT_EQ(pods[0]["metadata"]["name"], "driven-driver-0");
  EXPECT_EQ(pods[0]["status"]["phase"], "Succeeded");
  EXPECT_EQ(job["status"]["succeeded"], 1);
  // The workers had started, and they are stopped.
  EXPECT_TRUE(fs::exists(dir.path() + "/worker-0") && fs::exists(dir.path() + "/worker-1"));
  EXPECT_TRUE(eventually([&] { return processes_mentioning(marker) == 0; }, 10s));
  EXPECT_EQ(job["status"]["running"], 0);
}

TEST_F(JobPolicies, WorkersStartOnlyOnceTheLoaderRuns) {
  auto loader = dir.path() + "/loader";
  submit(
      job_yaml("deps", "  minAvailable: 1\n",
               task_yaml("loader", 1, "date +%s%N > " + loader + "; sleep 2") +
                   task_yaml("worker", 2, "date +%s%N > " + dir.path() + "/worker-$VC_TASK_INDEX",
                             "      dependsOn: {name: [loader]}\n")));
  ASSERT_TRUE(reaches("deps", "Completed"));

  // The job's Running condition is when the controller saw the loader run (minAvailable 1): the
  // workers were created, and their processes started, no earlier, and every worker's process
  // started after the loader's did.
  auto pods = pods_ms("deps");
  ASSERT_EQ(pods.size(), 3u);
  const Pod& l = pods.at("deps-loader-0");
  auto job = job_ms("deps");
  auto running = entered_ms(job, JobPhase::Running);
  ASSERT_GT(running, 0);
  EXPECT_GE(nanos_in(loader) / 1'000'000, l.created_ms);
  for (int i = 0; i < 2; ++i) {
    auto name = "deps-worker-" + std::to_string(i);
    EXPECT_GE(pods.at(name).created_ms, running) << name;
    EXPECT_LT(pods.at(name).created_ms, l.finished_ms) << name << ": Running is enough";
    EXPECT_GE(nanos_in(dir.path() + "/worker-" + std::to_string(i)) / 1'000'000, running) << name;
    EXPECT_GT(nanos_in(dir.path() + "/worker-" + std::to_string(i)), nanos_in(loader)) << name;
    EXPECT_GE(pods.at(name).created_ms, l.started_ms) << name;
  }
  expect_times_ordered(job);
  auto json_job = get_json({"get", "job", "deps"});
  ASSERT_EQ(condition_phases(json_job), "Pending Running Completed");
  std::string running_at = json_job["status"]["conditions"][1]["lastTransitionTime"];
  // Named: a range-for over a member of a temporary would dangle.
  auto listed = get_json({"get", "pods", "--job", "deps"});
  int workers = 0;
  for (const auto& p : listed["items"]) {
    if (p["metadata"]["labels"]["volcano.sh/task-spec"] != "worker") continue;
    ++workers;
    EXPECT_LE(running_at, p["metadata"]["creationTimestamp"].get<std::string>()) << p.dump();
  }
  EXPECT_EQ(workers, 2);
}

// A pod is Running once its supervisor has started its containers (it says so on a pipe), not
// when the supervisor itself was spawned: the start a client sees while the pod runs is the one
// the record keeps afterwards, and dependsOn never lets a worker start before its loader.
TEST_F(JobPolicies, APodIsReportedRunningOnlyOnceItsContainerStarted) {
  submit(job_yaml("steady", "", task_yaml("main", 1, "sleep 1")));
  Pod running;
  ASSERT_TRUE(eventually([&] {
    auto pods = pods_ms("steady");
    if (pods.size() != 1 || pods.begin()->second.phase != PodPhase::Running) return false;
    running = pods.begin()->second;
    return true;
  }));
  ASSERT_TRUE(reaches("steady", "Completed"));
  auto pods = pods_ms("steady");
  ASSERT_EQ(pods.size(), 1u);
  const Pod& ended = pods.begin()->second;
  EXPECT_EQ(ended.started_ms, running.started_ms);
  ASSERT_EQ(ended.containers.size(), 1u);
  ASSERT_EQ(running.containers.size(), 1u);
  EXPECT_EQ(ended.containers[0].started_ms, running.containers[0].started_ms);
}

TEST_F(JobPolicies, WithConditionSucceededWorkersStartOnlyOnceTheLoaderSucceeded) {
  auto loader = dir.path() + "/loader";
  submit(
      job_yaml("dag", "  minAvailable: 1\n",
               task_yaml("loader", 1, "sleep 1; date +%s%N > " + loader) +
                   task_yaml("worker", 2, "date +%s%N > " + dir.path() + "/worker-$VC_TASK_INDEX",
                             "      dependsOn: {name: [loader], condition: Succeeded}\n")));
  ASSERT_TRUE(reaches("dag", "Completed"));

  auto loader_done = nanos_in(loader);
  for (int i = 0; i < 2; ++i)
    EXPECT_GT(nanos_in(dir.path() + "/worker-" + std::to_string(i)), loader_done) << i;
  auto pods = pods_ms("dag");
  ASSERT_EQ(pods.size(), 3u);
  const Pod& l = pods.at("dag-loader-0");
  ASSERT_EQ(l.phase, PodPhase::Succeeded);
  for (auto name : {"dag-worker-0", "dag-worker-1"})
    EXPECT_GE(pods.at(name).created_ms, l.finished_ms) << name;
  expect_times_ordered(job_ms("dag"));
}

TEST_F(JobPolicies, ActiveDeadlineTerminatesALongJob) {
  submit(job_yaml("late", "  activeDeadlineSeconds: 2\n", task_yaml("main", 1, "sleep 60")));
  ASSERT_TRUE(reaches("late", "Terminated", "15s"));

  auto job = get_json({"get", "job", "late"});
  EXPECT_EQ(job["status"]["state"]["reason"], "DeadlineExceeded");
  EXPECT_EQ(condition_phases(job), "Pending Running Terminating Terminated");
  expect_json_times_ordered(job);
  auto ms = job_ms("late");
  expect_times_ordered(ms);
  // The deadline counts from the job's creation.
  EXPECT_GE(entered_ms(ms, JobPhase::Terminating) - ms.created_ms, 2000);
  EXPECT_LT(ms.status.state.last_transition_ms - ms.created_ms, 6000);
  // Terminated only once the pod ended; killed by the controller, it is gone from the list.
  EXPECT_EQ(job["status"]["running"], 0);
  EXPECT_TRUE(get_json({"get", "pods", "--job", "late"})["items"].empty());
  auto describe = node.cli({"describe", "job", "late"}).out;
  EXPECT_NE(describe.find("DeadlineExceeded"), std::string::npos) << describe;
}

TEST_F(JobPolicies, TtlAfterFinishedDeletesTheJobAndItsLogs) {
  submit(job_yaml("brief", "  ttlSecondsAfterFinished: 1\n", task_yaml("main", 1, "echo bye")));
  // Not `caldera wait`: the job may be gone before a slow poll sees it Completed.
  json pod;
  ASSERT_TRUE(eventually(
      [&] {
        auto items = get_json({"get", "pods", "--job", "brief"})["items"];
        if (items.size() != 1 || items[0]["status"]["phase"] != "Succeeded") return false;
        pod = items[0];
        return true;
      },
      20s));
  // The job's record follows its pod's by a moment (a fresh clone on a loaded machine read it
  // still Running once), and is deleted a second after it is Completed.
  Job job;
  ASSERT_TRUE(eventually(
      [&] {
        job = job_ms("brief");
        return job.status.state.phase == JobPhase::Completed;
      },
      5s));
  auto log_dir = data + "/pods/" + pod["metadata"]["uid"].get<std::string>();
  EXPECT_TRUE(fs::exists(log_dir)) << log_dir;

  ASSERT_TRUE(eventually(
      [&] {
        auto r = node.cli({"get", "job", "brief"});
        return r.exit_code != 0 && r.err.find("not found") != std::string::npos;
      },
      10s))
      << node.log();
  auto gone_by = wall_ms() - job.status.state.last_transition_ms;
  EXPECT_GE(gone_by, 1000);  // not before the TTL
  EXPECT_LT(gone_by, 6000);
  EXPECT_TRUE(eventually([&] { return !fs::exists(log_dir); }, 10s)) << log_dir;
  EXPECT_TRUE(get_json({"get", "pods"})["items"].empty());
  EXPECT_NE(node.cli({"logs", "brief-main-0"}).exit_code, 0);
}

TEST_F(JobPolicies, AbortResumeAndRestartCommands) {
  auto marker = dir.path() + "/cmd-marker";
  submit(job_yaml("cmd", "", task_yaml("main", 2, "sleep 60; : " + marker)));
  ASSERT_TRUE(reaches("cmd", "Running"));
  ASSERT_TRUE(eventually([&] { return processes_mentioning(marker) == 2; }));

  auto abort = node.cli({"abort", "job", "cmd"});
  ASSERT_EQ(abort.exit_code, 0) << abort.err;
  ASSERT_TRUE(reaches("cmd", "Aborted"));
  auto job = get_json({"get", "job", "cmd"});
  EXPECT_EQ(job["status"]["state"]["reason"], "CommandIssued");
  EXPECT_EQ(job["status"]["running"], 0);
  EXPECT_EQ(job["status"]["terminating"], 0);
  EXPECT_TRUE(get_json({"get", "pods", "--job", "cmd"})["items"].empty());  // killed: gone
  EXPECT_TRUE(eventually([&] { return processes_mentioning(marker) == 0; }, 10s));

  ASSERT_EQ(node.cli({"resume", "job", "cmd"}).exit_code, 0);
  ASSERT_TRUE(reaches("cmd", "Running"));
  job = get_json({"get", "job", "cmd"});
  EXPECT_EQ(job["status"]["retryCount"], 0);
  EXPECT_EQ(job["status"]["version"], 1);
  auto pods = get_json({"get", "pods", "--job", "cmd"})["items"];
  ASSERT_EQ(pods.size(), 2u);
  for (const auto& p : pods)
    EXPECT_EQ(p["metadata"]["annotations"]["volcano.sh/job-version"], "1") << p.dump();

  ASSERT_EQ(node.cli({"restart", "job", "cmd"}).exit_code, 0);
  // The command answers once the restart is under way; wait for its new version to run.
  ASSERT_TRUE(eventually([&] {
    auto j = get_json({"get", "job", "cmd"});
    return j["status"]["version"] == 2 && j["status"]["state"]["phase"] == "Running";
  }));
  job = get_json({"get", "job", "cmd"});
  EXPECT_EQ(job["status"]["retryCount"], 0);  // user commands never consume retries
  EXPECT_EQ(condition_phases(job),
            "Pending Running Aborting Aborted Restarting Pending Running Restarting Pending "
            "Running");
  expect_json_times_ordered(job);
  expect_times_ordered(job_ms("cmd"));
  auto describe = node.cli({"describe", "job", "cmd"}).out;
  EXPECT_NE(describe.find("CommandIssued"), std::string::npos) << describe;
}

TEST_F(JobPolicies, ACommandIdActsOnceAndBadCommandsAreRefused) {
  submit(job_yaml("once", "", task_yaml("main", 1, "sleep 60")));
  ASSERT_TRUE(reaches("once", "Running"));
  ASSERT_EQ(node.cli({"abort", "job", "once"}).exit_code, 0);
  ASSERT_TRUE(reaches("once", "Aborted"));
  auto before = get_json({"get", "job", "once"})["status"]["version"].get<int>();

  for (int i = 0; i < 2; ++i) {
    auto r = command("once", "ResumeJob", "fixed-id");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->root<api::Response>().which(), api::Response::OK) << i;
  }
  EXPECT_EQ(get_json({"get", "job", "once"})["status"]["version"], before + 1);
  ASSERT_TRUE(reaches("once", "Running"));

  // Aborted again, the same id still does nothing: a second ResumeJob would act here.
  ASSERT_EQ(node.cli({"abort", "job", "once"}).exit_code, 0);
  ASSERT_TRUE(reaches("once", "Aborted"));
  auto r = command("once", "ResumeJob", "fixed-id");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->root<api::Response>().which(), api::Response::OK);
  auto job = get_json({"get", "job", "once"});
  EXPECT_EQ(job["status"]["state"]["phase"], "Aborted");
  EXPECT_EQ(job["status"]["version"], before + 1);

  r = command("once", "Explode", "another-id");
  ASSERT_TRUE(r);
  auto resp = r->root<api::Response>();
  ASSERT_EQ(resp.which(), api::Response::ERRORS);
  ASSERT_EQ(resp.getErrors().size(), 1u);
  EXPECT_EQ(resp.getErrors()[0].getCode(), api::Error::Code::INVALID_ARGUMENT);
  EXPECT_EQ(std::string(resp.getErrors()[0].getPath().cStr()), "command.action");
  EXPECT_EQ(get_json({"get", "job", "once"})["status"]["version"], before + 1);

  r = command("missing", "AbortJob", "third-id");
  ASSERT_TRUE(r);
  resp = r->root<api::Response>();
  ASSERT_EQ(resp.which(), api::Response::ERRORS);
  ASSERT_EQ(resp.getErrors().size(), 1u);
  EXPECT_EQ(resp.getErrors()[0].getCode(), api::Error::Code::NOT_FOUND);
  auto cli = node.cli({"terminate", "job", "missing"});
  EXPECT_NE(cli.exit_code, 0);
  EXPECT_NE(cli.err.find("not found"), std::string::npos) << cli.err;
}

}  // namespace
}  // namespace caldera::testing
