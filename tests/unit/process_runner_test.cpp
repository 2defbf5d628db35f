#include "actors/node/process_runner.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "../proc_stat.hpp"
#include "actors/node/lease_file.hpp"
#include "actors/node/pod_dir.hpp"

namespace caldera {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

bool all_terminated(const PodProcessStatus& s) {
  for (const auto& c : s.containers)
    if (c.state != ContainerState::Terminated) return false;
  return true;
}

// Collects OnChange callbacks (they come on the runner's thread) and waits for them.
class Collector {
 public:
  ProcessRunner::OnChange callback() {
    return [this](PodProcessStatus s) {
      std::lock_guard lock(mutex_);
      events_[s.uid].push_back(std::move(s));
      cv_.notify_all();
    };
  }

  // The first report about uid that satisfies pred, or nullopt at the deadline.
  template <class Pred>
  std::optional<PodProcessStatus> wait_for(const std::string& uid, Pred pred,
                                           std::chrono::milliseconds timeout = 5s) {
    std::unique_lock lock(mutex_);
    std::optional<PodProcessStatus> found;
    cv_.wait_for(lock, timeout, [&] {
      for (const auto& s : events_[uid])
        if (pred(s)) {
          found = s;
          return true;
        }
      return false;
    });
    return found;
  }
  std::optional<PodProcessStatus> wait_final(const std::string& uid,
                                             std::chrono::milliseconds timeout = 5s) {
    return wait_for(uid, all_terminated, timeout);
  }
  std::optional<PodProcessStatus> wait_running(const std::string& uid) {
    return wait_for(uid, [](const PodProcessStatus& s) { return !all_terminated(s); });
  }
  // Waits until `n` pods have a final report.
  size_t wait_final_count(size_t n, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    size_t count = 0;
    cv_.wait_for(lock, timeout, [&] {
      count = 0;
      for (const auto& [uid, list] : events_)
        for (const auto& s : list)
          if (all_terminated(s)) {
            ++count;
            break;
          }
      return count >= n;
    });
    return count;
  }
  std::vector<PodProcessStatus> all() {
    std::lock_guard lock(mutex_);
    std::vector<PodProcessStatus> out;
    for (const auto& [uid, list] : events_) out.insert(out.end(), list.begin(), list.end());
    return out;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::string, std::vector<PodProcessStatus>> events_;
};

Container program(const std::string& name, std::vector<std::string> argv) {
  Container c;
  c.name = name;
  c.command = std::move(argv);
  return c;
}

Container shell(const std::string& name, const std::string& script) {
  Container c;
  c.name = name;
  c.command = {"sh", "-c"};
  c.args = {script};
  return c;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The process groups of a pod's containers, as its shim recorded them.
std::vector<int32_t> pgids(const fs::path& pod_dir) {
  std::vector<int32_t> out;
  std::istringstream in(slurp(pod_dir / "state"));
  std::string word, name;
  int32_t pgid = 0;
  for (std::string line; std::getline(in, line);)
    if (std::istringstream(line) >> word >> name >> pgid && word == "start") out.push_back(pgid);
  return out;
}

bool process_exists(int32_t pid) {
  return ::kill(pid, 0) == 0 || errno != ESRCH;
}

// Processes of a group that still run. Zombies have ended: when their reaper (pid 1 for
// orphans) collects them is not the runner's business.
size_t live_group_members(int32_t pgid) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    auto stat = pod_dir::read_file((entry.path() / "stat").string());
    size_t close = stat ? stat->rfind(')') : std::string::npos;
    if (close == std::string::npos) continue;
    std::istringstream fields(stat->substr(close + 1));
    std::string state;
    int32_t ppid = 0, group = 0;
    fields >> state >> ppid >> group;
    if (group == pgid && state != "Z" && state != "X") ++n;
  }
  return n;
}

template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds timeout = 5s) {
  auto deadline = Clock::now() + timeout;
  while (!pred()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

class ProcessRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/caldera-runner-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    runner_ = ProcessRunner::create(CALDERA_SHIM_PATH, collector_.callback());
    ASSERT_NE(runner_, nullptr);
  }

  void TearDown() override {
    runner_.reset();
    // Whatever a failed test left running: every container group still in one of this test's
    // shims' sessions (never a group whose number was reused), then the shims.
    std::set<int32_t> shims;
    for (const auto& s : collector_.all())
      if (s.shim_pid > 0 && pod_dir::proc_start_ticks(s.shim_pid) == s.shim_start_ticks)
        shims.insert(s.shim_pid);
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(root_, ec)) {
      for (int32_t pgid : pgids(entry.path()))
        if (pgid > 0 && shims.count(::getsid(pgid)) != 0) ::kill(-pgid, SIGKILL);
    }
    for (int32_t pid : shims) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);  // reaps the shims this process spawned; ECHILD for others
    }
    fs::remove_all(root_, ec);
  }

  PodProcessSpec spec(const std::string& uid, std::vector<Container> containers,
                      int64_t grace_ms = 10000) {
    PodProcessSpec s;
    s.uid = uid;
    s.pod_dir = (root_ / uid).string();
    s.containers = std::move(containers);
    s.grace_ms = grace_ms;
    return s;
  }

  fs::path root_;
  Collector collector_;  // outlives runner_, which calls it
  std::unique_ptr<ProcessRunner> runner_;
};

TEST_F(ProcessRunnerTest, SucceedsAndLogsBothStreams) {
  runner_->launch(spec("ok", {shell("main", "echo hi; echo err >&2; exit 0")}));
  auto running = collector_.wait_running("ok");
  ASSERT_TRUE(running);
  ASSERT_EQ(running->containers.size(), 1u);
  EXPECT_EQ(running->containers[0].state, ContainerState::Running);
  EXPECT_GT(running->shim_pid, 0);
  EXPECT_GT(running->shim_start_ticks, 0u);
  EXPECT_GT(running->containers[0].started_ms, 0);

  auto done = collector_.wait_final("ok");
  ASSERT_TRUE(done);
  ASSERT_EQ(done->containers.size(), 1u);
  const auto& c = done->containers[0];
  EXPECT_EQ(c.name, "main");
  EXPECT_EQ(c.exit_code, 0);
  EXPECT_EQ(c.signal, 0);
  EXPECT_EQ(c.reason, "Completed");
  EXPECT_GE(c.finished_ms, c.started_ms);
  EXPECT_EQ(derive_pod_phase(done->containers), PodPhase::Succeeded);
  EXPECT_EQ(slurp(root_ / "ok" / "main.log"), "hi\nerr\n");
}

