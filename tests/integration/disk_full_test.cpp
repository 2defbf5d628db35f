// A pod that floods its log on a small data disk: the node stays usable, resumes once space is
// back, keeps logs and records all-or-nothing, and still stops cleanly. Real calderad, real CLI,
// a real 16 MiB tmpfs (tests run as root; skipped where mounting is not allowed).
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness.hpp"

namespace caldera::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// 30 MB of output, then one last line: twice the whole data disk. With `ended`, it then
// creates that file (off the small disk): its output has all reached the shim's pipe.
std::string bomb_yaml(const std::string& ended = "") {
  return std::string(R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: bomb
spec:
  minAvailable: 1
  tasks:
    - name: main
      replicas: 1
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: main
              command: ["sh", "-c", "head -c 31457280 /dev/zero | tr '\\000' x; echo; echo done)") +
         (ended.empty() ? "" : "; touch " + ended) + "\"]\n";
}

std::string sim_yaml(const std::string& name, const std::string& annotation = "") {
  return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: " + name + "\n" +
         (annotation.empty() ? "" : "  annotations:\n    padding: \"" + annotation + "\"\n") +
         R"(spec:
  minAvailable: 1
  tasks:
    - name: w
      replicas: 1
      template:
        metadata:
          annotations:
            caldera.io/sim-duration-ms: "100"
        spec:
          containers:
            - name: main
              command: ["simulated"]
)";
}

// calderad on a data dir of its own small tmpfs. Not the harness's Calderad: the exit status of
// SIGTERM is what these tests check.
class DiskFull : public ::testing::Test {
 protected:
  void SetUp() override {
    mnt_ = dir_.path() + "/disk";
    fs::create_directories(mnt_);
    if (::mount("tmpfs", mnt_.c_str(), "tmpfs", 0, "size=16m") != 0) {
      mnt_.clear();
      GTEST_SKIP() << "cannot mount a tmpfs (needs root): " << std::strerror(errno);
    }
    data_ = mnt_ + "/node";
    fs::create_directories(data_);
  }

  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (!mnt_.empty()) ::umount2(mnt_.c_str(), MNT_DETACH);
  }

  void start(std::vector<std::string> extra = {}) {
    port_file_ = dir_.path() + "/port";
    std::vector<std::string> argv{CALDERAD_PATH, "--port", "0",           "--cluster-port", "0",
                                  "--data-dir",  data_,    "--port-file", port_file_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    pid_ = fork();
    if (pid_ == 0) {
      // Its log is outside the small disk: what it says about the disk must not depend on it.
      int log = ::open(log_path().c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      dup2(log, 1);
      dup2(log, 2);
      std::vector<char*> args;
      for (auto& a : argv) args.push_back(a.data());
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    ASSERT_TRUE(eventually(
        [&] {
          auto text = slurp(port_file_);
          if (text.empty()) return false;
          server_ = "127.0.0.1:" + std::to_string(std::stoi(text));
          return cli({"get", "nodes"}).exit_code == 0;
        },
        20s))
        << log();
  }

  // SIGTERM, then the wait status (or -1 if it did not end within 20 s).
  int terminate() {
    ::kill(pid_, SIGTERM);
    int status = -1;
    bool ended = eventually([&] { return ::waitpid(pid_, &status, WNOHANG) == pid_; }, 20s);
    pid_ = ended ? -1 : pid_;
    return ended ? status : -1;
  }

  CommandResult cli(std::vector<std::string> args, const std::string& input = {}) {
    args.insert(args.begin(), {CALDERA_CLI_PATH, "--server", server_});
    return run(args, input);
  }
  CommandResult submit(const std::string& yaml) {
    return cli({"submit", "-f", write_file(dir_.path(), "job.yaml", yaml)});
  }
  std::string phase(const std::string& job) {
    auto r = cli({"get", "job", job, "-o", "json"});
    if (r.exit_code != 0) return "";
    return nlohmann::json::parse(r.out)["status"]["state"]["phase"].get<std::string>();
  }

  std::string log_path() const { return dir_.path() + "/calderad.log"; }
  std::string log() const { return slurp(log_path()); }

  uint64_t free_bytes() const {
    struct statvfs s {};
    if (::statvfs(mnt_.c_str(), &s) != 0) return 0;
    return uint64_t(s.f_bavail) * s.f_frsize;
  }

  // The bomb's output stops short of the disk's last 5%, which its supervisor keeps for the
  // node; the rest is filled here, as another program on the machine would fill it.
  void fill_the_rest() {
    struct statvfs s {};
    ASSERT_EQ(::statvfs(mnt_.c_str(), &s), 0);
    const uint64_t reserve = uint64_t(s.f_blocks) * s.f_frsize / 100 * 5;
    ASSERT_TRUE(eventually([&] { return free_bytes() < reserve + (64u << 10); }, 30s))
        << free_bytes();
    EXPECT_GE(free_bytes(), reserve - 2 * s.f_frsize) << "the log ate into the reserve";
    std::ofstream filler(mnt_ + "/filler");
    const std::string chunk(4096, 'f');
    while (filler.write(chunk.data(), chunk.size()) && filler.flush()) {
    }
    ASSERT_EQ(free_bytes(), 0u);
  }

  // The one pod directory (the bomb's: simulated pods have none).
  fs::path bomb_dir() const {
    for (const auto& e : fs::directory_iterator(data_ + "/pods")) return e.path();
    return {};
  }

  TempDir dir_;
  std::string mnt_, data_, port_file_, server_;
  pid_t pid_ = -1;
};

void expect_clean_exit(int status, const std::string& log) {
  ASSERT_NE(status, -1) << "calderad did not stop on SIGTERM\n" << log;
  EXPECT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status) << "\n" << log;
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0) << log;
  EXPECT_EQ(log.find("Assertion"), std::string::npos) << log;
}

