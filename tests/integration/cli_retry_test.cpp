// The CLI while the coordinator cannot be reached: a worker's gateway answers `unavailable`, and
// the CLI waits for the coordinator (saying so) for up to --retry-for, then gives up with that
// error; a coordinator restarted in time answers the requests that waited for it. Two real
// calderad processes from one cluster config: node-1 the coordinator, node-2 a worker.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
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

#include <capnp/message.h>
#include <gtest/gtest.h>

#include "harness.hpp"
#include "messages/api.capnp.h"
#include "messages/flat.hpp"

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

// ---- A stand-in gateway: the answers that cannot be had on demand from a real cluster ----

// Answers the requests on its port, one connection at a time on its own thread, with what
// `answer` makes of each (the request and how many came before it).
class ScriptedGateway {
 public:
  using Answer = std::function<std::string(api::Request::Reader, int)>;
  explicit ScriptedGateway(Answer answer) : answer_(std::move(answer)) {
    listen_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (::bind(listen_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        ::listen(listen_, 8) != 0 ||
        ::getsockname(listen_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      throw std::runtime_error("scripted gateway: cannot listen");
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~ScriptedGateway() {
    stop_ = true;
    thread_.join();
    ::close(listen_);
  }
  std::string server() const { return "127.0.0.1:" + std::to_string(port_); }
  // The command ids of the Command requests, in order.
  std::vector<std::string> command_ids() {
    std::lock_guard lock(mutex_);
    return command_ids_;
  }
  int requests() const { return requests_; }

 private:
  bool readable(int fd) {
    pollfd p{fd, POLLIN, 0};
    while (!stop_)
      if (::poll(&p, 1, 50) > 0) return true;
    return false;
  }

  static uint32_t le32(const std::string& b, size_t at) {
    const auto* u = reinterpret_cast<const unsigned char*>(b.data() + at);
    return uint32_t(u[0]) | uint32_t(u[1]) << 8 | uint32_t(u[2]) << 16 | uint32_t(u[3]) << 24;
  }

  // The size of the whole frame at the front of `b`, or 0 while more bytes are needed.
  static size_t frame_size(const std::string& b) {
    if (b.size() < 4) return 0;
    size_t segments = size_t(le32(b, 0)) + 1;
    size_t header = (4 + 4 * segments + 7) & ~size_t(7);
    if (b.size() < header) return 0;
    size_t words = 0;
    for (size_t i = 0; i < segments; ++i) words += le32(b, 4 + 4 * i);
    return b.size() >= header + words * 8 ? header + words * 8 : 0;
  }

  void serve() {
    while (readable(listen_)) {
      int fd = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      std::string buffer;
      char chunk[4096];
      while (readable(fd)) {
        ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
        if (n <= 0) break;
        buffer.append(chunk, static_cast<size_t>(n));
        while (size_t size = frame_size(buffer)) {
          FlatReader reader(std::string_view(buffer).substr(0, size));
          auto req = reader.root<api::Request>();
          if (req.isCommand()) {
            std::lock_guard lock(mutex_);
            command_ids_.push_back(req.getCommand().getCommandId());
          }
          auto reply = answer_(req, requests_++);
          buffer.erase(0, size);
          ::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
        }
      }
      ::close(fd);
    }
  }

  Answer answer_;
  int listen_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  std::mutex mutex_;
  std::vector<std::string> command_ids_;
  std::thread thread_;
};

std::string error_answer(api::Request::Reader req, api::Error::Code code,
                         const std::string& message) {
  capnp::MallocMessageBuilder message_builder;
  auto resp = message_builder.initRoot<api::Response>();
  resp.setId(req.getId());
  auto e = resp.initErrors(1)[0];
  e.setCode(code);
  e.setMessage(message);
  return to_bytes(message_builder);
}

std::string ok_answer(api::Request::Reader req) {
  capnp::MallocMessageBuilder message_builder;
  auto resp = message_builder.initRoot<api::Response>();
  resp.setId(req.getId());
  resp.setOk();
  return to_bytes(message_builder);
}

// A worker's answers: the request was not forwarded, or it was and the coordinator was lost.
const std::string kNotForwarded = "the coordinator cannot be reached from node node-2; retry";
const std::string kMaybeTaken =
    "the coordinator was lost (connection lost: remote node down) while it had the request; "
    "retry";

// The CLI against a stand-in gateway.
CommandResult cli_at(const ScriptedGateway& gateway, std::vector<std::string> args,
                     const std::string& input = {}) {
  args.insert(args.begin(), {CALDERA_CLI_PATH, "--server", gateway.server()});
  return run(args, input);
}

// The caldera CLI against `server` on a thread of its own (harness run() blocks), its stderr in
// a file so that the test can see it waiting before it ends.
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

TEST(CliRetryAnswers, ADeleteThatFindsTheObjectGoneAfterAnAmbiguousAttemptSucceeds) {
  ScriptedGateway gateway([](api::Request::Reader req, int n) {
    return n == 0 ? error_answer(req, api::Error::Code::UNAVAILABLE, kMaybeTaken)
                  : error_answer(req, api::Error::Code::NOT_FOUND,
                                 "jobs.batch.volcano.sh \"x\" not found in namespace default");
  });
  auto r = cli_at(gateway, {"delete", "job", "x"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "job.batch.volcano.sh \"x\" deleted\n");
  EXPECT_TRUE(contains(r.err, "waiting for the coordinator (unavailable: the coordinator was lost"))
      << r.err;
  EXPECT_TRUE(contains(r.err,
                       "Warning: job.batch.volcano.sh \"x\" was not found when the delete "
                       "was sent again"))
      << r.err;
  EXPECT_EQ(gateway.requests(), 2);
}

TEST(CliRetryAnswers, ADeleteNotForwardedThenNotFoundIsNotFound) {
  ScriptedGateway gateway([](api::Request::Reader req, int n) {
    return n == 0 ? error_answer(req, api::Error::Code::UNAVAILABLE, kNotForwarded)
                  : error_answer(req, api::Error::Code::NOT_FOUND,
                                 "jobs.batch.volcano.sh \"x\" not found in namespace default");
  });
  auto r = cli_at(gateway, {"delete", "job", "x"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(contains(r.err, "error (not found): jobs.batch.volcano.sh \"x\" not found")) << r.err;
}

TEST(CliRetryAnswers, ASubmitThatFindsItsJobAfterAnAmbiguousAttemptSaysItMayBeItsOwn) {
  ScriptedGateway gateway([](api::Request::Reader req, int n) {
    return n == 0 ? error_answer(req, api::Error::Code::UNAVAILABLE, kMaybeTaken)
                  : error_answer(req, api::Error::Code::ALREADY_EXISTS,
                                 "jobs.batch.volcano.sh \"x\" already exists in namespace default");
  });
  auto r = cli_at(gateway, {"submit", "-f", "-"}, job_yaml("x"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(contains(r.err, "error (already exists): jobs.batch.volcano.sh \"x\" already exists"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "that attempt may have created what now already exists")) << r.err;

  // Not forwarded the first time: AlreadyExists is a plain duplicate.
  ScriptedGateway plain([](api::Request::Reader req, int n) {
    return n == 0 ? error_answer(req, api::Error::Code::UNAVAILABLE, kNotForwarded)
                  : error_answer(req, api::Error::Code::ALREADY_EXISTS,
                                 "jobs.batch.volcano.sh \"x\" already exists in namespace default");
  });
  auto p = cli_at(plain, {"submit", "-f", "-"}, job_yaml("x"));
  EXPECT_EQ(p.exit_code, 1) << p.err;
  EXPECT_TRUE(contains(p.err, "error (already exists)")) << p.err;
  EXPECT_FALSE(contains(p.err, "may have created")) << p.err;
}

TEST(CliRetryAnswers, AJobCommandIsSentAgainWithTheSameId) {
  ScriptedGateway gateway([](api::Request::Reader req, int n) {
    return n < 2 ? error_answer(req, api::Error::Code::UNAVAILABLE, kMaybeTaken) : ok_answer(req);
  });
  auto r = cli_at(gateway, {"abort", "job", "x"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "job.batch.volcano.sh/x AbortJob issued\n");
  auto ids = gateway.command_ids();
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_FALSE(ids[0].empty());
  EXPECT_EQ(ids[1], ids[0]);
  EXPECT_EQ(ids[2], ids[0]);
}

// `unavailable` for another reason than the coordinator (here a full disk) is said at once.
TEST(CliRetryAnswers, AnUnavailableAnswerNotAboutTheCoordinatorIsNotWaitedFor) {
  ScriptedGateway gateway([](api::Request::Reader req, int) {
    return error_answer(req, api::Error::Code::UNAVAILABLE,
                        "the data dir is not writable, so nothing can change now (disk full); "
                        "reads still work; retry once space is freed");
  });
  auto r = cli_at(gateway, {"delete", "job", "x"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.err, "error (unavailable): the data dir is not writable")) << r.err;
  EXPECT_FALSE(contains(r.err, "waiting for")) << r.err;
  EXPECT_EQ(gateway.requests(), 1);
}

}  // namespace
}  // namespace caldera::testing