TEST_F(ProcessRunnerTest, NonZeroExitIsError) {
  runner_->launch(spec("exit3", {shell("main", "exit 3")}));
  auto done = collector_.wait_final("exit3");
  ASSERT_TRUE(done);
  EXPECT_EQ(done->containers[0].exit_code, 3);
  EXPECT_EQ(done->containers[0].signal, 0);
  EXPECT_EQ(done->containers[0].reason, "Error");
  EXPECT_EQ(derive_pod_phase(done->containers), PodPhase::Failed);
}

TEST_F(ProcessRunnerTest, EnvAndWorkingDirReachTheProcess) {
  fs::create_directories(root_ / "wd");
  Container c = shell("main", "echo \"$FOO\"; pwd; echo \"$HOME\"; echo \"$PATH\"");
  c.env = {{"FOO", "bar baz"}, {"PATH", "/bin:/usr/bin"}};
  c.working_dir = (root_ / "wd").string();
  runner_->launch(spec("env", {c}));
  auto done = collector_.wait_final("env");
  ASSERT_TRUE(done);
  EXPECT_EQ(done->containers[0].reason, "Completed");
  EXPECT_EQ(slurp(root_ / "env" / "main.log"),
            "bar baz\n" + (root_ / "wd").string() + "\n/\n/bin:/usr/bin\n");
}

TEST_F(ProcessRunnerTest, ReportsEveryContainerOfAPod) {
  runner_->launch(spec("two", {shell("first", "exit 0"), shell("second", "exit 4")}));
  auto running = collector_.wait_running("two");
  ASSERT_TRUE(running);
  EXPECT_EQ(running->containers.size(), 2u);
  auto done = collector_.wait_final("two");
  ASSERT_TRUE(done);
  ASSERT_EQ(done->containers.size(), 2u);
  EXPECT_EQ(done->containers[0].name, "first");
  EXPECT_EQ(done->containers[0].exit_code, 0);
  EXPECT_EQ(done->containers[1].name, "second");
  EXPECT_EQ(done->containers[1].exit_code, 4);
  EXPECT_EQ(derive_pod_phase(done->containers), PodPhase::Failed);
}

TEST_F(ProcessRunnerTest, UnrunnableCommandIsStartError) {
  Container missing;
  missing.name = "missing";
  missing.command = {(root_ / "no-such-binary").string()};
  fs::path not_exec = root_ / "not-executable";
  std::ofstream(not_exec) << "#!/bin/sh\n";
  Container denied;
  denied.name = "denied";
  denied.command = {not_exec.string()};
  Container bad_dir = shell("baddir", "exit 0");
  bad_dir.working_dir = (root_ / "no-such-dir").string();
  runner_->launch(spec("bad", {missing, denied, bad_dir}));
  auto done = collector_.wait_final("bad");
  ASSERT_TRUE(done);
  ASSERT_EQ(done->containers.size(), 3u);
  EXPECT_EQ(done->containers[0].reason, "StartError");
  EXPECT_EQ(done->containers[0].exit_code, 127);
  EXPECT_EQ(done->containers[1].reason, "StartError");
  EXPECT_EQ(done->containers[1].exit_code, 126);
  EXPECT_EQ(done->containers[2].reason, "StartError");
  EXPECT_EQ(done->containers[2].exit_code, 127);
  EXPECT_EQ(slurp(root_ / "bad" / "missing.log"),
            "caldera: cannot run " + missing.command[0] + ": No such file or directory\n");
  EXPECT_NE(slurp(root_ / "bad" / "denied.log").find("Permission denied"), std::string::npos);
  EXPECT_NE(slurp(root_ / "bad" / "baddir.log").find("no-such-dir"), std::string::npos);
}

TEST_F(ProcessRunnerTest, MissingShimOrBadSpecIsStartError) {
  Collector other;
  auto broken = ProcessRunner::create((root_ / "no-shim").string(), other.callback());
  broken->launch(spec("noshim", {shell("a", "exit 0"), shell("b", "exit 0")}));
  auto done = other.wait_final("noshim");
  ASSERT_TRUE(done);
  ASSERT_EQ(done->containers.size(), 2u);
  EXPECT_EQ(done->containers[1].exit_code, 127);
  EXPECT_EQ(done->containers[1].reason.rfind("StartError: ", 0), 0u) << done->containers[1].reason;
  broken.reset();

  runner_->launch(spec("badname", {shell("../x", "exit 0")}));
  done = collector_.wait_final("badname");
  ASSERT_TRUE(done);
  EXPECT_EQ(done->containers[0].exit_code, 127);
  EXPECT_NE(done->containers[0].reason.find("invalid container name"), std::string::npos);
}

TEST_F(ProcessRunnerTest, ShimRejectsMalformedSpec) {
  fs::path dir = root_ / "garbled";
  std::ofstream(root_ / "garbled.spec") << "not a spec";
  std::string cmd = std::string(CALDERA_SHIM_PATH) + " " + dir.string() + " 100 < " +
                    (root_ / "garbled.spec").string();
  int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 2);
  EXPECT_NE(slurp(dir / "shim.err").find("spec"), std::string::npos);
}

TEST_F(ProcessRunnerTest, KillEndsThePodWithSigterm) {
  runner_->launch(spec("sleeper", {shell("main", "echo ready; exec sleep 30")}));
  ASSERT_TRUE(eventually([&] { return slurp(root_ / "sleeper" / "main.log") == "ready\n"; }));
  auto start = Clock::now();
  runner_->kill("sleeper", 5000);
  auto done = collector_.wait_final("sleeper", 3s);
  ASSERT_TRUE(done);
  EXPECT_LT(Clock::now() - start, 1s);
  EXPECT_EQ(done->containers[0].signal, SIGTERM);
  EXPECT_EQ(done->containers[0].exit_code, 128 + SIGTERM);
  EXPECT_EQ(done->containers[0].reason, "Signaled");
}

TEST_F(ProcessRunnerTest, KillEscalatesToSigkillAfterGrace) {
  runner_->launch(spec("stubborn", {shell("main", "trap '' TERM; echo ready; sleep 30")}, 300));
  ASSERT_TRUE(eventually([&] { return slurp(root_ / "stubborn" / "main.log") == "ready\n"; }));
  auto start = Clock::now();
  runner_->kill("stubborn", 300);
  auto done = collector_.wait_final("stubborn", 3s);
  ASSERT_TRUE(done);
  auto took = Clock::now() - start;
  EXPECT_GE(took, 280ms);
  EXPECT_LT(took, 1500ms);
  EXPECT_EQ(done->containers[0].signal, SIGKILL);
  EXPECT_EQ(done->containers[0].reason, "Signaled");
  // No orphan: the shell and its `sleep` (same process group) are gone.
  auto pids = pgids(root_ / "stubborn");
  ASSERT_EQ(pids.size(), 1u);
  EXPECT_TRUE(eventually([&] { return live_group_members(pids[0]) == 0; }, 1s));
}

