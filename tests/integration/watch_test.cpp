// Watches on a real node: `get -w` prints each change of a job as it happens; a client's watch
// streams Added, Synced, Modified and Deleted events of pods and flows and ends on cancelWatch
// with its own answer; a connection holds at most its limit of watches.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "client/client.hpp"
#include "node/client_bridge.hpp"
#include "node_test.hpp"

namespace caldera::testing {
namespace {

using namespace std::chrono_literals;
using Type = api::WatchEvent::Type;

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A CLI command left running (get -w), its stdout read as it comes; stopped on destruction.
class RunningCli {
 public:
  RunningCli(const std::string& dir, const std::string& server, std::vector<std::string> args)
      : out_(dir + "/watch.out") {
    args.insert(args.begin(), {CALDERA_CLI_PATH, "--server", server});
    pid_ = ::fork();
    if (pid_ == 0) {
      int fd = ::open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  ~RunningCli() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  std::string out() const { return read_all(out_); }

 private:
  std::string out_;
  pid_t pid_ = -1;
};

// The lines of `text` whose first column is `name`, by their STATUS (second) column.
std::vector<std::string> statuses(const std::string& text, const std::string& name) {
  std::vector<std::string> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream cols(line);
    std::string first, second;
    cols >> first >> second;
    if (first == name) out.push_back(second);
  }
  return out;
}

std::string gated_job(const std::string& name, const std::string& gate) {
  return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: " + name +
         "}\nspec:\n  minAvailable: 1\n  tasks:\n    - name: main\n      replicas: 1\n"
         "      template: {spec: {containers: [{name: main, command: [sh, -c, 'while [ ! -f " +
         gate + " ]; do sleep 0.05; done']}]}}\n";
}

std::string quick_job(const std::string& name, int replicas) {
  return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: " + name +
         "}\nspec:\n  minAvailable: " + std::to_string(replicas) +
         "\n  tasks:\n    - name: main\n      replicas: " + std::to_string(replicas) +
         "\n      template: {spec: {containers: [{name: main, command: [true]}]}}\n";
}

class Watch : public NodeTest {
 protected:
  void submit(const std::string& name, const std::string& yaml) {
    auto r = node.cli({"submit", "-f", write_file(dir.path(), name + ".yaml", yaml)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  void run_to_completion(const std::string& name, int replicas) {
    submit(name, quick_job(name, replicas));
    ASSERT_EQ(node.cli({"wait", "job", name, "--for=phase=Completed", "--timeout=30s"}).exit_code,
              0);
  }

  std::unique_ptr<Client> connect() {
    auto c = Client::connect(node.server(), 5s);
    EXPECT_TRUE(c) << (c ? "" : c.error());
    return c ? std::move(*c) : nullptr;
  }

  static uint64_t start_watch(Client& c, const std::string& kind, const std::string& name = {}) {
    auto id = c.start([&](api::Request::Builder b) {
      auto w = b.initWatch();
      w.setKind(kind);
      w.setNamespace("default");
      w.setName(name);
    });
    EXPECT_TRUE(id);
    return id ? *id : 0;
  }
};

TEST_F(Watch, GetJobsWatchPrintsEachPhaseChangeOfAJobAsItHappens) {
  const auto gate = dir.path() + "/gate";
  RunningCli watch(dir.path(), node.server(), {"get", "jobs", "-w"});
  // A first job's row says the watch is open: the next job is seen from its creation on.
  submit("first", quick_job("first", 1));
  ASSERT_TRUE(eventually([&] { return !statuses(watch.out(), "first").empty(); }, 30s));
  submit("gated", gated_job("gated", gate));
  ASSERT_TRUE(eventually(
      [&] {
        auto s = statuses(watch.out(), "gated");
        return !s.empty() && s.back() == "Running";
      },
      30s))
      << watch.out();
  // As it happens: Running was printed while the job still runs (the gate holds it).
  std::ofstream(gate) << "go";
  ASSERT_TRUE(eventually(
      [&] {
        auto s = statuses(watch.out(), "gated");
        return !s.empty() && s.back() == "Completed";
      },
      30s))
      << watch.out();
  auto out = watch.out();
  EXPECT_EQ(out.rfind("NAME", 0), 0u) << "the header comes with the first row:\n" << out;
  auto s = statuses(out, "gated");
  EXPECT_EQ(s.front(), "Pending") << out;
  auto running = std::find(s.begin(), s.end(), "Running");
  ASSERT_NE(running, s.end()) << out;
  EXPECT_EQ(std::count(running, s.end(), "Pending"), 0) << "phases in order:\n" << out;
  EXPECT_EQ(std::count(s.begin(), s.end(), "Completed"), 1) << out;
  // A deadline shorter than the list still looks once, as a poll would; one that does not
  // exist is said at once.
  auto at_once = node.cli({"wait", "job", "gated", "--for=phase=Completed", "--timeout=0s"});
  EXPECT_EQ(at_once.exit_code, 0) << at_once.err;
  auto missing = node.cli({"get", "jobs", "nosuch", "-w"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("\"nosuch\" not found"), std::string::npos) << missing.err;
}

TEST_F(Watch, APodWatchListsThenStreamsChangesAndDeletesAndEndsOnCancel) {
  run_to_completion("before", 2);
  auto c = connect();
  ASSERT_TRUE(c);
  auto id = start_watch(*c, "pods");
  std::vector<std::pair<Type, std::string>> events;  // (type, pod name + " " + phase)
  auto read_until = [&](const std::function<bool()>& done) {
    auto deadline = std::chrono::steady_clock::now() + 30s;
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      auto r = c->next(id, 30s);
      if (!r) {
        ADD_FAILURE() << r.error();
        return;
      }
      auto resp = (*r)->root<api::Response>();
      if (!resp.isEvent()) {
        ADD_FAILURE() << "not an event";
        return;
      }
      auto e = resp.getEvent();
      std::string what =
          e.isPod() ? std::string(e.getPod().getName().cStr()) + " " + e.getPod().getPhase().cStr()
                    : "";
      events.emplace_back(e.getType(), what);
    }
  };
  read_until([&] { return !events.empty() && events.back().first == Type::SYNCED; });
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0], std::make_pair(Type::ADDED, std::string("before-main-0 Succeeded")));
  EXPECT_EQ(events[1], std::make_pair(Type::ADDED, std::string("before-main-1 Succeeded")));

  // A new job's pods: Added, then their phases as they change, up to Succeeded.
  events.clear();
  submit("after", quick_job("after", 1));
  read_until([&] { return !events.empty() && events.back().second == "after-main-0 Succeeded"; });
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front(), std::make_pair(Type::ADDED, std::string("after-main-0 Pending")));
  for (size_t i = 1; i < events.size(); ++i) EXPECT_EQ(events[i].first, Type::MODIFIED);

