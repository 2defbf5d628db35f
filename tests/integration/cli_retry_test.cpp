// The CLI while the coordinator cannot be reached: a worker's gateway answers `unavailable`, and
// the CLI waits for the coordinator (saying so) for up to --retry-for, then gives up with that
// error; a coordinator restarted in time answers the requests that waited for it. Two real
// calderad processes from one cluster config: node-1 the coordinator, node-2 a worker.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "harness.hpp"

namespace caldera::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

std::string job_yaml(const std::string& name) {
  return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: " + name +
         "}\nspec:\n  tasks:\n    - name: main\n      replicas: 1\n      template: {spec: "
         "{containers: [{name: main, command: [sh, -c, \"sleep 600\"], resources: {requests: "
         "{cpu: 100m}}}]}}\n";
}

class BackgroundCli {
 public:
  BackgroundCli(const std::string& dir, const std::string& name, const std::string& server,
                const std::vector<std::string>& args, const std::string& input = {})
      : err_path_(dir + "/" + name + ".err") {
    std::vector<std::string> argv{
        "/bin/sh",        "-c",       "exec \"$0\" \"$@\" 2>'" + err_path_ + "'",
        CALDERA_CLI_PATH, "--server", server};
    argv.insert(argv.end(), args.begin(), args.end());
    thread_ = std::thread([this, argv, input] { result_ = run(argv, input); });
  }
  ~BackgroundCli() {
    if (thread_.joinable()) thread_.join();
  }
  std::string err() const { return slurp(err_path_); }
  // Waits for it to end.
  CommandResult result() {
    if (thread_.joinable()) thread_.join();
    result_.err = err();
    return result_;
  }

 private:
  std::string err_path_;
  CommandResult result_;
  std::thread thread_;
};

class CliRetry : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::vector<std::string> names{"node-1", "node-2"};
    std::string y =
        "cluster:\n  name: retry\n  coordinator: node-1\n  heartbeatInterval: 500ms\n"
        "  heartbeatTimeout: 2s\nnodes:\n";
    for (const auto& n : names)
      y += "  - name: " + n +
           "\n    host: 127.0.0.1\n    clientPort: " + std::to_string(free_port()) +
           "\n    clusterPort: " + std::to_string(free_port()) + "\n    dataDir: " + dir_.path() +
           "/" + n + "\n    resources: {cpu: 2, memory: 4Gi, pods: 20}\n";
    config_ = write_file(dir_.path(), "cluster.yaml", y);
    coordinator_ = std::make_unique<Calderad>(
        dir_.path() + "/node-1", std::vector<std::string>{"--config", config_, "--node", "node-1"});
    worker_ = std::make_unique<Calderad>(
        dir_.path() + "/node-2", std::vector<std::string>{"--config", config_, "--node", "node-2"});
    coordinator_->start();
    worker_->start();  // it answers get nodes: its link to the coordinator is up
  }

  // kill -9 of the coordinator; returns once the worker's gateway answers `unavailable`.
  void kill_coordinator() {
    coordinator_->kill9();
    CommandResult r;
    ASSERT_TRUE(eventually(
        [&] {
          r = worker_->cli({"get", "jobs", "--retry-for", "0"});
          return r.exit_code != 0 && contains(r.err, "unavailable");
        },
        20s))
        << r.exit_code << " " << r.err << worker_->log();
  }

  // Returns once `cli` has said that it waits for the coordinator.
  void expect_waiting(const BackgroundCli& cli) {
    EXPECT_TRUE(eventually([&] { return contains(cli.err(), "waiting for the coordinator"); }, 20s))
        << cli.err();
  }

  TempDir dir_;
  std::string config_;
  std::unique_ptr<Calderad> coordinator_, worker_;
};