TEST_F(ProcessRunnerTest, RunnerKillsAStuckShim) {
  runner_->launch(spec("stuck", {shell("main", "echo ready; sleep 30")}, 0));
  ASSERT_TRUE(eventually([&] { return slurp(root_ / "stuck" / "main.log") == "ready\n"; }));
  auto running = collector_.wait_running("stuck");
  ASSERT_TRUE(running);
  ASSERT_EQ(::kill(running->shim_pid, SIGSTOP), 0);  // a shim that cannot act on SIGTERM
  runner_->kill("stuck", 0);
  auto done = collector_.wait_final("stuck", 4s);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->containers[0].reason, "SupervisorLost");
  EXPECT_EQ(done->containers[0].exit_code, 255);
  auto pids = pgids(root_ / "stuck");
  ASSERT_EQ(pids.size(), 1u);
  EXPECT_TRUE(eventually([&] { return live_group_members(pids[0]) == 0; }, 1s));
}

// A pod runs under its node's lease: its supervisor stops it once the lease is over, with the
// pod's grace period, whether or not calderad is there (here it is not).
TEST_F(ProcessRunnerTest, ASupervisorStopsItsPodWhenTheLeaseRunsOutThoughCalderadIsGone) {
  const auto lease = (root_ / "lease").string();
  ASSERT_EQ(lease_file::write(lease, lease_file::monotonic_ms() + 800), "");
  auto s = spec("leased", {shell("main", "trap '' TERM; echo ready; exec sleep 30")}, 300);
  s.lease_stop_grace_ms = 300;
  s.lease_file = lease;
  runner_->launch(s);
  auto running = collector_.wait_running("leased");
  ASSERT_TRUE(running);
  ASSERT_TRUE(eventually([&] { return slurp(root_ / "leased" / "main.log") == "ready\n"; }));
  runner_.reset();  // calderad is gone: nobody renews the lease, the supervisor still watches it
  auto pids = pgids(root_ / "leased");
  ASSERT_EQ(pids.size(), 1u);
  const auto start = Clock::now();
  ASSERT_TRUE(eventually([&] { return live_group_members(pids[0]) == 0; }, 3s));
  // Lease (up to 800 ms from its write) plus the 300 ms grace: TERM is ignored, KILL ends it.
  EXPECT_GE(Clock::now() - start, 300ms);
  ASSERT_TRUE(eventually([&] {
    auto st = pod_dir::parse_state(slurp(root_ / "leased" / "state"), 1);
    return st.ended.has_value();
  }));
  auto st = pod_dir::parse_state(slurp(root_ / "leased" / "state"), 1);
  EXPECT_EQ((*st.ended)[0].reason, "LeaseExpired");
  EXPECT_EQ((*st.ended)[0].signal, SIGKILL);
}

// The lease's stop takes the pod's own lease-stop grace period, longer than 1 s here, and cuts a
// kill under way with a longer one down to it: the coordinator waits no longer than that.
TEST_F(ProcessRunnerTest, ALeaseStopGivesThePodItsOwnGraceAndCutsALongerKillToIt) {
  const auto lease = (root_ / "lease").string();
  const auto written = Clock::now();
  ASSERT_EQ(lease_file::write(lease, lease_file::monotonic_ms() + 500), "");
  const std::string stubborn = "trap '' TERM; echo ready; exec sleep 30";
  auto own = spec("own", {shell("main", stubborn)}, 20000);
  own.lease_stop_grace_ms = 1500;
  own.lease_file = lease;
  auto killed = spec("killed", {shell("main", stubborn)}, 20000);
  killed.lease_stop_grace_ms = 1500;
  killed.lease_file = lease;
  runner_->launch(own);
  runner_->launch(killed);
  ASSERT_TRUE(eventually([&] { return slurp(root_ / "own" / "main.log") == "ready\n"; }));
  ASSERT_TRUE(eventually([&] { return slurp(root_ / "killed" / "main.log") == "ready\n"; }));
  runner_->kill("killed", 20000);  // SIGTERM now, SIGKILL in 20 s: the lease ends it sooner
  auto a = collector_.wait_final("own", 6s);
  auto b = collector_.wait_final("killed", 1s);
  ASSERT_TRUE(a && b);
  const auto took = Clock::now() - written;
  EXPECT_GE(took, 500ms + 1400ms) << "the lease's end plus the pod's 1.5 s";
  EXPECT_LT(took, 5s) << "the kill's 20 s were cut to the lease's grace";
  for (const auto& done : {*a, *b}) {
    EXPECT_EQ(done.containers[0].reason, "LeaseExpired") << done.uid;
    EXPECT_EQ(done.containers[0].signal, SIGKILL) << done.uid;
  }
}

TEST_F(ProcessRunnerTest, ARenewedLeaseKeepsThePodRunningAndItsEndStopsIt) {
  const auto lease = (root_ / "lease").string();
  ASSERT_EQ(lease_file::write(lease, lease_file::monotonic_ms() + 300), "");
  auto s = spec("renewed", {shell("main", "echo ready; exec sleep 30")}, 5000);
  s.lease_file = lease;
  runner_->launch(s);
  ASSERT_TRUE(collector_.wait_running("renewed"));
  // Renewed every 100 ms for 1.5 s, five times the lease: the pod runs throughout.
  const auto until = Clock::now() + 1500ms;
  while (Clock::now() < until) {
    ASSERT_EQ(lease_file::write(lease, lease_file::monotonic_ms() + 300), "");
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_FALSE(collector_.wait_final("renewed", 10ms)) << "stopped under a lease it held";
  const auto start = Clock::now();
  auto done = collector_.wait_final("renewed", 3s);
  ASSERT_TRUE(done);
  EXPECT_LT(Clock::now() - start, 1s) << "sleep ends at the SIGTERM, within the lease";
  EXPECT_EQ(done->containers[0].reason, "LeaseExpired");
  EXPECT_EQ(done->containers[0].signal, SIGTERM);
}

TEST_F(ProcessRunnerTest, APodWhoseLeaseIsOverAtItsStartRunsNothing) {
  const auto lease = (root_ / "lease").string();
  ASSERT_EQ(lease_file::write(lease, lease_file::monotonic_ms() - 1), "");
  const auto marker = root_ / "ran";
  auto s = spec("late", {shell("main", "touch " + marker.string())});
  s.lease_file = lease;
  runner_->launch(s);
  auto done = collector_.wait_final("late", 3s);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->containers[0].reason, "LeaseExpired");
  EXPECT_FALSE(fs::exists(marker));
  // No lease file at all counts as over too.
  s = spec("nolease", {shell("main", "touch " + marker.string())});
  s.lease_file = (root_ / "missing").string();
  runner_->launch(s);
  done = collector_.wait_final("nolease", 3s);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->containers[0].reason, "LeaseExpired");
  EXPECT_FALSE(fs::exists(marker));
}

