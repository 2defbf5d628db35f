// The client gateway under abuse: many idle connections, a client that pipelines requests and
// never reads, half-sent frames; the node keeps serving everyone else with bounded memory.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include <capnp/message.h>

#include "client/client.hpp"
#include "harness.hpp"
#include "tests/api_requests.hpp"

namespace caldera::testing {
namespace {

using caldera::testing::list_jobs_request;

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// The pid of the calderad serving `data_dir` (the harness does not expose it).
pid_t calderad_pid(const std::string& data_dir) {
  std::error_code ec;
  auto exe = fs::canonical(CALDERAD_PATH, ec);
  for (const auto& entry : fs::directory_iterator("/proc")) {
    auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (fs::read_symlink(entry.path() / "exe", ec) != exe || ec) continue;
    // Through rdbuf: a process gone mid-read is a failed stream, not an exception (ESRCH).
    std::ifstream in(entry.path() / "cmdline");
    std::stringstream read;
    read << in.rdbuf();
    const std::string cmdline = read.str();
    if (cmdline.find(data_dir) != std::string::npos) return std::stoi(name);
  }
  return -1;
}

// Resident set size in bytes, from /proc/PID/status.
size_t rss_bytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

// User plus system CPU time in clock ticks, from /proc/PID/stat.
uint64_t cpu_ticks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), {});
  auto paren = stat.rfind(')');  // the command name may hold spaces
  if (paren == std::string::npos) return 0;
  std::istringstream fields(stat.substr(paren + 2));
  std::string skip;
  for (int i = 3; i < 14; ++i) fields >> skip;  // state .. cmajflt
  uint64_t utime = 0, stime = 0;
  fields >> utime >> stime;
  return utime + stime;
}

int raw_connect(int port, int receive_buffer) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  // Small, so that what the kernel holds for a client that does not read stays small and the
  // node's own queue is what would grow.
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof(receive_buffer));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string ping_error(Client& client) {
  auto r = client.call([](api::Request::Builder b) { b.setPing(); }, 5s);
  if (!r) return r.error();
  return (*r)->root<api::Response>().isPong() ? "" : "not a pong";
}

// Calderad inherits the soft descriptor limit of its parent; the usual 1024 is what it must raise.
class DescriptorLimit {
 public:
  DescriptorLimit() { ::getrlimit(RLIMIT_NOFILE, &saved_); }
  ~DescriptorLimit() { ::setrlimit(RLIMIT_NOFILE, &saved_); }
  bool hard_at_least(rlim_t n) const {
    return saved_.rlim_max == RLIM_INFINITY || saved_.rlim_max >= n;
  }
  void set_soft(rlim_t n) {
    rlimit r = saved_;
    r.rlim_cur = std::min(n, saved_.rlim_max);
    ::setrlimit(RLIMIT_NOFILE, &r);
  }

 private:
  rlimit saved_{};
};

TEST(GatewayLimits, ThousandIdleConnectionsDoNotLockOutANewClient) {
  constexpr int kIdle = 1100;
  DescriptorLimit limit;
  if (!limit.hard_at_least(kIdle + 512)) GTEST_SKIP() << "the hard descriptor limit is too low";
  TempDir dir;
  Calderad node(dir.path() + "/node", {"--max-connections", "2000"});
  limit.set_soft(1024);
  node.start();
  limit.set_soft(kIdle + 512);  // for this test's own sockets

  std::vector<std::unique_ptr<Client>> idle;
  for (int i = 0; i < kIdle; ++i) {
    auto c = Client::connect(node.server(), 2s);
    ASSERT_TRUE(c) << "connection " << i << ": " << c.error();
    idle.push_back(std::move(*c));
  }
  auto start = Clock::now();
  auto r = node.cli({"get", "nodes"});
  auto took = Clock::now() - start;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(took, 1s);
  // Every one of them was admitted, not dropped for lack of descriptors.
  EXPECT_EQ(ping_error(*idle.front()), "");
  EXPECT_EQ(ping_error(*idle.back()), "");
  EXPECT_EQ(node.log().find("out of file descriptors"), std::string::npos) << node.log();
}