// Rotation keeps the flood within 3 x 1 MiB: the disk never fills and the node goes on.
TEST_F(DiskFull, ALogBombIsRotatedAndTheNodeKeepsWorking) {
  start({"--container-log-max-size", "1Mi", "--container-log-max-files", "3"});
  ASSERT_EQ(submit(bomb_yaml()).exit_code, 0);
  auto done = cli({"wait", "job", "bomb", "--for=phase=Completed", "--timeout=60s"});
  ASSERT_EQ(done.exit_code, 0) << done.err << log();

  auto dir = bomb_dir();
  for (const char* name : {"main.log", "main.log.1", "main.log.2"}) {
    ASSERT_TRUE(fs::exists(dir / name)) << name;
    EXPECT_LE(fs::file_size(dir / name), 1u << 20) << name;
  }
  EXPECT_FALSE(fs::exists(dir / "main.log.3"));
  // `caldera logs` shows the newest file, as kubectl does: it ends with the last line.
  auto logs = cli({"logs", "bomb-main-0"});
  ASSERT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_LE(logs.out.size(), 1u << 20);
  EXPECT_EQ(logs.out.substr(logs.out.size() - 6), "\ndone\n");
  EXPECT_GT(free_bytes(), 8u << 20);

  ASSERT_EQ(submit(sim_yaml("sim")).exit_code, 0);
  auto sim = cli({"wait", "job", "sim", "--for=phase=Completed", "--timeout=30s"});
  EXPECT_EQ(sim.exit_code, 0) << sim.err << log();
  expect_clean_exit(terminate(), log());
}