TEST(LeaseFile, ReadsWhatWasWrittenInThisBootAndNothingElse) {
  char tmpl[] = "/tmp/caldera-lease-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string path = std::string(tmpl) + "/lease";
  EXPECT_EQ(lease_file::read(path), 0) << "missing";
  ASSERT_EQ(lease_file::write(path, 123456789), "");
  EXPECT_EQ(lease_file::read(path), 123456789);
  ASSERT_EQ(lease_file::write(path, 42), "");  // shorter: overwritten whole, fixed width
  EXPECT_EQ(lease_file::read(path), 42);
  std::ofstream(path) << "00000000000000000042 00000000000000000042 "
                         "00000000-0000-0000-0000-000000000000\n";
  EXPECT_EQ(lease_file::read(path), 0) << "another boot's";
  std::ofstream(path) << "00000000000000000042 00000000000000000043 x\n";
  EXPECT_EQ(lease_file::read(path), 0) << "torn";
  EXPECT_NE(lease_file::write(std::string(tmpl) + "/no/such/dir/lease", 1), "");
  fs::remove_all(tmpl);
}

TEST_F(ProcessRunnerTest, PodsSurviveTheRunnerAndAreAdopted) {
  const std::vector<std::string> uids = {"s0", "s1", "s2"};
  for (const auto& uid : uids)
    runner_->launch(spec(uid, {shell("main", "sleep 1; exit 5"), shell("side", "exit 0")}));
  std::map<std::string, PodProcessStatus> first;
  for (const auto& uid : uids) {
    auto r = collector_.wait_running(uid);
    ASSERT_TRUE(r);
    first[uid] = *r;
  }
  runner_.reset();  // calderad goes away; its pods must not
  for (const auto& [uid, s] : first) EXPECT_TRUE(process_exists(s.shim_pid)) << uid;

  Collector later;
  auto adopter = ProcessRunner::create(CALDERA_SHIM_PATH, later.callback());
  for (const auto& [uid, s] : first)
    adopter->adopt(uid, (root_ / uid).string(), 2, s.shim_pid, s.shim_start_ticks);
  for (const auto& uid : uids) {
    auto r = later.wait_running(uid);
    ASSERT_TRUE(r) << uid;
    EXPECT_EQ(r->shim_pid, first[uid].shim_pid);
    EXPECT_EQ(r->containers[0].name, "main");
  }
  for (const auto& uid : uids) {
    auto done = later.wait_final(uid, 5s);
    ASSERT_TRUE(done) << uid;
    ASSERT_EQ(done->containers.size(), 2u);
    EXPECT_EQ(done->containers[0].exit_code, 5);
    EXPECT_EQ(done->containers[0].reason, "Error");
    EXPECT_EQ(done->containers[1].reason, "Completed");
    EXPECT_GE(done->containers[0].finished_ms - done->containers[0].started_ms, 900);
  }
}

// A data dir lost under running pods (and restored from a backup, which has their records but
// not their directories): a shim holds its deleted state file open, and waits after its pod's end
// for a node to read it; through it the pod's end is learned as it was, not taken for a lost
// supervisor, whether the pod ended before the adoption ("early") or after it ("late").
TEST_F(ProcessRunnerTest, AShimWhosePodDirWasDeletedIsAdoptedThroughTheFileItHoldsOpen) {
  runner_->launch(spec("early", {shell("main", "echo ready; sleep 1; exit 4")}));
  runner_->launch(spec("late", {shell("main", "echo ready; sleep 4; exit 3")}));
  std::map<std::string, PodProcessStatus> first;
  for (const auto* uid : {"early", "late"}) {
    auto r = collector_.wait_running(uid);
    ASSERT_TRUE(r) << uid;
    first[uid] = *r;
    ASSERT_TRUE(eventually([&] { return slurp(root_ / uid / "main.log") == "ready\n"; }));
  }
  runner_.reset();
  for (const auto* uid : {"early", "late"}) fs::remove_all(root_ / uid);
  ASSERT_FALSE(collector_.wait_final("early", 10ms)) << "it ended too soon for this test";
  std::this_thread::sleep_for(1500ms);  // the early pod has ended: its shim waits
  EXPECT_TRUE(process_exists(first["early"].shim_pid));

  Collector later;
  auto adopter = ProcessRunner::create(CALDERA_SHIM_PATH, later.callback());
  for (const auto& [uid, s] : first)
    adopter->adopt(uid, (root_ / uid).string(), 1, s.shim_pid, s.shim_start_ticks);
  auto early = later.wait_final("early", 3s);
  ASSERT_TRUE(early);
  EXPECT_EQ(early->containers[0].exit_code, 4);
  EXPECT_EQ(early->containers[0].reason, "Error");
  EXPECT_TRUE(eventually([&] { return !process_exists(first["early"].shim_pid); }, 2s))
      << "its shim was not let go";
  auto late = later.wait_final("late", 5s);
  ASSERT_TRUE(late);
  EXPECT_EQ(late->containers[0].exit_code, 3);
  EXPECT_EQ(late->containers[0].reason, "Error");
}

TEST_F(ProcessRunnerTest, AdoptingAnEndedShimReportsItsRecord) {
  // A pid that is certainly gone: a reaped child of ours.
  pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ASSERT_GT(gone, 0);
  ::waitpid(gone, nullptr, 0);

  fs::create_directories(root_ / "ended");
  std::ofstream(root_ / "ended" / "state")
      << "shim " << gone << " 12345\nstart a 0 1000\nstart b 0 1000\nrunning\n"
      << "end a 0 0 Completed 1000 2000\nend b 137 9 Signaled 1000 3000\ndone\n";
  runner_->adopt("ended", (root_ / "ended").string(), 2, gone, 12345);
  auto done = collector_.wait_final("ended");
  ASSERT_TRUE(done);
  ASSERT_EQ(done->containers.size(), 2u);
  EXPECT_EQ(done->containers[0],
            (ContainerStatus{"a", ContainerState::Terminated, 0, 0, "Completed", 1000, 2000}));
  EXPECT_EQ(done->containers[1],
            (ContainerStatus{"b", ContainerState::Terminated, 137, 9, "Signaled", 1000, 3000}));

  // A live process whose start time differs is not the shim: the pid was reused.
  runner_->adopt("reused", (root_ / "reused").string(), 2, ::getpid(), 1);
  done = collector_.wait_final("reused");
  ASSERT_TRUE(done);
  ASSERT_EQ(done->containers.size(), 2u);
  for (const auto& c : done->containers) {
    EXPECT_EQ(c.reason, "SupervisorLost");
    EXPECT_EQ(c.exit_code, 255);
  }
}