  // A deleted job's pods are Deleted.
  events.clear();
  ASSERT_EQ(node.cli({"delete", "job", "before"}).exit_code, 0);
  auto of_before = [&] {
    std::vector<std::pair<Type, std::string>> out;
    for (const auto& e : events)
      if (e.second.rfind("before-", 0) == 0) out.push_back(e);
    return out;
  };
  read_until([&] { return of_before().size() >= 2; });
  auto deleted = of_before();
  ASSERT_EQ(deleted.size(), 2u);
  EXPECT_EQ(deleted[0].first, Type::DELETED);
  EXPECT_EQ(deleted[1].first, Type::DELETED);

  // Cancelled: the watch's own answer ends it, then the cancel's.
  auto cancel = c->start([&](api::Request::Builder b) { b.setCancelWatch(id); });
  ASSERT_TRUE(cancel);
  auto end = c->next(id, 10s);
  ASSERT_TRUE(end) << end.error();
  EXPECT_TRUE((*end)->root<api::Response>().isOk());
  auto ok = c->next(*cancel, 10s);
  ASSERT_TRUE(ok) << ok.error();
  EXPECT_TRUE((*ok)->root<api::Response>().isOk());
}

// Job events come from the job actors themselves: a settled job (no actor) is listed from the
// store, and its delete (which wakes it) is Deleted with the job as it was last.
TEST_F(Watch, AJobWatchHearsADeletedSettledJobAsItWasLast) {
  run_to_completion("gone", 1);
  auto c = connect();
  ASSERT_TRUE(c);
  auto id = start_watch(*c, "jobs", "gone");
  std::vector<std::pair<Type, std::string>> events;  // (type, name + " " + phase)
  auto next = [&] {
    auto r = c->next(id, 30s);
    if (!r) return false;
    auto e = (*r)->root<api::Response>().getEvent();
    events.emplace_back(e.getType(),
                        e.isJob() ? std::string(e.getJob().getSpec().getName().cStr()) + " " +
                                        e.getJob().getStatus().getState().getPhase().cStr()
                                  : "");
    return true;
  };
  ASSERT_TRUE(next());
  ASSERT_TRUE(next());
  EXPECT_EQ(events[0], std::make_pair(Type::ADDED, std::string("gone Completed")));
  EXPECT_EQ(events[1].first, Type::SYNCED);
  ASSERT_EQ(node.cli({"delete", "job", "gone"}).exit_code, 0);
  ASSERT_TRUE(next());
  // Its spec comes with it: the store has none any more.
  EXPECT_EQ(events[2], std::make_pair(Type::DELETED, std::string("gone Completed")));
}

TEST_F(Watch, AFlowWatchSeesItsPhasesAndItsDelete) {
  auto c = connect();
  ASSERT_TRUE(c);
  auto id = start_watch(*c, "jobflows", "chain");
  auto first = c->next(id, 10s);
  ASSERT_TRUE(first) << first.error();
  ASSERT_EQ((*first)->root<api::Response>().getEvent().getType(), Type::SYNCED);
  submit(
      "flow",
      "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate\nmetadata: {name: step}\n"
      "spec:\n  tasks:\n    - name: main\n      replicas: 1\n      template: {spec: "
      "{containers: [{name: main, command: [true]}]}}\n---\napiVersion: flow.volcano.sh/v1alpha1\n"
      "kind: JobFlow\nmetadata: {name: chain}\nspec:\n  flows:\n    - name: step\n");
  std::vector<std::pair<Type, std::string>> seen;
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline &&
         (seen.empty() || seen.back().second != "Succeed")) {
    auto r = c->next(id, 30s);
    ASSERT_TRUE(r) << r.error();
    auto e = (*r)->root<api::Response>().getEvent();
    ASSERT_TRUE(e.isJobFlow());
    seen.emplace_back(e.getType(), e.getJobFlow().getStatus().getState().getPhase().cStr());
  }
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front().first, Type::ADDED);
  EXPECT_EQ(seen.back().second, "Succeed");
  ASSERT_EQ(node.cli({"delete", "jobflow", "chain"}).exit_code, 0);
  Type last = Type::ADDED;
  while (last != Type::DELETED) {
    auto r = c->next(id, 10s);
    ASSERT_TRUE(r) << r.error();
    last = (*r)->root<api::Response>().getEvent().getType();
  }
}

TEST_F(Watch, AConnectionHoldsAtMostItsLimitOfWatches) {
  auto c = connect();
  ASSERT_TRUE(c);
  std::vector<uint64_t> ids;
  for (size_t i = 0; i < kMaxWatchesPerConnection; ++i) {
    ids.push_back(start_watch(*c, "jobs"));
    auto r = c->next(ids.back(), 10s);
    ASSERT_TRUE(r) << r.error();
    ASSERT_TRUE((*r)->root<api::Response>().isEvent());
  }
  auto over = start_watch(*c, "jobs");
  auto r = c->next(over, 10s);
  ASSERT_TRUE(r) << r.error();
  auto resp = (*r)->root<api::Response>();
  ASSERT_TRUE(resp.isErrors());
  EXPECT_EQ(resp.getErrors()[0].getCode(), api::Error::Code::UNAVAILABLE);
  EXPECT_NE(std::string(resp.getErrors()[0].getMessage().cStr()).find("watches, its limit"),
            std::string::npos);
  // Every open watch still hears of a new job.
  submit("x", quick_job("x", 1));
  std::set<uint64_t> heard;
  while (heard.size() < ids.size()) {
    auto frame = c->read_frame(10s);
    ASSERT_TRUE(frame) << frame.error() << " after " << heard.size() << " watches heard";
    FlatReader reader(*frame);
    auto e = reader.root<api::Response>();
    ASSERT_TRUE(e.isEvent());
    heard.insert(e.getId());
  }
  EXPECT_EQ(heard, std::set<uint64_t>(ids.begin(), ids.end()));
  // A bad kind is refused with why.
  auto bad = start_watch(*c, "nodes");
  auto refused = c->next(bad, 10s);
  ASSERT_TRUE(refused);
  ASSERT_TRUE((*refused)->root<api::Response>().isErrors());
}

}  // namespace
}  // namespace caldera::testing