// With the default 10Mi x 5 the flood fills this disk. Writes fail and new jobs are refused; once
// an operator frees space the node takes and finishes jobs again without a restart, the bomb's
// end is recorded, and SIGTERM still exits 0.
TEST_F(DiskFull, TheNodeResumesOnceSpaceIsFreedAndStopsCleanly) {
  start();
  const std::string ended = dir_.path() + "/bomb-ended";
  ASSERT_EQ(submit(bomb_yaml(ended)).exit_code, 0);
  ASSERT_NO_FATAL_FAILURE(fill_the_rest());
  auto dir = bomb_dir();
  ASSERT_TRUE(eventually([&] { return fs::exists(dir / "main.log.1"); }, 30s));

  // A record bigger than any page left: its write fails and stops RocksDB's writes.
  auto big = submit(sim_yaml("big", std::string(64 << 10, 'p')));
  EXPECT_NE(big.exit_code, 0);
  EXPECT_NE(big.err.find("No space left on device"), std::string::npos) << big.err;
  // From then on every write is refused at once, whatever its size, with the reason.
  auto refused = submit(sim_yaml("sim"));
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("not writable"), std::string::npos) << refused.err;

  // Other objects' deletes write before they free anything: they wait for space.
  auto del = cli({"delete", "queue", "nothing-here"});
  EXPECT_NE(del.exit_code, 0);
  EXPECT_NE(del.err.find("not writable"), std::string::npos) << del.err;

  // A bomb still writing would take the freed space back (a slow machine, CI).
  ASSERT_TRUE(eventually([&] { return fs::exists(ended); }, 30s));
  fs::remove(dir / "main.log.1");  // the operator frees 10 MiB
  CommandResult accepted;
  ASSERT_TRUE(eventually([&] { return (accepted = submit(sim_yaml("sim"))).exit_code == 0; }, 20s))
      << accepted.err << "\nfree bytes: " << free_bytes() << "\n"
      << log();
  auto sim = cli({"wait", "job", "sim", "--for=phase=Completed", "--timeout=30s"});
  EXPECT_EQ(sim.exit_code, 0) << sim.err << log();
  EXPECT_NE(log().find("store: writable again"), std::string::npos) << log();
  // The bomb's end, not recorded while the disk was full, is recorded and reported now.
  EXPECT_TRUE(eventually(
      [&] {
        auto p = phase("bomb");
        return p == "Completed" || p == "Failed";
      },
      20s))
      << phase("bomb");

  auto again = cli({"delete", "job", "bomb"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(eventually([&] { return !fs::exists(dir); }, 10s));
  expect_clean_exit(terminate(), log());
}

// Deleting is what frees space: on a full disk `delete job` has the job's pods leave at once,
// logs and all (the bomb still running is stopped first), the store writes again, and the delete
// is recorded; the node then takes new work.
TEST_F(DiskFull, ADeleteOnAFullDiskFreesTheJobsLogsAndGoesThrough) {
  start();
  ASSERT_EQ(submit(bomb_yaml()).exit_code, 0);
  ASSERT_NO_FATAL_FAILURE(fill_the_rest());
  auto dir = bomb_dir();
  EXPECT_NE(submit(sim_yaml("big", std::string(64 << 10, 'p'))).exit_code, 0);
  auto refused = submit(sim_yaml("sim"));
  ASSERT_NE(refused.exit_code, 0);
  ASSERT_NE(refused.err.find("not writable"), std::string::npos) << refused.err;

  auto del = cli({"delete", "job", "bomb"});
  EXPECT_EQ(del.exit_code, 0) << del.err << log();
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_NE(cli({"get", "job", "bomb"}).exit_code, 0);
  EXPECT_NE(log().find("job=default/bomb delete: the data dir is not writable"), std::string::npos)
      << log();
  ASSERT_EQ(submit(sim_yaml("sim")).exit_code, 0) << log();
  auto sim = cli({"wait", "job", "sim", "--for=phase=Completed", "--timeout=30s"});
  EXPECT_EQ(sim.exit_code, 0) << sim.err << log();
  expect_clean_exit(terminate(), log());
}

// A job whose own change cannot be written (its deadline passes while the disk is full) keeps
// that change and writes it again until it is durable; then its effects follow, in order.
TEST_F(DiskFull, AJobChangeThatCannotBeWrittenIsWrittenOnceSpaceIsFreed) {
  start();
  ASSERT_EQ(submit(R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: late}
spec:
  activeDeadlineSeconds: 6
  tasks:
    - name: w
      replicas: 1
      template:
        metadata: {annotations: {caldera.io/sim-duration-ms: "600000"}}
        spec: {containers: [{name: main, command: [simulated]}]}
)")
                .exit_code,
            0);
  const std::string ended = dir_.path() + "/bomb-ended";
  ASSERT_EQ(submit(bomb_yaml(ended)).exit_code, 0);
  ASSERT_NO_FATAL_FAILURE(fill_the_rest());
  EXPECT_NE(submit(sim_yaml("big", std::string(64 << 10, 'p'))).exit_code, 0);
  ASSERT_EQ(phase("late"), "Running") << "the deadline passed before the disk was full";
  ASSERT_TRUE(eventually(
      [&] {
        return log().find("job=default/late write failed, writing it again") != std::string::npos;
      },
      20s))
      << log();
  EXPECT_EQ(phase("late"), "Running");  // not durable, so not shown
  // The operator is told why the store cannot resume yet, once for its many attempts.
  EXPECT_TRUE(eventually([&] {
    return log().find("store: resume failed, retried every") != std::string::npos;
  })) << log();

  ASSERT_TRUE(eventually([&] { return fs::exists(ended); }, 30s));
  fs::remove(bomb_dir() / "main.log.1");
  EXPECT_TRUE(eventually([&] { return phase("late") == "Terminated"; }, 20s))
      << phase("late") << log();
  auto text = log();
  size_t told = 0;
  for (auto at = text.find("store: resume failed"); at != std::string::npos;
       at = text.find("store: resume failed", at + 1))
    ++told;
  EXPECT_EQ(told, 1u) << text;
  expect_clean_exit(terminate(), log());
}

// The bug report's ending: SIGTERM while the disk is still full used to abort in RocksDB
// (`sync_without_flush_called_`, exit 134).
TEST_F(DiskFull, StopsCleanlyWhileTheDiskIsStillFull) {
  start();
  ASSERT_EQ(submit(bomb_yaml()).exit_code, 0);
  ASSERT_NO_FATAL_FAILURE(fill_the_rest());
  auto big = submit(sim_yaml("big", std::string(64 << 10, 'p')));
  EXPECT_NE(big.exit_code, 0);
  ASSERT_TRUE(eventually([&] { return log().find("store: ") != std::string::npos; })) << log();
  expect_clean_exit(terminate(), log());
}

}  // namespace
}  // namespace caldera::testing