TEST_F(ProcessRunnerTest, ManyShortPods) {
  constexpr size_t kPods = 200;
  Container t;
  t.name = "main";
  t.command = {"true"};
  auto start = Clock::now();
  for (size_t i = 0; i < kPods; ++i) runner_->launch(spec("p" + std::to_string(i), {t}));
  ASSERT_EQ(collector_.wait_final_count(kPods, 20s), kPods);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  std::printf("[ ProcessRunner ] %zu pods ran in %lld ms\n", kPods,
              static_cast<long long>(ms.count()));
  for (size_t i = 0; i < kPods; ++i) {
    auto done = collector_.wait_final("p" + std::to_string(i), 0ms);
    ASSERT_TRUE(done);
    EXPECT_EQ(derive_pod_phase(done->containers), PodPhase::Succeeded) << i;
  }
}

}  // namespace
}  // namespace caldera

namespace caldera {
namespace {

// A node killed between spawning a pod's supervisor and recording it must not start the pod
// twice on restart: a second shim for the same pod dir refuses (exit 3) and runs nothing.
TEST_F(ProcessRunnerTest, ASecondShimForThePodRunsNothing) {
  Container c = shell("main", "echo ran >> count; sleep 0.3");
  c.working_dir = root_.string();
  runner_->launch(spec("once", {c}));
  auto running = collector_.wait_running("once");
  ASSERT_TRUE(running);
  fs::path dir = root_ / "once";
  std::string cmd = std::string(CALDERA_SHIM_PATH) + " " + dir.string() + " 100";
  int rc = std::system(cmd.c_str());  // while the first still runs
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 3);
  ASSERT_TRUE(collector_.wait_final("once"));
  rc = std::system(cmd.c_str());  // after it ended: the pod was claimed once, for ever
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 3);
  std::istringstream claim(slurp(dir / "state"));
  std::string word;
  int32_t pid = 0;
  uint64_t ticks = 0;
  ASSERT_TRUE(claim >> word >> pid >> ticks);
  EXPECT_EQ(word, "shim");
  EXPECT_EQ(pid, running->shim_pid);
  EXPECT_EQ(ticks, running->shim_start_ticks);
  EXPECT_EQ(slurp(root_ / "count"), "ran\n");
}

// Like the kubelet's containerLogMaxSize/containerLogMaxFiles: no file beyond the size, the newest
// output in <container>.log, older files shifted to .1, .2 and dropped beyond the count.
TEST_F(ProcessRunnerTest, LogRotatesAtMaxSizeAndKeepsMaxFiles) {
  auto s = spec("rotate", {shell("main",
                                 "i=1000; while [ $i -lt 4000 ]; do echo line-$i; "
                                 "[ $((i % 500)) -eq 0 ] && echo err-$i >&2; i=$((i+1)); done")});
  s.log_max_bytes = 4096;
  s.log_max_files = 3;
  runner_->launch(s);
  auto done = collector_.wait_final("rotate");
  ASSERT_TRUE(done);
  EXPECT_EQ(done->containers[0].reason, "Completed");

  fs::path dir = root_ / "rotate";
  EXPECT_FALSE(fs::exists(dir / "main.log.3"));
  std::string all;
  for (const char* name : {"main.log.2", "main.log.1", "main.log"}) {
    ASSERT_TRUE(fs::exists(dir / name)) << name;
    std::string text = slurp(dir / name);
    EXPECT_LE(text.size(), 4096u) << name;
    // A rotated file was cut at the last whole line that fit.
    if (std::string(name) != "main.log") {
      EXPECT_GT(text.size(), 4096u - 16) << name;
    }
    ASSERT_FALSE(text.empty());
    EXPECT_EQ(text.back(), '\n') << name;
    all += text;
  }
  // The newest output is in main.log, complete when the pod is reported, with no gap before it.
  EXPECT_EQ(all.substr(all.size() - 10), "line-3999\n");
  std::istringstream lines(all);
  std::string line;
  int expect = -1;
  while (std::getline(lines, line)) {
    if (line.rfind("err-", 0) == 0) continue;
    int n = std::stoi(line.substr(5));
    if (expect >= 0) {
      EXPECT_EQ(n, expect) << "a line is missing before " << line;
    }
    expect = n + 1;
  }
  EXPECT_NE(all.find("err-3500\n"), std::string::npos);
}

TEST_F(ProcessRunnerTest, ALineLongerThanTheMaxSizeIsSplit) {
  auto s = spec("long", {shell("main", "head -c 10000 /dev/zero | tr '\\000' x; echo; echo end")});
  s.log_max_bytes = 4096;
  s.log_max_files = 4;
  runner_->launch(s);
  ASSERT_TRUE(collector_.wait_final("long"));
  fs::path dir = root_ / "long";
  EXPECT_FALSE(fs::exists(dir / "main.log.3"));
  EXPECT_TRUE(slurp(dir / "main.log.2") == std::string(4096, 'x'));
  EXPECT_TRUE(slurp(dir / "main.log.1") == std::string(4096, 'x'));
  EXPECT_TRUE(slurp(dir / "main.log") == std::string(1808, 'x') + "\nend\n");
}