TEST_F(CliRetry, GivesUpAfterRetryForWithTheUnavailableError) {
  kill_coordinator();
  auto start = Clock::now();
  auto r = worker_->cli({"get", "jobs", "--retry-for", "1s"});
  auto took = Clock::now() - start;
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.err, "waiting for the coordinator (unavailable: ")) << r.err;
  EXPECT_TRUE(contains(r.err, "retrying for up to 1s")) << r.err;
  EXPECT_TRUE(contains(r.err, "error (unavailable): ")) << r.err;
  EXPECT_TRUE(contains(r.err, "gave up after")) << r.err;
  // Said once: it repeats itself only every 5 s.
  EXPECT_EQ(r.err.find("waiting for"), r.err.rfind("waiting for")) << r.err;
  EXPECT_GE(took, 1s);
  EXPECT_LT(took, 5s) << seconds(took) << " s";

  // The same budget from the environment; the flag wins over it.
  ::setenv("CALDERA_RETRY_FOR", "1s", 1);
  auto from_env = worker_->cli({"get", "jobs"});
  auto at_once = worker_->cli({"get", "jobs", "--retry-for=0"});
  ::unsetenv("CALDERA_RETRY_FOR");
  EXPECT_NE(from_env.exit_code, 0);
  EXPECT_TRUE(contains(from_env.err, "retrying for up to 1s")) << from_env.err;
  EXPECT_NE(at_once.exit_code, 0);
  EXPECT_FALSE(contains(at_once.err, "waiting for")) << at_once.err;
}

TEST_F(CliRetry, RetryForZeroFailsAtOnce) {
  kill_coordinator();
  auto start = Clock::now();
  auto r = worker_->cli({"--retry-for", "0", "get", "jobs"});
  auto took = Clock::now() - start;
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.err, "error (unavailable): the coordinator")) << r.err;
  EXPECT_FALSE(contains(r.err, "waiting for")) << r.err;
  EXPECT_LT(took, 3s) << seconds(took) << " s";

  // No server at all: the same, with the connection's error.
  auto down = run(
      {CALDERA_CLI_PATH, "--server", coordinator_->server(), "get", "jobs", "--retry-for", "0"});
  EXPECT_NE(down.exit_code, 0);
  EXPECT_TRUE(contains(down.err, "cannot connect")) << down.err;
  EXPECT_FALSE(contains(down.err, "waiting for")) << down.err;

  auto bad = worker_->cli({"get", "jobs", "--retry-for", "soon"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_TRUE(contains(bad.err, "--retry-for must be a duration")) << bad.err;
}

TEST_F(CliRetry, AReadWaitsForTheCoordinatorToComeBack) {
  auto submitted = worker_->cli({"submit", "-f", "-"}, job_yaml("before"));
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  kill_coordinator();
  BackgroundCli get(dir_.path(), "get", worker_->server(),
                    {"get", "jobs", "-o", "name", "--retry-for", "60s"});
  expect_waiting(get);
  coordinator_->start();
  auto r = get.result();
  EXPECT_EQ(r.exit_code, 0) << r.err << worker_->log();
  EXPECT_EQ(r.out, "job.batch.volcano.sh/before\n") << r.err;
  EXPECT_TRUE(contains(r.err, "retrying for up to 60s")) << r.err;
  EXPECT_FALSE(contains(r.err, "error")) << r.err;
}

// A submit the worker did not forward and a delete: both wait for the coordinator and act once.
TEST_F(CliRetry, WritesWaitForTheCoordinatorToComeBack) {
  auto submitted = worker_->cli({"submit", "-f", "-"}, job_yaml("before"));
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  kill_coordinator();
  BackgroundCli submit(dir_.path(), "submit", worker_->server(),
                       {"submit", "-f", "-", "--retry-for", "60s"}, job_yaml("after"));
  BackgroundCli del(dir_.path(), "delete", worker_->server(),
                    {"delete", "job", "before", "--retry-for", "60s"});
  expect_waiting(submit);
  expect_waiting(del);
  coordinator_->start();
  auto s = submit.result();
  EXPECT_EQ(s.exit_code, 0) << s.err << worker_->log();
  EXPECT_EQ(s.out, "job.batch.volcano.sh/after created\n") << s.err;
  auto d = del.result();
  EXPECT_EQ(d.exit_code, 0) << d.err << worker_->log();
  EXPECT_EQ(d.out, "job.batch.volcano.sh \"before\" deleted\n") << d.err;
  auto jobs = worker_->cli({"get", "jobs", "-o", "name"});
  EXPECT_EQ(jobs.out, "job.batch.volcano.sh/after\n") << jobs.err;
}

// ---- What an attempt that may have been carried out means for a write ----

}  // namespace
}  // namespace caldera::testing