TEST(GatewayLimits, FlagsSetTheConnectionLimitAndTheFrameTimeout) {
  TempDir dir;
  Calderad node(dir.path() + "/node", {"--max-connections", "2", "--frame-timeout", "300ms"});
  node.start();
  // start() pinged through a connection of its own: under load its close may not be seen yet,
  // and it would take one of the two places.
  Result<std::unique_ptr<Client>> a = Failure{""}, b = Failure{""};
  ASSERT_TRUE(eventually(
      [&] {
        a = Client::connect(node.server(), 2s);
        b = Client::connect(node.server(), 2s);
        return a && b && ping_error(**a).empty() && ping_error(**b).empty();
      },
      10s));
  auto refused = node.cli({"get", "nodes"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("unavailable"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("too many connections (limit 2); try again later"), std::string::npos)
      << refused.err;

  // Announces 64 words and sends none of them: closed with an error after 300 ms.
  auto start = Clock::now();
  ASSERT_TRUE((*b)->send_raw(std::string("\0\0\0\0\x40\0\0\0", 8)));
  auto frame = (*b)->read_frame(5s);
  ASSERT_TRUE(frame) << frame.error();
  EXPECT_GE(Clock::now() - start, 300ms);
  FlatReader reader(*frame);
  auto resp = reader.root<api::Response>();
  ASSERT_EQ(resp.which(), api::Response::ERRORS);
  EXPECT_EQ(resp.getErrors()[0].getCode(), api::Error::Code::MALFORMED);
  EXPECT_FALSE((*b)->read_frame(3s));  // and closed
  b->reset();
  EXPECT_EQ(ping_error(**a), "");
  EXPECT_TRUE(eventually([&] { return node.cli({"get", "nodes"}).exit_code == 0; }, 5s));
}

TEST(GatewayLimits, BadLimitFlagsAreRefusedAtStart) {
  TempDir dir;
  auto r = run({CALDERAD_PATH, "--port", "0", "--cluster-port", "0", "--data-dir",
                dir.path() + "/node", "--idle-timeout", "5 minutes"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--idle-timeout: '5 minutes' is not a duration"), std::string::npos)
      << r.err;
}

TEST(GatewayLimits, ActorThreadsOutsideOneTo256AreRefusedAndOneOrThreeWorkersRunAJob) {
  TempDir dir;
  for (std::string bad : {"0", "257", "many"}) {
    auto r = run({CALDERAD_PATH, "--port", "0", "--cluster-port", "0", "--data-dir",
                  dir.path() + "/refused", "--actor-threads", bad});
    EXPECT_EQ(r.exit_code, 105) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("--actor-threads"), std::string::npos) << r.err;
  }
  // Other counts than the default two run a job through as well, on as many CAF workers (which
  // inherit the name of the thread that starts them, as do CAF's other threads: the difference
  // between the two counts is what tells).
  auto threads_named = [](pid_t pid, const std::string& comm) {
    int n = 0;
    std::error_code ec;
    for (fs::directory_iterator it("/proc/" + std::to_string(pid) + "/task", ec), end;
         !ec && it != end; it.increment(ec)) {
      std::string name;
      std::getline(std::ifstream(it->path() / "comm"), name);
      n += name == comm;
    }
    return n;
  };
  std::map<std::string, int> workers_named;
  for (std::string threads : {"1", "3"}) {
    Calderad node(dir.path() + "/node-" + threads, {"--actor-threads", threads});
    node.start();
    workers_named[threads] = threads_named(node.pid(), "caf.multiplexer");
    auto submit =
        node.cli({"submit", "-f", "-"},
                 "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: one}\n"
                 "spec:\n  tasks:\n    - name: main\n      replicas: 2\n      template: "
                 "{spec: {containers: [{name: main, command: [\"true\"]}]}}\n");
    ASSERT_EQ(submit.exit_code, 0) << submit.err;
    EXPECT_TRUE(eventually(
        [&] {
          return node.cli({"get", "job", "one"}).out.find("Completed") != std::string::npos;
        },
        30s))
        << threads << " threads: " << node.cli({"get", "job", "one", "-o", "yaml"}).out;
    EXPECT_NE(node.log().find("actor_threads=" + threads), std::string::npos) << node.log();
  }
  EXPECT_EQ(workers_named["3"] - workers_named["1"], 2);
}

TEST(GatewayLimits, ClientPipeliningListJobsWithoutReadingKeepsRssBounded) {
  TempDir dir;
  std::string data = dir.path() + "/node";
  Calderad node(data);
  node.start();
  // Ten jobs with 10 KB of annotations each: every listJobs answer is over 100 KB, so 5,000
  // of them held at once would be half a gigabyte.
  std::string yaml;
  for (int i = 0; i < 10; ++i) {
    yaml += "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: big-" +
            std::to_string(i) + "\n  annotations: {pad: " + std::string(10'000, 'p') +
            "}\nspec:\n  tasks:\n    - name: main\n      replicas: 1\n      template: {spec: "
            "{containers: [{name: main, command: [\"true\"]}]}}\n---\n";
  }
  auto submitted = node.cli({"submit", "-f", "-"}, yaml);
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  auto probe = Client::connect(node.server(), 2s);
  ASSERT_TRUE(probe);
  ASSERT_TRUE((*probe)->send_raw(list_jobs_request(1)));
  auto answer = (*probe)->read_frame(5s);
  ASSERT_TRUE(answer) << answer.error();
  ASSERT_GT(answer->size(), 100'000u);

  pid_t pid = calderad_pid(data);
  ASSERT_GT(pid, 0);
  size_t baseline = rss_bytes(pid);
  ASSERT_GT(baseline, 0u);

  int fd = raw_connect(node.port(), 16 << 10);
  ASSERT_GE(fd, 0);
  std::string flood;
  for (uint64_t id = 1; id <= 5000; ++id) flood += list_jobs_request(id);
  std::atomic<bool> stop{false};
  std::thread sender([&] {
    size_t sent = 0;
    while (sent < flood.size() && !stop) {
      ssize_t n = ::send(fd, flood.data() + sent, flood.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        sent += static_cast<size_t>(n);
      } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        return;
      } else {
        pollfd p{fd, POLLOUT, 0};
        ::poll(&p, 1, 50);
      }
    }
  });

  // Another client is answered while the flood is being dealt with.
  auto other = node.cli({"get", "nodes"});
  EXPECT_EQ(other.exit_code, 0) << other.err;

  // Wait until calderad has done all the work the flood gets out of it (its CPU falls quiet),
  // failing as soon as its memory passes the bound.
  constexpr size_t kBound = 200u << 20;
  size_t peak = baseline;
  std::vector<uint64_t> ticks;
  auto deadline = Clock::now() + 20s;
  bool quiet = false;
  while (Clock::now() < deadline && !quiet && peak - baseline < kBound) {
    std::this_thread::sleep_for(100ms);
    peak = std::max(peak, rss_bytes(pid));
    ticks.push_back(cpu_ticks(pid));
    // Under 10% of a core over the last second (ticks are 10 ms).
    quiet = ticks.size() > 10 && ticks.back() - ticks[ticks.size() - 11] < 10;
  }
  stop = true;
  sender.join();
  std::cout << "calderad VmRSS: baseline " << (baseline >> 20) << " MiB, peak " << (peak >> 20)
            << " MiB during 5000 unread listJobs answers of " << (answer->size() >> 10) << " KiB\n";
  EXPECT_LT(peak - baseline, kBound);
  EXPECT_TRUE(quiet) << "calderad kept working on the flood";

  auto again = Client::connect(node.server(), 2s);
  ASSERT_TRUE(again);
  EXPECT_EQ(ping_error(**again), "");
  ::close(fd);
  EXPECT_EQ(node.cli({"get", "nodes"}).exit_code, 0);
}

}  // namespace
}  // namespace caldera::testing