// Output the shim cannot write is dropped: the container neither blocks nor sees a write error
// (it used to get ENOSPC itself), and once it can, the log says how much was lost.
TEST_F(ProcessRunnerTest, AFullDiskNeitherBlocksNorFailsTheContainer) {
  fs::path mnt = root_ / "small";
  fs::create_directories(mnt);
  if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=1m") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs (needs root): " << strerror(errno);
  struct Unmount {
    fs::path p;
    ~Unmount() { ::umount2(p.c_str(), MNT_DETACH); }
  } unmount{mnt};
  { std::ofstream(mnt / "filler") << std::string(256 << 10, 'f'); }

  fs::path written = root_ / "written", go = root_ / "go";
  PodProcessSpec s;
  s.uid = "full";
  s.pod_dir = (mnt / "full").string();
  s.containers = {shell("main",
                        "head -c 3000000 /dev/zero | tr '\\000' z || exit 7; echo || exit 8; "
                        "touch " +
                            written.string() + "; while [ ! -e " + go.string() +
                            " ]; do sleep 0.01; done; echo after")};
  s.log_max_files = 2;  // the default 10 MiB per file: more than this disk holds
  runner_->launch(s);
  ASSERT_TRUE(eventually([&] { return fs::exists(written); }, 10s));
  // The log stopped short of the disk's last 5%: the node keeps room to work.
  struct statvfs vfs {};
  ASSERT_EQ(::statvfs(mnt.c_str(), &vfs), 0);
  const auto free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  const auto size = static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize;
  EXPECT_GE(free_bytes, size / 100 * 5 - 2 * vfs.f_frsize) << free_bytes << " of " << size;
  fs::remove(mnt / "filler");  // space comes back
  { std::ofstream(go) << "go"; }
  auto done = collector_.wait_final("full", 10s);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->containers[0].exit_code, 0);
  EXPECT_EQ(done->containers[0].reason, "Completed");
  std::string log = slurp(mnt / "full" / "main.log");
  EXPECT_NE(log.find("bytes of output were lost: the disk is nearly full (its last 5% is kept "
                     "for the node)\n"),
            std::string::npos)
      << log.substr(log.size() > 200 ? log.size() - 200 : 0);
  EXPECT_EQ(log.substr(log.size() - 6), "after\n");
}

// A rotation that cannot rename main.log (the container took the name main.log.1 for a directory in
// its working dir) used to be tried again at once, forever: the shim spun, stopped reading the
// pipes and never finished the pod. Now the output goes on into main.log, past the size.
TEST_F(ProcessRunnerTest, ARotationThatFailsNeitherSpinsNorLosesOutput) {
  auto s = spec("stuck", {shell("main",
                                "mkdir main.log.1 || exit 9; i=1000; while [ $i -lt 3000 ]; do "
                                "echo line-$i; i=$((i+1)); done; echo end")});
  s.log_max_bytes = 4096;
  s.log_max_files = 2;
  runner_->launch(s);
  auto done = collector_.wait_final("stuck", 10s);
  ASSERT_TRUE(done) << "the shim did not finish the pod";
  EXPECT_EQ(done->containers[0].reason, "Completed");
  std::string log = slurp(root_ / "stuck" / "main.log");
  std::string expected;
  for (int i = 1000; i < 3000; ++i) expected += "line-" + std::to_string(i) + "\n";
  expected += "end\n";
  EXPECT_TRUE(log == expected) << log.size() << " bytes, expected " << expected.size();
}

// calderad raises its own open files limit for client connections; its containers get the one
// they are given (calderad's original), not the raised one.
TEST_F(ProcessRunnerTest, ContainersStartWithTheOpenFilesLimitTheyAreGiven) {
  auto s = spec("nofile", {shell("main", "ulimit -n")});
  s.open_files_limit = 123;
  runner_->launch(s);
  ASSERT_TRUE(collector_.wait_final("nofile"));
  EXPECT_EQ(slurp(root_ / "nofile" / "main.log"), "123\n");
}

// CPU time (utime + stime, in clock ticks) of a process so far.
long long cpu_ticks(int32_t pid) {
  std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  auto p = stat.rfind(')');
  if (p == std::string::npos) return -1;
  std::istringstream in(stat.substr(p + 2));
  std::string field;
  long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && in >> field; ++i) {
    if (i == 14) utime = std::stoll(field);
    if (i == 15) stime = std::stoll(field);
  }
  return utime + stime;
}

// ppoll fails with EINVAL when it is given more descriptors than RLIMIT_NOFILE allows (here the
// limit is lowered under the shim). The shim used to retry at once, forever, at full speed and
// without reading its pipes; now it waits a little and reads them anyway. (Each log is made on
// its container's first output, so the containers write once before the limit is lowered.)
TEST_F(ProcessRunnerTest, APollThatFailsNeitherSpinsNorStopsReadingThePipes) {
  fs::path go = root_ / "go", end = root_ / "end";
  auto wait_for = [](const fs::path& p) {
    return "while [ ! -e " + p.string() + " ]; do sleep 0.02; done; ";
  };
  std::vector<Container> cs;
  for (int i = 0; i < 8; ++i)
    cs.push_back(shell("c" + std::to_string(i), "echo hi; " + wait_for(go) + "echo out-" +
                                                    std::to_string(i) + "; " + wait_for(end)));
  runner_->launch(spec("poll", cs));
  auto running = collector_.wait_running("poll");
  ASSERT_TRUE(running);
  for (int i = 0; i < 8; ++i)
    ASSERT_TRUE(eventually(
        [&] { return slurp(root_ / "poll" / ("c" + std::to_string(i) + ".log")) == "hi\n"; }));
  const int32_t shim = running->shim_pid;
  rlimit original{};
  ASSERT_EQ(::prlimit(shim, RLIMIT_NOFILE, nullptr, &original), 0) << strerror(errno);
  rlimit low = original;
  low.rlim_cur = 4;  // below the 8 pipes it polls
  ASSERT_EQ(::prlimit(shim, RLIMIT_NOFILE, &low, nullptr), 0) << strerror(errno);
  const long long before = cpu_ticks(shim);
  std::this_thread::sleep_for(1s);
  const long long used = cpu_ticks(shim) - before;
  { std::ofstream(go) << "go"; }
  for (int i = 0; i < 8; ++i)
    EXPECT_TRUE(eventually(
        [&] {
          return slurp(root_ / "poll" / ("c" + std::to_string(i) + ".log")) ==
                 "hi\nout-" + std::to_string(i) + "\n";
        },
        2s))
        << "c" << i;
  // Its records are written once the containers end: the limit must allow them.
  ASSERT_EQ(::prlimit(shim, RLIMIT_NOFILE, &original, nullptr), 0) << strerror(errno);
  { std::ofstream(end) << "end"; }
  auto done = collector_.wait_final("poll");
  ASSERT_TRUE(done);
  EXPECT_LT(used, sysconf(_SC_CLK_TCK) / 4) << "the shim spun";
}

}  // namespace
}  // namespace caldera

