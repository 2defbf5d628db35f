// The caldera CLI as a kubectl user drives it: namespaces, output formats, flags after the
// subcommand, error messages, logs, describe, version and paging. A real calderad, the real CLI;
// paging and a silent server use a stand-in server on loopback.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <capnp/message.h>
#include <gtest/gtest.h>

#include "client/client.hpp"
#include "node_test.hpp"

namespace caldera::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string job_yaml(const std::string& name, const std::string& command,
                     const std::string& metadata_extra = "") {
  return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: " + name +
         metadata_extra +
         "}\nspec:\n  tasks:\n    - name: main\n      replicas: 1\n      template: {spec: "
         "{containers: [{name: main, command: [sh, -c, \"" +
         command + "\"]}]}}\n";
}

class Cli : public NodeTest {
 protected:
  // The CLI with its arguments exactly as given (no --server put first).
  CommandResult raw(std::vector<std::string> args, const std::string& input = {}) {
    args.insert(args.begin(), CALDERA_CLI_PATH);
    return run(args, input);
  }

  void submit(const std::string& yaml, std::vector<std::string> flags = {}) {
    flags.insert(flags.end(), {"submit", "-f", "-"});
    auto r = node.cli(flags, yaml);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  void wait_for(const std::string& job, const std::string& phase,
                const std::string& ns = "default") {
    auto r = node.cli({"-n", ns, "wait", "job", job, "--for=phase=" + phase, "--timeout=30s"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
};

// ---- 1. -n on submit ----

// The harness itself: a command that exits without reading its input (a CLI refusing its flags
// before it reads `-f -`) fails its test on its exit status; the write to its closed stdin does
// not kill the whole test binary with SIGPIPE.
TEST(Harness, ACommandThatReadsNoneOfItsInputDoesNotKillTheTests) {
  auto r = run({"sh", "-c", "exit 3"}, std::string(1 << 20, 'x'));  // far past a pipe's buffer
  EXPECT_EQ(r.exit_code, 3);
}

// The harness's ports: a cluster takes several at once, and none may be one handed out before
// (two of a cluster's ports once were the same, and its config was refused).
TEST(Harness, FreePortsAreNeverHandedOutTwice) {
  std::set<int> seen;
  for (int i = 0; i < 2000; ++i) EXPECT_TRUE(seen.insert(free_port()).second) << i;
}

TEST_F(Cli, SubmitWithNamespaceFlagCreatesTheDocumentsThere) {
  auto r = node.cli({"-n", "team-a", "submit", "-f", "-"}, job_yaml("a", "true"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(node.cli({"get", "jobs", "-n", "team-a", "-o", "name"}).out,
            "job.batch.volcano.sh/a\n");
  auto in_default = node.cli({"get", "jobs"});
  EXPECT_FALSE(contains(in_default.out, "a ")) << in_default.out;

  // JobTemplates too; a document naming its namespace, as it is, without -n.
  auto tmpl = R"(apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: t}
spec:
  tasks:
    - name: main
      replicas: 1
      template: {spec: {containers: [{name: main, command: ["true"]}]}}
)";
  ASSERT_EQ(node.cli({"submit", "-f", "-", "-n", "team-a"}, tmpl).exit_code, 0);
  EXPECT_EQ(node.cli({"get", "jobtemplates", "-n", "team-a", "-o", "name"}).out,
            "jobtemplate.flow.volcano.sh/t\n");
  submit(job_yaml("b", "true", ", namespace: team-b"));
  EXPECT_EQ(node.cli({"get", "jobs", "-n", "team-b", "-o", "name"}).out,
            "job.batch.volcano.sh/b\n");
}

TEST_F(Cli, SubmitWithNamespaceFlagRefusesADocumentOfAnotherNamespace) {
  auto yaml = job_yaml("a", "true") + "---\n" + job_yaml("b", "true", ", namespace: b");
  auto r = node.cli({"-n", "a", "submit", "-f", "-"}, yaml);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.err,
                       "documents[1].metadata.namespace: the namespace from the provided object "
                       "\"b\" does not match the namespace \"a\". You must pass '--namespace=b' "
                       "to perform this operation."))
      << r.err;
  EXPECT_EQ(node.cli({"get", "jobs", "-A", "-o", "name"}).out, "");  // all or nothing
}

TEST_F(Cli, CreateIsSubmitAsKubectlUsersTypeIt) {
  auto r = node.cli({"create", "-f", "-"}, job_yaml("made", "true"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(node.cli({"get", "jobs", "-o", "name"}).out, "job.batch.volcano.sh/made\n");
}

// ---- 2. output formats ----

TEST_F(Cli, UnknownOutputFormatsAreErrorsAndNameIsKubectls) {
  submit(job_yaml("x", "true"));
  wait_for("x", "Completed");
  auto foo = node.cli({"get", "jobs", "-o", "foo"});
  EXPECT_NE(foo.exit_code, 0);
  EXPECT_EQ(foo.out, "");
  EXPECT_TRUE(contains(foo.err, "unknown output format \"foo\"")) << foo.err;
  EXPECT_TRUE(contains(foo.err, "wide, json, yaml, name")) << foo.err;
  auto jsonpath = node.cli({"get", "jobs", "-o", "jsonpath={.items[0].metadata.name}"});
  EXPECT_NE(jsonpath.exit_code, 0);
  EXPECT_EQ(jsonpath.out, "");
  EXPECT_TRUE(contains(jsonpath.err, "\"jsonpath\" is not supported")) << jsonpath.err;
  auto describe = node.cli({"describe", "job", "x", "-o", "json"});
  EXPECT_NE(describe.exit_code, 0);
  EXPECT_TRUE(contains(describe.err, "describe does not take -o")) << describe.err;

  auto jobs = node.cli({"get", "jobs", "-o", "name"});
  EXPECT_EQ(jobs.exit_code, 0) << jobs.err;
  EXPECT_EQ(jobs.out, "job.batch.volcano.sh/x\n");
  EXPECT_EQ(node.cli({"get", "pods", "-o", "name"}).out, "pod/x-main-0\n");
  EXPECT_EQ(node.cli({"get", "job", "x", "-o", "name"}).out, "job.batch.volcano.sh/x\n");
  EXPECT_EQ(node.cli({"get", "nodes", "-o", "name"}).out, "node/local\n");
  auto created = node.cli({"submit", "-f", "-", "-o", "name"}, job_yaml("y", "true"));
  EXPECT_EQ(created.out, "job.batch.volcano.sh/y\n") << created.err;
}

// ---- 3. global flags after the subcommand ----

TEST_F(Cli, GlobalFlagsWorkAfterTheSubcommand) {
  submit(job_yaml("x", "sleep 30"), {"-n", "team-a"});
  auto get =
      raw({"get", "jobs", "-n", "team-a", "--server", node.server(), "--token", "t", "-o", "name"});
  EXPECT_EQ(get.exit_code, 0) << get.err;
  EXPECT_EQ(get.out, "job.batch.volcano.sh/x\n");
  auto wait =
      raw({"wait", "--for=phase=Running", "job", "x", "-n", "team-a", "--server", node.server()});
  EXPECT_EQ(wait.exit_code, 0) << wait.err;
  EXPECT_EQ(wait.out, "job.batch.volcano.sh/x condition met\n");
  // As kubectl, the last of a repeated flag wins.
  auto last = node.cli({"-n", "default", "get", "jobs", "-n", "team-a", "-o", "name"});
  EXPECT_EQ(last.out, "job.batch.volcano.sh/x\n") << last.err;
}

// ---- 4. -A shows namespaces ----

TEST_F(Cli, AllNamespacesAddsANamespaceColumn) {
  submit(job_yaml("x", "true"), {"-n", "team-a"});
  wait_for("x", "Completed", "team-a");
  auto jobs = node.cli({"get", "jobs", "-A"});
  ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
  EXPECT_EQ(jobs.out.rfind("NAMESPACE   NAME", 0), 0u) << jobs.out;
  EXPECT_TRUE(contains(jobs.out, "\nteam-a      x ")) << jobs.out;
  auto pods = node.cli({"get", "pods", "-A"});
  ASSERT_EQ(pods.exit_code, 0) << pods.err;
  EXPECT_EQ(pods.out.rfind("NAMESPACE   NAME", 0), 0u) << pods.out;
  EXPECT_TRUE(contains(pods.out, "\nteam-a      x-main-0 ")) << pods.out;
  EXPECT_FALSE(contains(node.cli({"get", "pods", "-n", "team-a"}).out, "NAMESPACE"));
}

// ---- 5. unknown words ----

TEST_F(Cli, UnknownCommandsAndKindsAreNamedWithTheValidOnes) {
  auto kind = node.cli({"get", "foo"});
  EXPECT_NE(kind.exit_code, 0);
  EXPECT_FALSE(contains(kind.err, "A subcommand is required")) << kind.err;
  EXPECT_TRUE(contains(kind.err, "unknown resource type \"foo\" for caldera get")) << kind.err;
  EXPECT_TRUE(
      contains(kind.err, "jobs, jobs.batch, pods, podgroups, jobtemplates, jobflows, nodes"))
      << kind.err;
  auto command = node.cli({"frob", "job", "x"});
  EXPECT_NE(command.exit_code, 0);
  EXPECT_TRUE(contains(command.err, "unknown command \"frob\"")) << command.err;
  EXPECT_TRUE(contains(command.err, "submit, apply, get, describe")) << command.err;
  auto abort = node.cli({"abort", "pod", "x"});
  EXPECT_NE(abort.exit_code, 0);
  EXPECT_TRUE(contains(abort.err, "unknown resource type \"pod\" for caldera abort; valid: job"))
      << abort.err;
  auto none = node.cli({"describe"});
  EXPECT_NE(none.exit_code, 0);
  EXPECT_TRUE(contains(none.err, "caldera describe needs a resource type: job, jobs.batch, pod"))
      << none.err;
}

// ---- 6. logs --tail and -f, describe pod, version ----

TEST_F(Cli, LogsTailAndFollow) {
  submit(job_yaml("x", "for i in 1 2 3 4 5; do echo line $i; done; sleep 1; echo late"));
  wait_for("x", "Running");
  // -f prints what comes after a second and ends with the pod.
  auto follow = node.cli({"logs", "-f", "x-main-0"});
  EXPECT_EQ(follow.exit_code, 0) << follow.err;
  EXPECT_EQ(follow.out, "line 1\nline 2\nline 3\nline 4\nline 5\nlate\n");
  auto tail = node.cli({"logs", "x-main-0", "--tail", "2"});
  EXPECT_EQ(tail.exit_code, 0) << tail.err;
  EXPECT_EQ(tail.out, "line 5\nlate\n");
  EXPECT_EQ(node.cli({"logs", "x-main-0", "--tail=0"}).out, "");
  EXPECT_EQ(node.cli({"logs", "x-main-0", "--tail=100"}).out,
            "line 1\nline 2\nline 3\nline 4\nline 5\nlate\n");
}

TEST_F(Cli, DescribePod) {
  submit(job_yaml("x", "exit 3"), {"-n", "team-a"});
  wait_for("x", "Failed", "team-a");
  auto d = node.cli({"describe", "pod", "x-main-0", "-n", "team-a"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_TRUE(contains(d.out, "Name:          x-main-0\n")) << d.out;
  EXPECT_TRUE(contains(d.out, "Namespace:     team-a\n")) << d.out;
  EXPECT_TRUE(contains(d.out, "Controlled By: Job/x\n")) << d.out;
  EXPECT_TRUE(contains(d.out, "Status:        Error\n")) << d.out;
  EXPECT_TRUE(contains(d.out, "Exit Code:   3\n")) << d.out;
  auto missing = node.cli({"describe", "pod", "nope"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_TRUE(contains(missing.err, "pods \"nope\" not found")) << missing.err;
}

TEST_F(Cli, VersionShowsTheClientsAndTheServers) {
  auto v = node.cli({"version"});
  ASSERT_EQ(v.exit_code, 0) << v.err;
  EXPECT_EQ(v.out, "Client Version: 0.1.0\nServer Version: 0.1.0\n");
  EXPECT_EQ(raw({"version", "--client", "--server", "127.0.0.1:1"}).out, "Client Version: 0.1.0\n");
  auto down = raw({"version", "--server", "127.0.0.1:1"});
  EXPECT_NE(down.exit_code, 0);
  EXPECT_EQ(down.out, "Client Version: 0.1.0\n");
  EXPECT_TRUE(contains(down.err, "cannot connect")) << down.err;
}

// ---- 7. wait's deadline ----

TEST_F(Cli, WaitNeverGivesUpBeforeItsTimeout) {
  submit(job_yaml("slow", "sleep 30"));
  auto start = Clock::now();
  auto wait = node.cli({"wait", "job", "slow", "--for=phase=Completed", "--timeout=1s"});
  auto waited = Clock::now() - start;
  EXPECT_NE(wait.exit_code, 0);
  EXPECT_TRUE(contains(wait.err, "timed out after 1s")) << wait.err;
  EXPECT_GE(waited, 1000ms);
  EXPECT_LT(waited, 5000ms);
}

// ---- 9. NUL bytes and deep nesting ----

TEST_F(Cli, YamlWithANulByteIsRefusedWithItsOffset) {
  const std::string first = job_yaml("b1", "true");
  const std::string text = first + std::string(1, '\0') + "\n---\n" + job_yaml("b2", "true");
  auto file = write_file(dir.path(), "nul.yaml", text);
  auto r = node.cli({"submit", "-f", file});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.err, "NUL byte at byte offset " + std::to_string(first.size()))) << r.err;
  EXPECT_EQ(node.cli({"get", "jobs", "-A", "-o", "name"}).out, "");
}

TEST_F(Cli, DeeplyNestedYamlSaysSo) {
  std::string deep =
      job_yaml("d", "true") + "x: " + std::string(10000, '[') + std::string(10000, ']') + "\n";
  auto r = node.cli({"submit", "-f", "-"}, deep);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.err, "deeper than the limit of 100 levels")) << r.err;
  EXPECT_FALSE(contains(r.err, "bad file")) << r.err;
  auto ping = node.cli({"get", "nodes"});  // and the node lives on
  EXPECT_EQ(ping.exit_code, 0) << ping.err;
}

// ---- 10. a malformed commandId ----

TEST_F(Cli, CommandWithAMalformedCommandIdIsMalformedAtOnce) {
  submit(job_yaml("x", "sleep 30"));
  capnp::MallocMessageBuilder message;
  auto req = message.initRoot<api::Request>();
  req.setId(42);
  auto cmd = req.initCommand();
  cmd.getJob().setName("x");
  cmd.setAction("AbortJob");
  cmd.setCommandId("CMDIDXX");  // 7 bytes and its NUL: one word
  std::string bytes = to_bytes(message);
  auto at = bytes.find(std::string("CMDIDXX\0", 8));
  ASSERT_NE(at, std::string::npos);
  bytes[at + 7] = 'Y';  // the text is no longer NUL-terminated
  auto c = Client::connect(node.server(), 2s);
  ASSERT_TRUE(c) << c.error();
  ASSERT_TRUE((*c)->send_raw(bytes));
  auto frame = (*c)->read_frame(5s);
  ASSERT_TRUE(frame) << frame.error();
  FlatReader reader(*frame);
  auto resp = reader.root<api::Response>();
  ASSERT_EQ(resp.which(), api::Response::ERRORS);
  EXPECT_EQ(resp.getErrors()[0].getCode(), api::Error::Code::MALFORMED);
  EXPECT_EQ(resp.getId(), 42u);
  // The job was not touched.
  auto job = get_json({"get", "job", "x"});
  EXPECT_NE(job["status"]["state"]["phase"], "Aborted");
}

// ---- A stand-in server: paging, and a server that never answers ----

// Serves one connection at a time on a loopback port, on its own thread: every request goes to
// `answer`, whose bytes are sent back (nullopt: no answer).
class FakeServer {
 public:
  using Answer = std::function<std::optional<std::string>(api::Request::Reader)>;
  explicit FakeServer(Answer answer) : answer_(std::move(answer)) {
    listen_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (::bind(listen_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        ::listen(listen_, 8) != 0 ||
        ::getsockname(listen_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      throw std::runtime_error("fake server: cannot listen");
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeServer() {
    stop_ = true;
    thread_.join();
    ::close(listen_);
  }
  std::string server() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  // Waits up to 50 ms for `fd` to be readable; false when stopping.
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
          auto reply = answer_(reader.root<api::Request>());
          buffer.erase(0, size);
          if (reply) ::send(fd, reply->data(), reply->size(), MSG_NOSIGNAL);
        }
      }
      ::close(fd);
    }
  }

  Answer answer_;
  int listen_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Pages of jobs and of pods: "page 2" follows the first; what each request asked for is kept.
struct PagedLists {
  std::mutex mutex;
  std::vector<std::pair<uint32_t, std::string>> asked;  // (limit, continue) of each list

  std::optional<std::string> answer(api::Request::Reader req) {
    capnp::MallocMessageBuilder message;
    auto resp = message.initRoot<api::Response>();
    resp.setId(req.getId());
    const bool jobs = req.isListJobs();
    auto filter = jobs ? req.getListJobs() : req.getListPods();
    {
      std::lock_guard lock(mutex);
      asked.emplace_back(filter.getLimit(), filter.getContinue());
    }
    const bool first = filter.getContinue().size() == 0;
    const std::vector<std::string> names =
        first ? std::vector<std::string>{"one", "two"} : std::vector<std::string>{"three"};
    if (first) resp.setContinue("page 2");
    if (jobs) {
      auto list = resp.initJobs(static_cast<unsigned>(names.size()));
      for (unsigned i = 0; i < names.size(); ++i) {
        list[i].getSpec().setName(names[i]);
        list[i].getSpec().setNamespace("default");
        list[i].getStatus().getState().setPhase("Running");
      }
    } else {
      auto list = resp.initPods(static_cast<unsigned>(names.size()));
      for (unsigned i = 0; i < names.size(); ++i) {
        list[i].setName(names[i]);
        list[i].setNamespace("default");
        list[i].setPhase("Running");
      }
    }
    return to_bytes(message);
  }
};

TEST(CliPaging, GetJobsAndPodsReadEveryPage) {
  PagedLists lists;
  FakeServer fake([&](api::Request::Reader req) { return lists.answer(req); });
  for (const std::string kind : {"jobs", "pods"}) {
    auto r = run({CALDERA_CLI_PATH, "--server", fake.server(), "get", kind, "-o", "name"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string prefix = kind == "jobs" ? "job.batch.volcano.sh/" : "pod/";
    EXPECT_EQ(r.out, prefix + "one\n" + prefix + "two\n" + prefix + "three\n");
  }
  std::lock_guard lock(lists.mutex);
  const std::vector<std::pair<uint32_t, std::string>> expected{
      {500, ""}, {500, "page 2"}, {500, ""}, {500, "page 2"}};
  EXPECT_EQ(lists.asked, expected);
}

// ---- 8. a request that times out may still take effect ----

TEST(CliTimeout, TheMessageSaysTheRequestMayStillTakeEffect) {
  FakeServer silent([](api::Request::Reader) { return std::nullopt; });
  auto c = Client::connect(silent.server(), 2s);
  ASSERT_TRUE(c) << c.error();
  auto reply = (*c)->call([](api::Request::Builder b) { b.setSubmitYaml("x"); }, 300ms);
  ASSERT_FALSE(reply);
  EXPECT_TRUE(contains(reply.error(), "timed out after 300 ms")) << reply.error();
  EXPECT_TRUE(contains(reply.error(), "the request may still take effect")) << reply.error();
}

// Continue tokens that come round again (A, B, A) would page forever; the CLI stops at the first
// token it has seen before.
TEST(CliPaging, ATokenSeenBeforeEndsTheListing) {
  std::mutex mutex;
  std::vector<std::string> asked;
  FakeServer fake([&](api::Request::Reader req) -> std::optional<std::string> {
    capnp::MallocMessageBuilder message;
    auto resp = message.initRoot<api::Response>();
    resp.setId(req.getId());
    std::string token = req.getListJobs().getContinue();
    size_t n;
    {
      std::lock_guard lock(mutex);
      asked.push_back(token);
      n = asked.size();
    }
    if (n < 10) resp.setContinue(token == "A" ? "B" : "A");  // then it ends, so a test can fail
    resp.initJobs(0);
    return to_bytes(message);
  });
  auto r = run({CALDERA_CLI_PATH, "--server", fake.server(), "get", "jobs", "-o", "name"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.err, "the same continue token twice: A")) << r.err;
  std::lock_guard lock(mutex);
  EXPECT_EQ(asked, (std::vector<std::string>{"", "A", "B"}));
}

// logs and wait ask on one connection; their responses' warnings are printed like any other.
TEST(CliWarnings, LogsPrintsTheServersWarnings) {
  FakeServer fake([](api::Request::Reader req) -> std::optional<std::string> {
    capnp::MallocMessageBuilder message;
    auto resp = message.initRoot<api::Response>();
    resp.setId(req.getId());
    resp.initWarnings(1).set(0, "logs are kept for a day");
    auto log = resp.initLog();
    log.setData(kj::arrayPtr(reinterpret_cast<const kj::byte*>("hello\n"), 6));
    log.setNextOffset(req.getPodLog().getOffset() + 6);
    log.setEof(true);
    return to_bytes(message);
  });
  auto r = run({CALDERA_CLI_PATH, "--server", fake.server(), "logs", "x-main-0"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "hello\n");
  EXPECT_EQ(r.err, "Warning: logs are kept for a day\n");
}

// `logs -f` across a rotation: main.log is renamed to main.log.1 and a new, shorter main.log
// begins. The node used to answer "nothing new" until the new file grew past the old offset,
// so the follower skipped its beginning, or (as here, the pod ending first) all of it.
TEST(CliLogs, FollowGoesOnFromTheStartOfTheNewFileAfterARotation) {
  TempDir dir;
  std::string data = dir.path() + "/node";
  Calderad node(data, {"--container-log-max-size", "1Ki", "--container-log-max-files", "2"});
  node.start();
  const std::string go = dir.path() + "/go", end = dir.path() + "/end";
  // 19 lines of 52 bytes (988, the first file), then 3 more that do not fit in it.
  auto lines = [](const std::string& word, int from, int to) {
    return "i=" + std::to_string(from) + "; while [ $i -lt " + std::to_string(to) +
           " ]; do printf '" + word + "-%s-%042d\\n' $i 0; i=$((i+1)); done; ";
  };
  auto wait_for = [](const std::string& p) {
    return "while [ ! -e " + p + " ]; do sleep 0.02; done; ";
  };
  const std::string script =
      lines("first", 10, 29) + wait_for(go) + lines("newer", 10, 13) + wait_for(end) + "echo end";
  const std::string yaml =
      "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: x}\nspec:\n  tasks:\n"
      "    - name: main\n      replicas: 1\n      template:\n        spec:\n          containers:\n"
      "            - name: main\n              command: [sh, -c]\n              args:\n"
      "                - |\n                  " +
      script + "\n";
  auto submitted = node.cli({"submit", "-f", "-"}, yaml);
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  auto log_file = [&](const std::string& name) -> std::optional<fs::path> {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(data + "/pods", ec))
      if (fs::exists(e.path() / name)) return e.path() / name;
    return std::nullopt;
  };
  ASSERT_TRUE(eventually([&] {
    auto f = log_file("main.log");
    return f && fs::file_size(*f) == 988;
  }));

  auto follow = std::async(std::launch::async, [&] {
    return node.cli({"logs", "-f", "x-main-0"});
  });
  std::this_thread::sleep_for(1s);  // it has read the first file
  { std::ofstream(go) << "go"; }
  ASSERT_TRUE(eventually([&] {
    auto f = log_file("main.log.1");
    auto g = log_file("main.log");
    return f && g && fs::file_size(*f) == 988 && fs::file_size(*g) == 156;
  }));
  std::this_thread::sleep_for(1500ms);  // it has asked again, past the new file's end
  { std::ofstream(end) << "end"; }
  auto r = follow.get();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string expected;
  for (int i = 10; i < 29; ++i)
    expected += "first-" + std::to_string(i) + "-" + std::string(42, '0') + "\n";
  for (int i = 10; i < 13; ++i)
    expected += "newer-" + std::to_string(i) + "-" + std::string(42, '0') + "\n";
  expected += "end\n";
  EXPECT_EQ(r.out, expected);
}

}  // namespace
}  // namespace caldera::testing