namespace caldera {
namespace {

// Every file made per pod is an inode to allocate and free, and they dominated the cost of short
// pods: a pod that prints nothing leaves its pod dir with its state record alone (no spec, lock,
// pids, started or status files, and no empty log).
TEST_F(ProcessRunnerTest, ASilentPodLeavesOnlyItsStateRecord) {
  runner_->launch(spec("quiet", {program("main", {"true"})}));
  auto done = collector_.wait_final("quiet");
  ASSERT_TRUE(done);
  EXPECT_EQ(done->containers[0].reason, "Completed");
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(root_ / "quiet"))
    files.push_back(entry.path().filename().string());
  EXPECT_EQ(files, std::vector<std::string>{"state"});
  auto st = pod_dir::parse_state(slurp(root_ / "quiet" / "state"), 1);
  EXPECT_EQ(st.shim_pid, done->shim_pid);
  ASSERT_TRUE(st.ended);
  EXPECT_EQ((*st.ended)[0], done->containers[0]);
}

// The shim offers its record on stdout, but a node that does not read it (hung, or stopped) must
// not hold the pod: with a record far larger than a pipe holds, the shim still finishes, and the
// state file has the whole record.
TEST_F(ProcessRunnerTest, AShimIsNotHeldByANodeThatDoesNotReadItsPipe) {
  std::vector<Container> cs;
  for (int i = 0; i < 400; ++i) {
    Container c;
    c.name = std::string(190, 'c') + std::to_string(i);
    c.command = {"true"};
    cs.push_back(std::move(c));
  }
  fs::path dir = root_ / "unread";
  { std::ofstream(root_ / "unread.spec", std::ios::binary) << pod_dir::encode_spec(cs); }
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    int in = ::open((root_ / "unread.spec").c_str(), O_RDONLY);
    ::dup2(in, STDIN_FILENO);
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    ::close(pipe_fds[0]);
    ::execl(CALDERA_SHIM_PATH, CALDERA_SHIM_PATH, dir.c_str(), "100", nullptr);
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  int status = 0;
  bool ended = eventually([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, 10s);
  if (!ended) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  ::close(pipe_fds[0]);
  ASSERT_TRUE(ended) << "the shim blocked on its stdout";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::string record = slurp(dir / "state");
  EXPECT_GT(record.size(), 65536u);
  auto st = pod_dir::parse_state(record, cs.size());
  ASSERT_TRUE(st.ended);
  for (const auto& c : *st.ended) EXPECT_EQ(c.reason, "Completed") << c.name;
}

}  // namespace
}  // namespace caldera

namespace caldera {
namespace {

// The shim launcher this test process's runner started (its child, "caldera-shim --launcher").
int32_t launcher_pid() {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    std::string cmdline = slurp(entry.path() / "cmdline");
    if (cmdline.find("--launcher") == std::string::npos) continue;
    auto stat = testing::parse_proc_stat(slurp(entry.path() / "stat"));
    if (stat && stat->ppid == ::getpid() && stat->state != "Z")
      return std::stoi(entry.path().filename().string());
  }
  return 0;
}

Container sleeper(const std::string& name, const std::string& seconds) {
  return program(name, {"sleep", seconds});
}

// Shims come from a launcher that forks them. If it dies, the pods it made run on and end as
// usual, a launch it never took fails as a creation (nothing of it ran), and the next launch
// gets a new launcher.
TEST_F(ProcessRunnerTest, PodsOutliveTheLauncherAndALostLaunchIsAFailedCreation) {
  runner_->launch(spec("before", {sleeper("main", "1.5")}));
  ASSERT_TRUE(collector_.wait_running("before"));
  int32_t first = launcher_pid();
  ASSERT_GT(first, 0) << "no launcher";
  std::this_thread::sleep_for(1100ms);  // a launcher that dies young is not started again

  ASSERT_EQ(::kill(first, SIGSTOP), 0);  // it takes no more requests
  for (const char* uid : {"lost-0", "lost-1", "lost-2"})
    runner_->launch(spec(uid, {sleeper("main", "30")}));
  std::this_thread::sleep_for(200ms);
  ASSERT_EQ(::kill(first, SIGKILL), 0);
  for (const char* uid : {"lost-0", "lost-1", "lost-2"}) {
    auto done = collector_.wait_final(uid);
    ASSERT_TRUE(done) << uid;
    EXPECT_NE(done->create_error, "") << uid;
    EXPECT_EQ(done->containers[0].reason.rfind("StartError", 0), 0u) << done->containers[0].reason;
  }

  auto before = collector_.wait_final("before");
  ASSERT_TRUE(before);
  EXPECT_EQ(before->containers[0].reason, "Completed");

  runner_->launch(spec("after", {program("main", {"true"})}));
  auto after = collector_.wait_final("after");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->containers[0].reason, "Completed");
  int32_t second = launcher_pid();
  EXPECT_GT(second, 0);
  EXPECT_NE(second, first);
}

// Launches beyond what the launcher has in hand wait in the runner; a kill finds them there and
// ends them at once, without their ever running.
TEST_F(ProcessRunnerTest, AKillReachesAPodStillWaitingForTheLauncher) {
  constexpr int kPods = 150;  // more than the launcher's window
  for (int i = 0; i < kPods; ++i)
    runner_->launch(spec("w" + std::to_string(i), {sleeper("main", "30")}));
  const std::string last = "w" + std::to_string(kPods - 1);
  runner_->kill(last, 10000);
  auto done = collector_.wait_final(last);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->containers[0].reason, "Signaled");
  EXPECT_EQ(done->containers[0].exit_code, 128 + SIGTERM);
  for (int i = 0; i < kPods - 1; ++i) runner_->kill("w" + std::to_string(i), 0);
  EXPECT_EQ(collector_.wait_final_count(kPods, 20s), static_cast<size_t>(kPods));
  EXPECT_FALSE(fs::exists(root_ / last / "state")) << "it never ran";

  // A kill that comes before the launcher's answer goes out with the answer.
  int32_t launcher = launcher_pid();
  ASSERT_GT(launcher, 0);
  ASSERT_EQ(::kill(launcher, SIGSTOP), 0);
  runner_->launch(spec("held", {sleeper("main", "30")}));
  runner_->kill("held", 10000);
  std::this_thread::sleep_for(100ms);
  ASSERT_EQ(::kill(launcher, SIGCONT), 0);
  done = collector_.wait_final("held");
  ASSERT_TRUE(done);
  EXPECT_EQ(done->containers[0].reason, "Signaled");
}

}  // namespace
}  // namespace caldera

namespace caldera {
namespace {

// A start record larger than the record pipe holds still reaches the node whole, as the pipe
// drains: the pod is reported Running while it runs.
TEST_F(ProcessRunnerTest, APodWithALargeStartRecordIsReportedRunning) {
  std::vector<Container> cs;
  for (int i = 0; i < 400; ++i)
    cs.push_back(sleeper(std::string(190, 'c') + std::to_string(i), "2"));
  runner_->launch(spec("wide", cs));
  auto running = collector_.wait_running("wide");
  ASSERT_TRUE(running);
  ASSERT_EQ(running->containers.size(), cs.size());
  EXPECT_EQ(running->containers[399].name, cs[399].name);
  EXPECT_GT(running->containers[399].started_ms, 0);
  auto done = collector_.wait_final("wide", 10s);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->containers[399].reason, "Completed");
}

// Launched again while its first shim still runs it (a restart that raced a queued launch), a
// pod is not reported ended: the running shim is adopted and its end is the pod's.
TEST_F(ProcessRunnerTest, ALaunchOfAPodAnotherShimRunsAdoptsThatShim) {
  runner_->launch(spec("twice", {sleeper("main", "1")}));
  auto first = collector_.wait_running("twice");
  ASSERT_TRUE(first);
  Collector later;
  auto second = ProcessRunner::create(CALDERA_SHIM_PATH, later.callback());
  second->launch(spec("twice", {sleeper("main", "1")}));
  auto adopted = later.wait_running("twice");
  ASSERT_TRUE(adopted);
  EXPECT_EQ(adopted->shim_pid, first->shim_pid);
  auto done = later.wait_final("twice");
  ASSERT_TRUE(done);
  EXPECT_EQ(done->containers[0].reason, "Completed");
  for (const auto& s : later.all()) EXPECT_EQ(s.shim_pid, first->shim_pid);
}

// What the shim would refuse after claiming the pod is refused before: a pod failure, not a
// failed creation made again and again.
TEST(PodDir, TheShimsLimitsAreCheckedBeforeLaunch) {
  std::vector<Container> many(4097);
  for (size_t i = 0; i < many.size(); ++i) {
    many[i].name = "c" + std::to_string(i);
    many[i].command = {"true"};
  }
  auto problem = pod_dir::check_containers(many);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("4096"), std::string::npos) << *problem;
  many.resize(4096);
  EXPECT_FALSE(pod_dir::check_containers(many));
}

// The node claims a pod that must never run as a shim would; its own claim, found again after a
// second restart, is still its own, and one a shim made first (even one still empty) is not.
TEST(PodDir, TheNodeClaimsAPodDirOnceAndKnowsItsOwnClaim) {
  char tmpl[] = "/tmp/caldera-claim-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const fs::path root = tmpl;
  EXPECT_EQ(pod_dir::claim_for_node((root / "a").string()), pod_dir::Claim::Made);
  EXPECT_EQ(pod_dir::claim_for_node((root / "a").string()), pod_dir::Claim::Made);
  fs::create_directory(root / "b");
  ASSERT_TRUE(pod_dir::write_file((root / "b" / "state").string(), "shim 42 7\n"));
  EXPECT_EQ(pod_dir::claim_for_node((root / "b").string()), pod_dir::Claim::Taken);
  // A shim between making the file and writing its line: its claim, not an empty one of the node.
  fs::create_directory(root / "e");
  ASSERT_TRUE(pod_dir::write_file((root / "e" / "state").string(), ""));
  EXPECT_EQ(pod_dir::claim_for_node((root / "e").string()), pod_dir::Claim::Taken);
  // What a node killed in the middle of a claim left aside is no claim.
  fs::create_directory(root / "f");
  ASSERT_TRUE(pod_dir::write_file((root / "f" / "state.node").string(), "no"));
  EXPECT_EQ(pod_dir::claim_for_node((root / "f").string()), pod_dir::Claim::Made);
  EXPECT_EQ(pod_dir::read_file((root / "f" / "state").string()), "node\n");
  EXPECT_FALSE(fs::exists(root / "f" / "state.node"));
  EXPECT_EQ(pod_dir::claim_for_node((root / "missing" / "c").string()), pod_dir::Claim::Failed);
  fs::remove_all(root);
}

}  // namespace
}  // namespace caldera

namespace caldera {
namespace {

// An adopted supervisor surely ran its pod: ending without a record (one from an older calderad,
// which kept other files) loses the outcome, and is never a failed creation to make again.
TEST_F(ProcessRunnerTest, AnAdoptedShimWithoutARecordIsLostNotAFailedCreation) {
  pid_t old_shim = ::fork();
  if (old_shim == 0) {
    ::execlp("sleep", "sleep", "0.3", nullptr);
    ::_exit(127);
  }
  ASSERT_GT(old_shim, 0);
  auto ticks = pod_dir::proc_start_ticks(old_shim);
  ASSERT_TRUE(ticks);
  fs::create_directories(root_ / "old");
  runner_->adopt("old", (root_ / "old").string(), 1, old_shim, *ticks);
  ASSERT_TRUE(collector_.wait_running("old"));
  auto done = collector_.wait_final("old");
  ::waitpid(old_shim, nullptr, 0);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->containers[0].reason, "SupervisorLost");
  EXPECT_EQ(done->create_error, "");
}

}  // namespace
}  // namespace caldera

namespace caldera {
namespace {

// A launcher that dies young is not started again: every shim after it is spawned directly
// (posix_spawn), and such pods run, are killed and end as launched ones do.
TEST_F(ProcessRunnerTest, WithoutALauncherShimsAreSpawned) {
  runner_->launch(spec("first", {sleeper("main", "0.2")}));
  ASSERT_TRUE(collector_.wait_running("first"));
  int32_t launcher = launcher_pid();
  ASSERT_GT(launcher, 0);
  ASSERT_EQ(::kill(launcher, SIGKILL), 0);  // within a second of its start
  ASSERT_TRUE(eventually([&] { return launcher_pid() == 0; }));

  runner_->launch(spec("spawned", {program("main", {"true"})}));
  auto done = collector_.wait_final("spawned");
  ASSERT_TRUE(done);
  EXPECT_EQ(done->containers[0].reason, "Completed");
  EXPECT_EQ(launcher_pid(), 0) << "a launcher was started again";

  runner_->launch(spec("stopped", {shell("main", "echo ready; sleep 30")}));
  ASSERT_TRUE(eventually([&] { return slurp(root_ / "stopped" / "main.log") == "ready\n"; }));
  runner_->kill("stopped", 10000);
  done = collector_.wait_final("stopped");
  ASSERT_TRUE(done);
  EXPECT_EQ(done->containers[0].reason, "Signaled");
  EXPECT_EQ(done->containers[0].exit_code, 128 + SIGTERM);

  auto first = collector_.wait_final("first");
  ASSERT_TRUE(first);
  EXPECT_EQ(first->containers[0].reason, "Completed");
}

}  // namespace
}  // namespace caldera
