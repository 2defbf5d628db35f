// Chaos driver: starts a cluster of real calderad processes (node-1 the coordinator), submits a
// seeded stream of gang jobs (simulated pods and real processes, with and without
// PodEvicted -> RestartJob, some with a two-task dependsOn) while a seeded schedule of faults hits
// the nodes, one at a time: kill -9 and restart of a worker (kill-worker), SIGSTOP/SIGCONT of a
// worker longer and shorter than the heartbeat timeout (stop-long, stop-short), a worker cut off
// from the coordinator for about 12 s by iptables DROP rules (partition-worker), kill -9 and
// restart of the coordinator (kill-coordinator), SIGSTOP of the coordinator for 4 s
// (pause-coordinator), and the coordinator's data dir wiped (wipe-coordinator), as an operator
// would live it: the submissions held (a backup cannot hold a job acknowledged after it),
// `caldera admin backup` into the work dir, kill -9, the data dir emptied (its calderad.log
// excepted), a restart as before, which must halt (`get jobs` refused, at it and at the workers,
// with an error that names the lost store and --restore-from), 5 s of halt (past the lease), the
// halted one killed, its new empty store moved aside, a restart with --restore-from the backup,
// and the submissions resumed once it answers `get jobs`. The driver waits for every job to end,
// then checks the invariants and prints figures. Its last line is
// `chaos: F faults, J jobs, V violations`; it exits 1 when V > 0.
//
// The invariants: every acknowledged job exists and ended as its policies allow, with no more
// restarts than faults that may evict its pods (a coordinator's kill, pause or wipe explains none);
// every gang whole or not running, dependencies respected; no node over-committed; no pod alive
// twice at once, on two nodes or on one (the OVERLAP marks below, and the runs' intervals); no pod
// that ended Succeeded started again, unless its job was restarted by PodEvicted -> RestartJob
// after such a fault; a worker gone for longer than its lease had its pods ended within the lease
// (+1 s of stop, +1 s of slack) and started none meanwhile; a coordinator's pause (shorter than the
// lease) stopped no worker's pod; a coordinator halted on its wiped data dir stopped no worker's
// pod (pods that finish are fine) from its restart until 3 s after the restore, and started none
// during the halt; a real pod whose run ended ok is not reported Failed, unless a worker fault
// that may evict pods hit its node then; nothing left allocated once every job ended. After a
// wipe the restore must lose nothing: the invariants above hold across it, with no excuse for it.
// The figures: detection, and the worker-loss recovery, per worker kill, long stop or partition:
// from the fault to the first job that had a pod on the worker Running again (at a new version,
// or at all once every node is Ready again), its median over the faults and their count; per
// coordinator kill, pause or wipe (its halt and restore included), from the fault to each job that
// was running then Running again.
//
// The partition: each node is started in its own cgroup (v2) under this process's; a rule of this
// run's iptables chain (CALDERA-CHAOS-<pid>, jumped to from OUTPUT) marks, with conntrack, every
// connection a worker's processes open to the coordinator's cluster port, and the cut is one DROP
// rule of that mark, both directions. Addresses cannot tell the workers apart: on loopback a
// connection to any 127.x address leaves from 127.0.0.1 (the nodes do not bind their outgoing
// sockets). The chain and the cgroups go at the end, on an interrupt, and in scripts/chaos.sh's
// trap, which also kills the nodes left in the cgroups of a driver killed -9. Without iptables,
// its cgroup match or a writable cgroup v2 tree (not root), the kind is skipped with one line
// saying why.
//
// Real pods append `START <pod> <uid> <node> <epoch ns> <pid>` and `END <pod> <uid> <node>
// <epoch ns> ok|term` to one file: the uid and the node come from VC_POD_DIR (<node's
// dataDir>/pods/<uid>), the pid is the pod's shell. Right after its START a pod looks for every
// other run of its pod name whose process is still alive (its pid, with that run's VC_POD_DIR in
// /proc/PID/environ, not a zombie) and appends `OVERLAP <pod> <uid> <node> <epoch ns> <other uid>
// <other node> <other pid>` for each: of two runs that overlap, the later one sees the earlier,
// exactly, whether or not that one ever writes END (a SIGKILL, a node cut off). A thread also
// polls /proc for the recorded pids every 100 ms, which gives a run without END its end (to
// 100 ms). A pod's job version (its attempt) comes from `get pods -o json`, polled about once a
// second.
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "harness.hpp"

namespace caldera::chaos {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::Calderad;
using testing::CommandResult;
using namespace std::chrono_literals;

constexpr int64_t kMs = 1'000'000;  // ns
constexpr int64_t kSec = 1'000 * kMs;
constexpr int kNodeCpuMilli = 2000;
constexpr int64_t kHeartbeatTimeoutMs = 2000;
// The worker's lease (the default, written into the config): its pods are stopped (SIGTERM,
// SIGKILL at most 1 s later) this long after the last heartbeat the coordinator answered.
constexpr int64_t kLeaseTimeoutMs = 5000;
constexpr int kMaxRetry = 40;

std::atomic<bool> g_abort{false};

// The first interrupt ends the run, promptly, and everything is cleaned up at its end. A second
// one, a second or more later, exits at once, after killing the nodes (their pods end by
// themselves: a worker's at the end of its lease, the others at the end of their sleep) and running
// the commands that remove this run's iptables chain, made beforehand: a signal handler allocates
// nothing.
constexpr int kMaxNodes = 9;
std::atomic<pid_t> g_node_pids[kMaxNodes];
constexpr int kMaxEmergency = 4;
char* const* g_emergency[kMaxEmergency];
std::atomic<int> g_emergency_n{0};

std::atomic<int64_t> g_first_signal_ms{0};

int64_t monotonic_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

void on_signal(int) {
  if (!g_abort.exchange(true)) {
    g_first_signal_ms = monotonic_ms();
    return;
  }
  // The same interrupt may come twice (the terminal's, and scripts/chaos.sh passing one on).
  if (monotonic_ms() - g_first_signal_ms.load() < 1000) return;
  static const char note[] = "chaos: interrupted again: nodes killed, work dir left\n";
  for (auto& pid : g_node_pids)
    if (pid_t p = pid.load(); p > 0) ::kill(p, SIGKILL);
  for (int i = 0; i < g_emergency_n.load(); ++i) {
    pid_t pid = vfork();
    if (pid == 0) {
      execv(g_emergency[i][0], g_emergency[i]);
      _exit(127);
    }
    if (pid > 0) waitpid(pid, nullptr, 0);
  }
  if (::write(2, note, sizeof note - 1) < 0) _exit(130);
  _exit(130);
}

void on_sigpipe(int) {
  g_abort = true;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t t0_ns = 0;  // the run's start: times are printed relative to it
double rel_s(int64_t ns) {
  return static_cast<double>(ns - t0_ns) / 1e9;
}

std::mutex g_out_mu;
__attribute__((format(printf, 1, 2))) void say(const char* fmt, ...) {
  std::lock_guard lock(g_out_mu);
  std::printf("[%7.2fs] ", rel_s(now_ns()));
  va_list args;
  va_start(args, fmt);
  std::vprintf(fmt, args);
  va_end(args);
  std::printf("\n");
  std::fflush(stdout);
}

// Sleeps in small steps so that an interrupt ends the run promptly.
void nap(std::chrono::milliseconds d) {
  auto until = std::chrono::steady_clock::now() + d;
  while (!g_abort && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(
        std::min<std::chrono::nanoseconds>(50ms, until - std::chrono::steady_clock::now()));
}

// Polls `fn` until it holds, the timeout passes or the run is interrupted.
bool wait_for(const std::function<bool()>& fn, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!g_abort) {
    if (fn()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

void nap_until_ns(int64_t ns) {
  int64_t left = ns - now_ns();
  if (left > 0) nap(std::chrono::milliseconds(left / kMs + 1));
}

// Kills every process whose command line names a path under `dir` (the nodes, shims and pods of
// this run), this process and its ancestors excepted (`--work-dir DIR` is on their command line).
void kill_processes_under(const std::string& dir) {
  std::set<pid_t> spare;
  for (pid_t p = getpid(); p > 1;) {
    spare.insert(p);
    std::ifstream stat("/proc/" + std::to_string(p) + "/stat");
    std::string line;
    std::getline(stat, line);
    auto close = line.rfind(')');
    if (close == std::string::npos) break;
    std::istringstream rest(line.substr(close + 2));
    char state = 0;
    pid_t parent = 0;
    rest >> state >> parent;
    p = parent;
  }
  const std::string needle = dir + "/";
  for (const auto& entry : fs::directory_iterator("/proc")) {
    auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    pid_t pid = std::stoi(name);
    if (spare.count(pid)) continue;
    // Through rdbuf: a process gone mid-read is a failed stream, not an exception (ESRCH).
    std::ifstream in(entry.path() / "cmdline");
    std::stringstream read;
    read << in.rdbuf();
    const std::string cmdline = read.str();
    if (cmdline.find(needle) != std::string::npos) ::kill(pid, SIGKILL);
  }
}

std::string node_name_of(int index) {
  return "node-" + std::to_string(index + 1);
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

std::string figures(const std::vector<double>& ms) {
  if (ms.empty()) return "n=0";
  char buf[128];
  std::snprintf(buf, sizeof buf, "n=%zu median=%.0f ms p99=%.0f ms max=%.0f ms", ms.size(),
                percentile(ms, 0.5), percentile(ms, 0.99), percentile(ms, 1.0));
  return buf;
}

// "2" -> 2000, "500m" -> 500, "1.5" -> 1500 (cpu in millicores).
int64_t cpu_milli(const std::string& q) {
  if (q.empty()) return 0;
  if (q.back() == 'm') return std::stoll(q.substr(0, q.size() - 1));
  return static_cast<int64_t>(std::llround(std::stod(q) * 1000));
}

// ---- the plan: jobs and faults, all from the seed ----

enum class JobKind { RealGang, SimGang, RealDeps };
const char* to_string(JobKind k) {
  switch (k) {
    case JobKind::RealGang:
      return "real";
    case JobKind::SimGang:
      return "sim";
    case JobKind::RealDeps:
      return "deps";
  }
  return "?";
}

struct TaskPlan {
  std::string name;
  int replicas = 0;
  int cpu_milli = 1000;
  int duration_ms = 0;
  bool depends = false;  // dependsOn the job's first task
};

struct JobPlan {
  std::string name;
  JobKind kind = JobKind::RealGang;
  bool restart = false;  // PodEvicted -> RestartJob
  int min_available = 0;
  std::vector<TaskPlan> tasks;
  int64_t at_ns = 0;  // offset from the start when it is submitted
  std::string yaml;   // JSON, which is YAML
};

enum class FaultKind {
  KillWorker,
  StopLong,
  StopShort,
  PartitionWorker,
  KillCoordinator,
  PauseCoordinator,
  WipeCoordinator
};
constexpr FaultKind kAllFaultKinds[] = {FaultKind::KillWorker,      FaultKind::StopLong,
                                        FaultKind::StopShort,       FaultKind::PartitionWorker,
                                        FaultKind::KillCoordinator, FaultKind::PauseCoordinator,
                                        FaultKind::WipeCoordinator};
const char* to_string(FaultKind k) {
  switch (k) {
    case FaultKind::KillWorker:
      return "kill-worker";
    case FaultKind::StopLong:
      return "stop-long";
    case FaultKind::StopShort:
      return "stop-short";
    case FaultKind::PartitionWorker:
      return "partition-worker";
    case FaultKind::KillCoordinator:
      return "kill-coordinator";
    case FaultKind::PauseCoordinator:
      return "pause-coordinator";
    case FaultKind::WipeCoordinator:
      return "wipe-coordinator";
  }
  return "?";
}

bool coordinator_fault(FaultKind k) {
  return k == FaultKind::KillCoordinator || k == FaultKind::PauseCoordinator ||
         k == FaultKind::WipeCoordinator;
}

// The worker faults that may cost a worker its pods: it is gone (killed, stopped, cut off) for
// seconds. A short stop is one too when the node was seen NotReady (Fault::node_down_fault).
bool worker_loss(FaultKind k) {
  return k == FaultKind::KillWorker || k == FaultKind::StopLong || k == FaultKind::PartitionWorker;
}

struct Fault {
  FaultKind kind = FaultKind::KillWorker;
  int node = 0;           // index into the nodes
  int64_t gap_ms = 0;     // after the cluster is whole again
  int64_t down_ms = 0;    // planned time down (killed) or stopped
  int64_t inject_ns = 0;  // filled in as it runs
  int64_t restore_ns = 0;
  int64_t ready_ns = 0;  // every node Ready again
  int64_t detect_ns = 0;
  bool detected = false;  // the node (any node, for a coordinator's pause) was seen NotReady
  bool injected = false;
  // Jobs expected to run again: name -> version when the fault hit. A worker fault's are the jobs
  // with a live pod on the worker; a coordinator fault's, the running jobs.
  std::map<std::string, int64_t> affected;
  std::vector<double> recovery_ms;     // per affected job, from the injection
  std::vector<std::string> recovered;  // those jobs, in the same order
  std::vector<std::string> ended;      // affected jobs that ended instead of running again
  // wipe-coordinator: the backup it is restored from; when the coordinator restarted on its wiped
  // data dir answered (its halt began), when `get jobs` was first refused as halted, and when the
  // coordinator restored from the backup answered `get jobs`.
  std::string backup;
  int64_t wiped_up_ns = 0, halted_ns = 0, restored_ns = 0;
  // The window in which the fault may have disturbed the cluster.
  int64_t window_end() const { return (ready_ns ? ready_ns : restore_ns) + 1 * kSec; }
  bool node_down_fault() const { return worker_loss(kind) || detected; }
};

// START (with the shell's pid), then OVERLAP for every other run of the same pod name whose
// process is alive: its pid, still with that run's VC_POD_DIR (not a reused pid), not a zombie.
// Then the sleep, and END.
std::string pod_script(const std::string& file, int duration_ms) {
  char sleep_s[32];
  std::snprintf(sleep_s, sizeof sleep_s, "%d.%03d", duration_ms / 1000, duration_ms % 1000);
  return "F='" + file +
         "'; d=\"$VC_POD_DIR\"; u=\"${d##*/}\"; n=\"${d%/pods/*}\"; n=\"${n##*/}\"; "
         "echo \"START $HOSTNAME $u $n $(date +%s%N) $$\" >> \"$F\"; "
         "trap 'echo \"END $HOSTNAME $u $n $(date +%s%N) term\" >> \"$F\"; exit 143' TERM; "
         "awk -v h=\"$HOSTNAME\" -v u=\"$u\" -v me=$$ "
         "'$1 == \"START\" && $2 == h && !($3 == u && $6 == me) {print $6, $3, $4}' \"$F\" | "
         "while read p ou on; do "
         "[ \"$p\" != $$ ] && tr '\\000' '\\n' 2>/dev/null < /proc/$p/environ | "
         "grep -q \"^VC_POD_DIR=.*/pods/$ou\\$\" && ! grep -q ') Z ' /proc/$p/stat 2>/dev/null && "
         "echo \"OVERLAP $HOSTNAME $u $n $(date +%s%N) $ou $on $p\" >> \"$F\"; "
         "done; "
         "sleep " +
         sleep_s + " & wait $!; echo \"END $HOSTNAME $u $n $(date +%s%N) ok\" >> \"$F\"";
}

std::string job_yaml(const JobPlan& p, const std::string& file) {
  json spec{{"minAvailable", p.min_available}, {"tasks", json::array()}};
  if (p.restart) {
    spec["policies"] = json::array({{{"event", "PodEvicted"}, {"action", "RestartJob"}}});
    spec["maxRetry"] = kMaxRetry;
  }
  for (const auto& t : p.tasks) {
    json container{{"name", "main"},
                   {"resources", {{"requests", {{"cpu", std::to_string(t.cpu_milli) + "m"}}}}}};
    json tmpl{{"spec", {{"containers", json::array()}}}};
    if (p.kind == JobKind::SimGang) {
      container["command"] = json::array({"simulated"});
      tmpl["metadata"] = {
          {"annotations", {{"caldera.io/sim-duration-ms", std::to_string(t.duration_ms)}}}};
    } else {
      container["command"] = json::array({"sh", "-c", pod_script(file, t.duration_ms)});
    }
    tmpl["spec"]["containers"].push_back(container);
    json task{{"name", t.name}, {"replicas", t.replicas}, {"template", tmpl}};
    if (t.depends) task["dependsOn"] = {{"name", json::array({p.tasks.front().name})}};
    spec["tasks"].push_back(task);
  }
  json job{{"apiVersion", "batch.volcano.sh/v1alpha1"},
           {"kind", "Job"},
           {"metadata", {{"name", p.name}}},
           {"spec", spec}};
  return job.dump() + "\n";
}

struct Plan {
  std::vector<JobPlan> jobs;
  std::vector<Fault> faults;
};

Plan make_plan(uint64_t seed, int64_t run_ms, int nodes, const std::string& file,
               const std::set<FaultKind>& allowed) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  Plan plan;
  // Jobs: one every 2-5 s on three nodes (scaled by the cluster's size), for the whole run.
  const int max_gang = std::min(5, 2 * nodes - 1);
  int64_t at = 1500;
  for (int i = 0; at < run_ms; ++i) {
    JobPlan j;
    int pick = uniform(0, 99);
    j.kind = pick < 40 ? JobKind::RealGang : pick < 75 ? JobKind::SimGang : JobKind::RealDeps;
    j.restart = chance(0.7);
    char name[48];
    std::snprintf(name, sizeof name, "j%03d-%s%s", i, to_string(j.kind), j.restart ? "-rs" : "");
    j.name = name;
    if (j.kind == JobKind::RealDeps) {
      int cpu = chance(0.5) ? 500 : 1000;
      j.tasks.push_back({"a", 2, cpu, uniform(2000, 4000), false});
      j.tasks.push_back({"b", 2, cpu, uniform(1500, 3000), true});
      j.min_available = 2;
    } else {
      TaskPlan t{"w", uniform(3, max_gang), chance(0.75) ? 1000 : 500, 0, false};
      // A few real gangs run long, to be still running when their node comes back from a fault.
      t.duration_ms = j.kind == JobKind::SimGang ? uniform(1000, 4000)
                      : chance(0.25)             ? uniform(8000, 14000)
                                                 : uniform(2000, 5000);
      j.tasks.push_back(t);
      j.min_available = t.replicas;
    }
    j.at_ns = at * kMs;
    j.yaml = job_yaml(j, file);
    plan.jobs.push_back(std::move(j));
    at += static_cast<int64_t>(uniform(2000, 5000)) * 3 / std::max(nodes, 1);
  }
  // Faults: every kind once first (in a seeded order), then any; each after the cluster is whole
  // again and a pause. The wipes draw from a stream of their own, so that a seed gives the other
  // kinds the schedule it gave before wipe-coordinator existed, the wipes inserted: once in the
  // first round, then before one fault in 20.
  static_assert(std::end(kAllFaultKinds)[-1] == FaultKind::WipeCoordinator);
  std::mt19937_64 wipe_rng(seed ^ 0x77697065u);
  auto wipe_uniform = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(wipe_rng);
  };
  std::vector<FaultKind> first(std::begin(kAllFaultKinds), std::end(kAllFaultKinds) - 1);
  std::shuffle(first.begin(), first.end(), rng);
  const size_t wipe_at = static_cast<size_t>(wipe_uniform(0, static_cast<int>(first.size())));
  for (size_t i = 0; i < 200; ++i) {
    if (i == wipe_at || (i > first.size() && wipe_uniform(0, 99) < 5)) {
      Fault w;
      w.kind = FaultKind::WipeCoordinator;
      w.node = 0;
      w.gap_ms = wipe_uniform(2000, 6000);
      w.down_ms = 5000;  // the halt, past the lease: the halted coordinator renews them
      if (allowed.count(w.kind)) plan.faults.push_back(w);
    }
    Fault f;
    if (i < first.size()) {
      f.kind = first[i];
    } else {
      int pick = uniform(0, 99);
      f.kind = pick < 25   ? FaultKind::KillWorker
               : pick < 42 ? FaultKind::StopLong
               : pick < 57 ? FaultKind::StopShort
               : pick < 75 ? FaultKind::PartitionWorker
               : pick < 88 ? FaultKind::KillCoordinator
                           : FaultKind::PauseCoordinator;
    }
    f.node = coordinator_fault(f.kind) ? 0 : uniform(1, nodes - 1);
    f.gap_ms = uniform(2000, 6000);
    switch (f.kind) {
      case FaultKind::KillWorker:
        f.down_ms = uniform(1000, 5000);
        break;
      case FaultKind::StopLong:
        f.down_ms = uniform(3000, 5000);
        break;
      case FaultKind::StopShort:
        f.down_ms = uniform(300, 1000);
        break;
      case FaultKind::PartitionWorker:  // longer than the lease and its margins (6.3 s)
        f.down_ms = uniform(11000, 13000);
        break;
      case FaultKind::KillCoordinator:
        f.down_ms = uniform(500, 3000);
        break;
      case FaultKind::PauseCoordinator:  // less than the lease: it should cost nothing
        f.down_ms = 4000;
        break;
      case FaultKind::WipeCoordinator:  // inserted above, never drawn here
        break;
    }
    if (allowed.count(f.kind)) plan.faults.push_back(f);
  }
  return plan;
}

// ---- partition-worker: a cgroup per worker, iptables rules of its connections ----

std::string first_line(const std::string& text) {
  auto start = text.find_first_not_of(" \n");
  if (start == std::string::npos) return "";
  return text.substr(start, text.find('\n', start) - start);
}

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream read;
  read << in.rdbuf();
  return read.str();
}

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

bool pid_alive(pid_t pid) {
  return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM);
}

// A worker cut off from the coordinator: every packet of a connection that the worker's processes
// opened to the coordinator's cluster port is dropped, both ways, while the coordinator and the
// other workers go on. Each worker is born in its own cgroup (this process moves into it for the
// fork); a rule marks, in conntrack, each connection whose packets leave a socket of that cgroup
// for the cluster port; the cut is a DROP of that mark (the coordinator's answers match it too).
// All in this run's chain, CALDERA-CHAOS-<pid>, jumped to from OUTPUT: on loopback every packet
// passes OUTPUT once.
class Partitioner {
 public:
  ~Partitioner() { teardown(); }

  // Checks that it can be done and prepares it: "" when it can, else why not.
  std::string setup(int nodes) {
    nodes_ = nodes;
    chain_ = "CALDERA-CHAOS-" + std::to_string(::getpid());
    auto probe = testing::run({"iptables", "-w", "-S", "OUTPUT"});
    if (probe.exit_code == 127) return "iptables is not installed";
    if (probe.exit_code != 0) return "iptables -S failed: " + first_line(probe.err);
    iptables_path_ = find_iptables();
    sweep_stale(probe.out);
    // The cgroup v2 tree and this process's place in it.
    std::string mount;
    if (auto info = read_text("/proc/self/mountinfo")) {
      std::istringstream in(*info);
      for (std::string line; std::getline(in, line);) {
        auto dash = line.find(" - cgroup2 ");
        if (dash == std::string::npos) continue;
        std::istringstream fields(line.substr(0, dash));
        std::string id, parent, dev, root, point;
        fields >> id >> parent >> dev >> root >> point;
        if (root == "/") {
          mount = point;
          break;
        }
      }
    }
    if (mount.empty()) return "no cgroup v2 tree is mounted";
    std::string self;
    if (auto text = read_text("/proc/self/cgroup")) {
      std::istringstream in(*text);
      for (std::string line; std::getline(in, line);)
        if (line.rfind("0::", 0) == 0) self = line.substr(3);
    }
    if (self.empty() || self[0] != '/') return "this process has no cgroup v2 path";
    if (self == "/") self.clear();
    home_ = mount + self;
    sweep_stale_cgroups();
    const std::string run_name = "caldera-chaos-" + std::to_string(::getpid());
    run_dir_ = home_ + "/" + run_name;
    std::error_code ec;
    fs::create_directory(run_dir_, ec);
    if (ec) return "cannot make the cgroup " + run_dir_ + ": " + ec.message();
    for (int i = 0; i < nodes; ++i) {
      fs::create_directory(node_dir(i), ec);
      if (ec) return "cannot make the cgroup " + node_dir(i) + ": " + ec.message();
    }
    rel_ = (self.empty() ? "" : self.substr(1) + "/") + run_name;
    // The chain, and a rule of the kind it will hold, to know that the cgroup match works.
    if (auto e = iptables({"-N", chain_}); !e.empty()) return e;
    chain_made_ = true;
    if (auto e = iptables({"-I", "OUTPUT", "-j", chain_}); !e.empty()) return e;
    publish_emergency();
    auto probe_rule = [&](const std::string& op) {
      return std::vector<std::string>{op,           chain_,
                                      "-p",         "tcp",
                                      "--dport",    "1",
                                      "-m",         "cgroup",
                                      "--path",     rel_ + "/node-1",
                                      "-j",         "CONNMARK",
                                      "--set-mark", std::to_string(mark(0))};
    };
    if (auto e = iptables(probe_rule("-A")); !e.empty()) return e;
    if (auto e = iptables(probe_rule("-D")); !e.empty()) return e;
    // A move of this process into a cgroup and back.
    if (!enter(0) || !leave()) return "cannot move this process between cgroups under " + home_;
    ready_ = true;
    return "";
  }

  bool ready() const { return ready_; }

  // Marks the connections of the workers (1 .. nodes-1) to the coordinator's cluster port.
  std::string arm(const std::string& host, int port) {
    for (int i = 1; i < nodes_; ++i) {
      auto e = iptables({"-A", chain_, "-p", "tcp", "-d", host, "--dport", std::to_string(port),
                         "-m", "cgroup", "--path", rel_ + "/node-" + std::to_string(i + 1), "-j",
                         "CONNMARK", "--set-mark", std::to_string(mark(i))});
      if (!e.empty()) {
        ready_ = false;
        return e;
      }
    }
    port_ = port;
    return "";
  }

  // Runs `start`, which forks node i, with this process in the node's cgroup: the node and all it
  // starts are born there. The coordinator too, though no rule names its cgroup: so a driver
  // killed -9 leaves every node of its run where scripts/chaos.sh's trap finds and kills it.
  void start_in(int i, const std::function<void()>& start) {
    if (!ready_) return start();
    std::lock_guard lock(move_mu_);
    if (!enter(i)) say("partition: could not move into %s's cgroup", node_dir(i).c_str());
    try {
      start();
    } catch (...) {
      leave();
      throw;
    }
    leave();
  }

  // Whether each worker's connection to the coordinator is marked: conntrack holds an established
  // connection to the cluster port with its mark (heartbeats every 500 ms mark it). "" when so,
  // or when conntrack cannot be read.
  std::string check_marks(std::chrono::milliseconds within) {
    std::string missing;
    bool ok = wait_for(
        [&] {
          auto table = read_text("/proc/net/nf_conntrack");
          if (!table) return true;
          missing.clear();
          for (int i = 1; i < nodes_; ++i) {
            const std::string dport = " dport=" + std::to_string(port_) + " ";
            const std::string m = " mark=" + std::to_string(mark(i)) + " ";
            bool found = false;
            std::istringstream in(*table);
            for (std::string line; std::getline(in, line) && !found;) {
              line += " ";
              auto d = line.find(dport);
              found = line.find(" ESTABLISHED ") != std::string::npos && d != std::string::npos &&
                      line.find(" src=", d) != std::string::npos &&  // the original direction's
                      line.find(m) != std::string::npos;
            }
            if (!found) missing += " node-" + std::to_string(i + 1);
          }
          return missing.empty();
        },
        within);
    return ok ? "" : "no marked connection to the coordinator from" + missing;
  }

  std::string cut(int i) {
    return iptables(
        {"-A", chain_, "-m", "connmark", "--mark", std::to_string(mark(i)), "-j", "DROP"});
  }

  std::string heal(int i) {
    return iptables(
        {"-D", chain_, "-m", "connmark", "--mark", std::to_string(mark(i)), "-j", "DROP"});
  }

  // The chain and the cgroups go (the cgroups once the processes in them are gone: call it after
  // they were killed). Idempotent.
  void teardown() {
    if (chain_made_) {
      g_emergency_n = 0;
      for (int k = 0; k < 10 && iptables({"-D", "OUTPUT", "-j", chain_}).empty(); ++k) {
      }
      iptables({"-F", chain_});
      if (auto e = iptables({"-X", chain_}); !e.empty())
        std::fprintf(stderr, "chaos: could not remove the iptables chain %s: %s\n", chain_.c_str(),
                     e.c_str());
      chain_made_ = false;
    }
    ready_ = false;
    if (run_dir_.empty()) return;
    for (int i = 0; i < nodes_; ++i) {
      auto procs = node_dir(i) + "/cgroup.procs";
      wait_until_empty(procs);
      if (::rmdir(node_dir(i).c_str()) != 0 && errno != ENOENT)
        std::fprintf(stderr, "chaos: could not remove the cgroup %s: %s\n", node_dir(i).c_str(),
                     std::strerror(errno));
    }
    ::rmdir(run_dir_.c_str());
    run_dir_.clear();
  }

 private:
  // A mark of this run's own: another run's rules never match its connections.
  uint32_t mark(int i) const {
    return ((static_cast<uint32_t>(::getpid()) & 0xffffffu) << 4) | static_cast<uint32_t>(i);
  }

  std::string node_dir(int i) const { return run_dir_ + "/node-" + std::to_string(i + 1); }

  static void wait_until_empty(const std::string& procs) {
    for (int k = 0; k < 50; ++k) {
      auto text = read_text(procs);
      if (!text || text->empty()) return;
      std::this_thread::sleep_for(100ms);
    }
  }

  bool enter(int i) { return write_text(node_dir(i) + "/cgroup.procs", std::to_string(getpid())); }
  bool leave() { return write_text(home_ + "/cgroup.procs", std::to_string(getpid())); }

  std::string iptables(std::vector<std::string> args) {
    args.insert(args.begin(), {"iptables", "-w"});
    auto r = testing::run(args);
    if (r.exit_code == 0) return "";
    std::string cmd;
    for (const auto& a : args) cmd += (cmd.empty() ? "" : " ") + a;
    return cmd + " failed: " + first_line(r.err);
  }

  static std::string find_iptables() {
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path ? path : "/usr/sbin:/sbin:/usr/bin:/bin");
    for (std::string dir; std::getline(dirs, dir, ':');)
      if (::access((dir + "/iptables").c_str(), X_OK) == 0) return dir + "/iptables";
    return "iptables";
  }

  // The chains and cgroups of earlier runs whose process is gone (killed -9, say).
  void sweep_stale(const std::string& rules) {
    auto all = testing::run({"iptables", "-w", "-S"});
    std::istringstream in(all.exit_code == 0 ? all.out : rules);
    for (std::string line; std::getline(in, line);) {
      const std::string prefix = "-N CALDERA-CHAOS-";
      if (line.rfind(prefix, 0) != 0) continue;
      auto pid = std::atoi(line.c_str() + prefix.size());
      if (pid_alive(pid)) continue;
      const std::string chain = line.substr(3);
      while (iptables({"-D", "OUTPUT", "-j", chain}).empty()) {
      }
      iptables({"-F", chain});
      iptables({"-X", chain});
    }
  }

  // Their workers, shims and pods, if any still run (cgroup.kill), go too.
  void sweep_stale_cgroups() {
    std::error_code ec;
    for (fs::directory_iterator it(home_, ec), end; !ec && it != end; it.increment(ec)) {
      auto name = it->path().filename().string();
      const std::string prefix = "caldera-chaos-";
      if (name.rfind(prefix, 0) != 0 || !it->is_directory()) continue;
      if (pid_alive(std::atoi(name.c_str() + prefix.size()))) continue;
      std::error_code ec2;
      for (fs::directory_iterator sub(it->path(), ec2), subend; !ec2 && sub != subend;
           sub.increment(ec2)) {
        if (!sub->is_directory()) continue;
        write_text(sub->path() / "cgroup.kill", "1");
        wait_until_empty(sub->path() / "cgroup.procs");
        ::rmdir(sub->path().c_str());
      }
      ::rmdir(it->path().c_str());
    }
  }

  // The commands a second interrupt runs (see on_signal).
  void publish_emergency() {
    emergency_args_ = {{iptables_path_, "-w", "-D", "OUTPUT", "-j", chain_},
                       {iptables_path_, "-w", "-F", chain_},
                       {iptables_path_, "-w", "-X", chain_}};
    emergency_argv_.clear();
    for (auto& cmd : emergency_args_) {
      auto& argv = emergency_argv_.emplace_back();
      for (auto& a : cmd) argv.push_back(a.data());
      argv.push_back(nullptr);
    }
    for (size_t i = 0; i < emergency_argv_.size(); ++i) g_emergency[i] = emergency_argv_[i].data();
    g_emergency_n = static_cast<int>(emergency_argv_.size());
  }

  int nodes_ = 0;
  int port_ = 0;
  bool ready_ = false;
  bool chain_made_ = false;
  std::string chain_, iptables_path_, home_, run_dir_, rel_;
  std::mutex move_mu_;
  std::vector<std::vector<std::string>> emergency_args_;
  std::vector<std::vector<char*>> emergency_argv_;
};

// ---- the cluster ----

struct NodeSpec {
  std::string name;
  int client_port = 0, cluster_port = 0;
};

class Cluster {
 public:
  Cluster(const std::string& dir, int n) : dir_(dir) {
    for (int i = 1; i <= n; ++i)
      specs_.push_back({"node-" + std::to_string(i), testing::free_port(), testing::free_port()});
    std::string y =
        "cluster:\n  name: chaos\n  coordinator: node-1\n  heartbeatInterval: 500ms\n"
        "  heartbeatTimeout: " +
        std::to_string(kHeartbeatTimeoutMs) +
        "ms\n  leaseTimeout: " + std::to_string(kLeaseTimeoutMs) + "ms\nnodes:\n";
    for (const auto& s : specs_)
      y += "  - name: " + s.name +
           "\n    host: 127.0.0.1\n    clientPort: " + std::to_string(s.client_port) +
           "\n    clusterPort: " + std::to_string(s.cluster_port) + "\n    dataDir: " + dir + "/" +
           s.name + "\n    resources: {cpu: 2, memory: 4Gi, pods: 40}\n";
    config_ = testing::write_file(dir, "cluster.yaml", y);
    for (const auto& s : specs_) {
      nodes_.push_back(std::make_unique<Calderad>(dir_of(s.name), args(s.name)));
      up_.push_back(false);
    }
  }

  ~Cluster() {
    for (auto& n : nodes_) n->signal(SIGCONT);
    for (auto& pid : g_node_pids) pid = 0;
  }

  // Starts node i (a worker in its own cgroup, for partitions) with these flags besides its own
  // (--restore-from DIR, say: for this start only); its pid is kept for a second interrupt.
  void start(int i, Partitioner& part, const std::vector<std::string>& extra = {}) {
    if (!nodes_[i]->running()) {  // a new process, with the flags of this start
      auto a = args(specs_[i].name);
      a.insert(a.end(), extra.begin(), extra.end());
      nodes_[i] = std::make_unique<Calderad>(dir_of(specs_[i].name), a);
    }
    part.start_in(i, [&] { nodes_[i]->start(); });
    if (i < kMaxNodes) g_node_pids[i] = nodes_[i]->pid();
  }

  void kill9(int i) {
    if (i < kMaxNodes) g_node_pids[i] = 0;
    nodes_[i]->kill9();
  }

  int size() const { return static_cast<int>(specs_.size()); }
  const NodeSpec& spec(int i) const { return specs_[i]; }
  std::string data_dir(int i) const { return dir_of(specs_[i].name); }
  Calderad& node(int i) { return *nodes_[i]; }
  std::string log(int i) const { return nodes_[i]->log(); }

  void set_up(int i, bool up) {
    std::lock_guard lock(mu_);
    up_[i] = up;
  }

  // The caldera CLI against a node that is up, `avoid` excepted; nodes taken in turn.
  CommandResult cli(std::vector<std::string> args, const std::string& input = {}, int avoid = -1) {
    int pick = -1;
    {
      std::lock_guard lock(mu_);
      for (int k = 0; k < size(); ++k) {
        int i = static_cast<int>((next_ + k) % specs_.size());
        if (up_[i] && i != avoid) {
          pick = i;
          break;
        }
      }
      ++next_;
    }
    if (pick < 0) return {-1, "", "no node is up"};
    return cli_at(pick, std::move(args), input);
  }

  CommandResult cli_at(int i, std::vector<std::string> args, const std::string& input = {}) {
    args.insert(args.begin(), {CALDERA_CLI_PATH, "--server",
                               "127.0.0.1:" + std::to_string(specs_[i].client_port)});
    return testing::run(args, input);
  }

  // `get nodes`: name -> Ready; nullopt when no answer. At node `at` (-1: any that is up, `avoid`
  // excepted).
  std::optional<std::map<std::string, bool>> readiness(int avoid = -1, int at = -1) {
    auto r = at >= 0 ? cli_at(at, {"get", "nodes", "-o", "json"})
                     : cli({"get", "nodes", "-o", "json"}, {}, avoid);
    if (r.exit_code != 0) return std::nullopt;
    try {
      std::map<std::string, bool> out;
      const json nodes = json::parse(r.out);
      for (const auto& n : nodes.at("items"))
        out[n["metadata"]["name"]] = n["status"]["conditions"][0]["status"] == "True";
      return out;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }

  bool all_ready(int avoid = -1) {
    auto r = readiness(avoid);
    if (!r || static_cast<int>(r->size()) != size()) return false;
    for (const auto& [name, ready] : *r)
      if (!ready) return false;
    return true;
  }

 private:
  std::string dir_of(const std::string& name) const { return dir_ + "/" + name; }
  std::vector<std::string> args(const std::string& name) const {
    return {"--config", config_, "--node", name};
  }

  std::string dir_, config_;
  std::vector<NodeSpec> specs_;
  std::vector<std::unique_ptr<Calderad>> nodes_;
  std::mutex mu_;
  std::vector<bool> up_;
  size_t next_ = 0;
};

// ---- what the run observes ----

struct JobObs {
  bool acked = false;
  bool late_ack = false;  // an attempt failed but the job was there: an earlier one took effect
  int attempts = 0;
  int64_t submit_ns = 0;
  int64_t ack_ns = 0;
  int64_t terminal_ns = 0;  // first seen terminal
  std::string phase;
  int64_t version = 0;
  int64_t retry = 0;
};

struct PodObs {
  std::string name, job, task, node, phase, reason;
  int index = -1;
  int64_t version = -1;
  int64_t first_seen_ns = 0, last_seen_ns = 0;
};

bool terminal_phase(const std::string& p) {
  return p == "Completed" || p == "Failed" || p == "Aborted" || p == "Terminated";
}

struct Observations {
  std::mutex mu;
  std::map<std::string, JobObs> jobs;
  std::map<std::string, PodObs> pods;                         // by uid
  std::map<std::string, std::set<std::string>> nodes_of_job;  // from every pod poll
  struct Pending {
    Fault* fault;
    std::string job;
    int64_t version;
    bool coordinator;
  };
  std::vector<Pending> recoveries;
  int pod_polls = 0, job_polls = 0, failed_polls = 0;
};

// `items` from a poll sent at `sent` and answered at `at`: only a poll sent after a fault's
// injection tells about the state after it.
void update_jobs(Observations& obs, const json& items, int64_t sent, int64_t at) {
  std::lock_guard lock(obs.mu);
  ++obs.job_polls;
  std::map<std::string, std::pair<std::string, int64_t>> now;
  for (const auto& j : items) {
    std::string name = j["metadata"]["name"];
    std::string phase = j["status"]["state"]["phase"];
    int64_t version = j["status"].value("version", 0);
    now[name] = {phase, version};
    auto& o = obs.jobs[name];
    o.phase = phase;
    o.version = version;
    o.retry = j["status"].value("retryCount", 0);
    if (terminal_phase(phase) && !o.terminal_ns) o.terminal_ns = at;
  }
  auto& rs = obs.recoveries;
  for (auto it = rs.begin(); it != rs.end();) {
    auto got = now.find(it->job);
    if (got == now.end() || sent < it->fault->inject_ns) {
      ++it;
      continue;
    }
    const auto& [phase, version] = got->second;
    // Running again: at a new version (restarted, its pods replaced), or at all once the worker is
    // back and every node Ready (its pods there ran on, or were replaced); after a coordinator's
    // fault, Running at all.
    const int64_t ready = it->fault->ready_ns;
    bool running = phase == "Running" &&
                   (it->coordinator || version > it->version || (ready != 0 && at >= ready));
    if (running || phase == "Completed") {
      it->fault->recovery_ms.push_back(static_cast<double>(at - it->fault->inject_ns) / kMs);
      it->fault->recovered.push_back(it->job);
    } else if (terminal_phase(phase)) {
      it->fault->ended.push_back(it->job + " " + phase);
    } else {
      ++it;
      continue;
    }
    it = rs.erase(it);
  }
}

void update_pods(Observations& obs, const json& items, int64_t at) {
  std::lock_guard lock(obs.mu);
  ++obs.pod_polls;
  for (const auto& p : items) {
    std::string uid = p["metadata"]["uid"];
    auto& o = obs.pods[uid];
    o.name = p["metadata"]["name"];
    const auto& labels = p["metadata"]["labels"];
    o.job = labels.value("volcano.sh/job-name", "");
    o.task = labels.value("volcano.sh/task-spec", "");
    o.index = std::stoi(labels.value("volcano.sh/task-index", "-1"));
    o.version = std::stoll(p["metadata"]["annotations"].value("volcano.sh/job-version", "-1"));
    if (p["spec"].contains("nodeName")) o.node = p["spec"]["nodeName"];
    o.phase = p["status"]["phase"];
    o.reason = p["status"].value("reason", "");
    if (!o.first_seen_ns) o.first_seen_ns = at;
    o.last_seen_ns = at;
    if (!o.node.empty()) obs.nodes_of_job[o.job].insert(o.node);
  }
}

std::optional<json> get_items(Cluster& c, const std::string& what, int avoid = -1) {
  auto r = c.cli({"get", what, "-o", "json"}, {}, avoid);
  if (r.exit_code != 0) return std::nullopt;
  try {
    return json::parse(r.out).at("items");
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Polls jobs (every 250 ms while a fault's jobs are to run again, else every second) and pods
// (every second) until stopped.
void monitor(Cluster& c, Observations& obs, const std::atomic<bool>& stop) {
  auto next_pods = std::chrono::steady_clock::now();
  auto next_jobs = next_pods;
  while (!stop && !g_abort) {
    auto now = std::chrono::steady_clock::now();
    if (now >= next_jobs) {
      const int64_t sent = now_ns();
      auto items = get_items(c, "jobs");
      try {
        if (items) update_jobs(obs, *items, sent, now_ns());
      } catch (const std::exception&) {
        items.reset();
      }
      if (!items) {
        std::lock_guard lock(obs.mu);
        ++obs.failed_polls;
      }
      bool fast;
      {
        std::lock_guard lock(obs.mu);
        fast = !obs.recoveries.empty();
      }
      next_jobs = std::chrono::steady_clock::now() + (fast ? 250ms : 1000ms);
    }
    if (now >= next_pods) {
      try {
        if (auto items = get_items(c, "pods")) update_pods(obs, *items, now_ns());
      } catch (const std::exception&) {
        std::lock_guard lock(obs.mu);
        ++obs.failed_polls;
      }
      next_pods = std::chrono::steady_clock::now() + 1000ms;
    }
    std::this_thread::sleep_for(50ms);
  }
}

// Holds the submitter: while held, no submission is under way and none starts (a fault that
// restores the coordinator from a backup: a backup cannot hold a job acknowledged after it).
class SubmitGate {
 public:
  // Holds it once the submission under way, if any, has been answered.
  void hold() {
    std::unique_lock lock(mu_);
    held_ = true;
    cv_.wait(lock, [&] { return !busy_; });
  }
  void release() {
    {
      std::lock_guard lock(mu_);
      held_ = false;
    }
    cv_.notify_all();
  }
  // The submitter, before an attempt: waits while held, and returns how long it waited (nothing
  // when the run was interrupted meanwhile).
  std::optional<std::chrono::steady_clock::duration> enter() {
    auto from = std::chrono::steady_clock::now();
    std::unique_lock lock(mu_);
    while (held_ && !g_abort) cv_.wait_for(lock, 100ms);
    if (g_abort) return std::nullopt;
    busy_ = true;
    return std::chrono::steady_clock::now() - from;
  }
  void leave() {
    {
      std::lock_guard lock(mu_);
      busy_ = false;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool held_ = false, busy_ = false;
};

// Holds the gate for a scope.
class SubmitHold {
 public:
  explicit SubmitHold(SubmitGate& gate) : gate_(gate) { gate_.hold(); }
  ~SubmitHold() { release(); }
  void release() {
    if (held_) gate_.release();
    held_ = false;
  }
  SubmitHold(const SubmitHold&) = delete;
  SubmitHold& operator=(const SubmitHold&) = delete;

 private:
  SubmitGate& gate_;
  bool held_ = true;
};

void submitter(Cluster& c, Observations& obs, const std::vector<JobPlan>& jobs, SubmitGate& gate) {
  for (const auto& j : jobs) {
    nap_until_ns(t0_ns + j.at_ns);
    if (g_abort) return;
    {
      std::lock_guard lock(obs.mu);
      obs.jobs[j.name].submit_ns = now_ns();
    }
    // Until acknowledged; a node or the coordinator may be down for a few seconds. A hold of the
    // gate does not count.
    auto deadline = std::chrono::steady_clock::now() + 90s;
    bool acked = false, late = false;
    int attempts = 0;
    while (!acked && !g_abort && std::chrono::steady_clock::now() < deadline) {
      auto waited = gate.enter();
      if (!waited) return;
      deadline += *waited;
      ++attempts;
      auto r = c.cli({"submit", "-f", "-"}, j.yaml);
      gate.leave();
      if (r.exit_code == 0) {
        acked = true;
      } else if (r.err.find("already exists") != std::string::npos) {
        acked = late = true;
      } else {
        if (attempts == 1 || attempts % 10 == 0) {
          auto err = r.err.substr(0, r.err.find('\n'));
          say("submit %s failed (attempt %d): %s", j.name.c_str(), attempts, err.c_str());
        }
        nap(300ms);
      }
    }
    std::lock_guard lock(obs.mu);
    auto& o = obs.jobs[j.name];
    o.acked = acked;
    o.late_ack = late;
    o.attempts = attempts;
    o.ack_ns = now_ns();
  }
}

// ---- the record of real pods ----

// Whether pid is still the shell of the run of pod uid `uid`: alive, not a zombie, with that run's
// VC_POD_DIR (a pid reused by another process is not).
bool run_alive(long pid, const std::string& uid) {
  if (pid <= 0) return false;
  const std::string proc = "/proc/" + std::to_string(pid);
  auto env = read_text(proc + "/environ");
  if (!env) return false;
  const std::string want = "/pods/" + uid;
  bool mine = false;
  for (size_t at = 0; at < env->size() && !mine;) {
    auto end = env->find('\0', at);
    if (end == std::string::npos) end = env->size();
    std::string_view var(env->data() + at, end - at);
    mine = var.rfind("VC_POD_DIR=", 0) == 0 && var.size() >= want.size() &&
           var.substr(var.size() - want.size()) == want;
    at = end + 1;
  }
  if (!mine) return false;
  auto stat = read_text(proc + "/stat");
  if (!stat) return false;
  auto close = stat->rfind(") ");
  return close != std::string::npos && close + 2 < stat->size() && (*stat)[close + 2] != 'Z';
}

// Follows the run log and polls /proc every 100 ms for the shell of each run it names (START's
// pid): a run without END (SIGKILLed) gets its end from here, to within the poll.
class PidWatch {
 public:
  struct Seen {
    int64_t alive_ns = 0;  // last seen alive
    int64_t gone_ns = 0;   // first seen gone
  };
  explicit PidWatch(std::string file) : file_(std::move(file)) {}

  void run(const std::atomic<bool>& stop) {
    while (!stop && !g_abort) {
      poll();
      std::this_thread::sleep_for(100ms);
    }
  }

  // (uid, pid) -> what was seen.
  std::map<std::pair<std::string, long>, Seen> seen() const {
    std::lock_guard lock(mu_);
    return seen_;
  }

 private:
  void poll() {
    std::ifstream in(file_);
    in.seekg(offset_);
    std::string line;
    while (std::getline(in, line) && !in.eof()) {  // whole lines only: one being written waits
      offset_ += static_cast<std::streamoff>(line.size() + 1);
      std::istringstream ss(line);
      std::string kind, pod, uid, node;
      int64_t ns = 0;
      long pid = 0;
      if (ss >> kind >> pod >> uid >> node >> ns >> pid && kind == "START" && pid > 0)
        live_.emplace(uid, pid);
    }
    const int64_t now = now_ns();
    std::lock_guard lock(mu_);
    for (auto it = live_.begin(); it != live_.end();) {
      auto& seen = seen_[*it];
      if (run_alive(it->second, it->first)) {
        seen.alive_ns = now;
        ++it;
      } else {
        seen.gone_ns = now;
        it = live_.erase(it);
      }
    }
  }

  std::string file_;
  std::streamoff offset_ = 0;
  std::set<std::pair<std::string, long>> live_;
  mutable std::mutex mu_;
  std::map<std::pair<std::string, long>, Seen> seen_;
};

struct PodRun {
  std::string pod, uid, node;
  long pid = 0;
  int64_t start_ns = 0, end_ns = 0;
  bool has_end = false;
  std::string end_how;
  // For a run without END, from the /proc watch: last seen alive, first seen gone (0: unknown).
  int64_t alive_ns = 0, gone_ns = 0;
  // The latest time it surely ran (END, else last seen alive, else its start), and the earliest
  // by which it surely no longer ran (END, else first seen gone; 0 when unknown).
  int64_t surely_alive_until() const { return has_end ? end_ns : std::max(alive_ns, start_ns); }
  int64_t surely_gone_by() const { return has_end ? end_ns : gone_ns; }
};

// A run that, right after its START, found another run of its pod name alive.
struct OverlapMark {
  std::string pod, uid, node;
  int64_t ns = 0;
  std::string other_uid, other_node;
  long other_pid = 0;
};

struct RunLog {
  std::map<std::string, std::vector<PodRun>> by_uid;  // START lines (a pod may start twice)
  std::vector<OverlapMark> overlaps;
  int malformed = 0;
};

RunLog read_run_log(const std::string& path,
                    const std::map<std::pair<std::string, long>, PidWatch::Seen>& seen) {
  RunLog log;
  std::ifstream in(path);
  std::vector<std::tuple<std::string, std::string, std::string, int64_t, std::string>> ends;
  for (std::string line; std::getline(in, line);) {
    std::istringstream ss(line);
    std::string kind, pod, uid, node, how;
    int64_t ns = 0;
    if (!(ss >> kind >> pod >> uid >> node >> ns)) {
      ++log.malformed;
      continue;
    }
    if (kind == "START") {
      PodRun run;
      run.pod = pod;
      run.uid = uid;
      run.node = node;
      run.start_ns = ns;
      ss >> run.pid;
      log.by_uid[uid].push_back(run);
    } else if (kind == "END") {
      ss >> how;
      ends.emplace_back(pod, uid, node, ns, how);
    } else if (kind == "OVERLAP") {
      OverlapMark o;
      o.pod = pod;
      o.uid = uid;
      o.node = node;
      o.ns = ns;
      if (!(ss >> o.other_uid >> o.other_node >> o.other_pid))
        ++log.malformed;
      else
        log.overlaps.push_back(o);
    } else {
      ++log.malformed;
    }
  }
  for (const auto& [pod, uid, node, ns, how] : ends) {
    auto it = log.by_uid.find(uid);
    if (it == log.by_uid.end()) {
      ++log.malformed;
      continue;
    }
    // The latest start on that node before this end.
    PodRun* match = nullptr;
    for (auto& r : it->second)
      if (r.node == node && !r.has_end && r.start_ns <= ns &&
          (!match || r.start_ns > match->start_ns))
        match = &r;
    if (!match) {
      ++log.malformed;
      continue;
    }
    match->end_ns = ns;
    match->has_end = true;
    match->end_how = how;
  }
  for (auto& [uid, runs] : log.by_uid)
    for (auto& r : runs) {
      auto it = seen.find({uid, r.pid});
      if (it == seen.end()) continue;
      r.alive_ns = it->second.alive_ns;
      r.gone_ns = it->second.gone_ns;
    }
  return log;
}

// ---- the checks ----

struct Report {
  std::vector<std::string> violations;
  std::vector<std::string> notes;
  void violation(const std::string& s) { violations.push_back(s); }
  void note(const std::string& s) { notes.push_back(s); }
};

std::string fmt_s(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fs", rel_s(ns));
  return buf;
}

struct Checker {
  const Plan& plan;
  const std::vector<Fault>& faults;  // the injected ones
  Observations& obs;
  const RunLog& log;
  Report& report;
  Cluster& cluster;

  const JobPlan* job_plan(const std::string& name) const {
    for (const auto& j : plan.jobs)
      if (j.name == name) return &j;
    return nullptr;
  }

  // (job, task, index) of a pod name of the plan.
  std::optional<std::tuple<const JobPlan*, const TaskPlan*, int>> parse_pod(
      const std::string& pod) const {
    for (const auto& j : plan.jobs) {
      if (pod.rfind(j.name + "-", 0) != 0) continue;
      for (const auto& t : j.tasks) {
        auto prefix = j.name + "-" + t.name + "-";
        if (pod.rfind(prefix, 0) != 0) continue;
        try {
          return std::make_tuple(&j, &t, std::stoi(pod.substr(prefix.size())));
        } catch (const std::exception&) {
          return std::nullopt;
        }
      }
    }
    return std::nullopt;
  }

  static bool overlaps(int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
    return a0 <= b1 && b0 <= a1;
  }

  // The nodes a job's pods were seen on (polls and START lines).
  std::set<std::string> nodes_of(const std::string& job) const {
    std::set<std::string> out;
    auto it = obs.nodes_of_job.find(job);
    if (it != obs.nodes_of_job.end()) out = it->second;
    for (const auto& [uid, runs] : log.by_uid)
      for (const auto& r : runs)
        if (r.pod.rfind(job + "-", 0) == 0) {
          auto parsed = parse_pod(r.pod);
          if (parsed && std::get<0>(*parsed)->name == job) out.insert(r.node);
        }
    return out;
  }

  std::string node_name(const Fault& f) const { return "node-" + std::to_string(f.node + 1); }

  // The faults on one of the job's nodes (on any node when they are unknown) while it lived.
  std::vector<const Fault*> faults_on_job(const std::string& job) const {
    const auto& o = obs.jobs.at(job);
    int64_t from = o.submit_ns, to = o.terminal_ns ? o.terminal_ns : now_ns();
    auto nodes = nodes_of(job);
    std::vector<const Fault*> out;
    for (const auto& f : faults) {
      if (!overlaps(from, to, f.inject_ns, f.window_end())) continue;
      if (!nodes.empty() && !nodes.count(node_name(f))) continue;
      out.push_back(&f);
    }
    return out;
  }

  // Those that may evict pods: a worker killed, stopped or cut off, or stopped until it was seen
  // NotReady (at most: a worker back before its lease is over keeps its pods). A coordinator's
  // restart or pause loses nothing: it explains no failure and no restart.
  static size_t evicting(const std::vector<const Fault*>& fs) {
    return std::count_if(fs.begin(), fs.end(), [](const Fault* f) {
      return !coordinator_fault(f->kind) && f->node_down_fault();
    });
  }

  std::string describe(const std::vector<const Fault*>& fs) const {
    if (fs.empty()) return "no fault on its nodes while it lived";
    std::string out = "faults on its nodes meanwhile:";
    for (const auto* f : fs)
      out += std::string(" ") + to_string(f->kind) + " of " + node_name(*f) + " at " +
             fmt_s(f->inject_ns) +
             (f->kind == FaultKind::StopShort && !f->detected ? " (not seen NotReady)" : "") + ";";
    return out;
  }

  std::string nodes_text(const std::string& job) const {
    std::string on;
    for (const auto& n : nodes_of(job)) on += (on.empty() ? "" : ",") + n;
    return on.empty() ? "unknown" : on;
  }

  // The last events `describe job` lists, for a job that did not end.
  std::string last_events(const std::string& job) const {
    auto r = cluster.cli({"describe", "job", job});
    auto at = r.out.find("\nEvents:");
    if (r.exit_code != 0 || at == std::string::npos) return "";
    std::vector<std::string> lines;
    std::istringstream in(r.out.substr(at + 9));
    for (std::string line; std::getline(in, line);) {
      auto start = line.find_first_not_of(' ');
      if (start != std::string::npos) lines.push_back(line.substr(start));
    }
    std::string out;
    for (size_t i = lines.size() > 3 ? lines.size() - 2 : 1; i < lines.size(); ++i)
      out += " [event: " + lines[i] + "]";
    // The job's state keeps the first reason; the coordinator's log has the latest one.
    const std::string needle = "job=default/" + job + " gang not bound: ";
    std::string log = cluster.log(0);
    auto at_log = log.rfind(needle);
    if (at_log != std::string::npos) {
      auto from = at_log + needle.size();
      out += " [coordinator log, last: gang not bound: " +
             log.substr(from, log.find('\n', from) - from) + "]";
    }
    return out;
  }

  void jobs_exist_and_ended(const json& final_jobs) {
    std::map<std::string, json> by_name;
    for (const auto& j : final_jobs) by_name[j["metadata"]["name"]] = j;
    for (const auto& p : plan.jobs) {
      auto& o = obs.jobs[p.name];
      if (!o.acked) {
        if (by_name.count(p.name))
          report.note("job " + p.name + " was never acknowledged but exists");
        continue;
      }
      auto it = by_name.find(p.name);
      if (it == by_name.end()) {
        report.violation("job " + p.name + " was acknowledged at " + fmt_s(o.ack_ns) +
                         " but does not exist");
        continue;
      }
      const auto& st = it->second["status"];
      std::string phase = st["state"]["phase"];
      o.phase = phase;
      o.retry = st.value("retryCount", 0);
      o.version = st.value("version", 0);
      std::string why = phase + " (" + st["state"].value("reason", "") + ": " +
                        st["state"].value("message", "") + ")";
      if (!terminal_phase(phase)) {
        report.violation("job " + p.name + " did not end: " + why + last_events(p.name));
        continue;
      }
      if (phase == "Completed") continue;
      auto hit = faults_on_job(p.name);
      if (phase == "Failed" && !p.restart && evicting(hit) > 0) {
        report.note("job " + p.name + " " + why + "; " + describe(hit));
        continue;
      }
      report.violation("job " + p.name + " ended " + why +
                       (p.restart ? " despite PodEvicted -> RestartJob" : "") + "; nodes " +
                       nodes_text(p.name) + ", retryCount " + std::to_string(o.retry) + "; " +
                       describe(hit) + failed_pods(p.name));
    }
  }

  // A failed job's Failed pods (as last polled), each with how its run ended by its own marks.
  std::string failed_pods(const std::string& job) const {
    std::string out;
    int n = 0;
    for (const auto& [uid, p] : obs.pods) {
      if (p.job != job || p.phase != "Failed") continue;
      if (++n > 4) continue;
      out += " " + p.name + " on " + (p.node.empty() ? "?" : p.node) + " (" + p.reason;
      auto runs = log.by_uid.find(uid);
      if (runs != log.by_uid.end() && !runs->second.empty()) {
        const auto& r = runs->second.back();
        out += std::string(", its run ") +
               (r.has_end ? "ended " + r.end_how + " at " + fmt_s(r.end_ns) : "left no END line");
      }
      out += ");";
    }
    if (n > 4) out += " and " + std::to_string(n - 4) + " more;";
    return n ? " Failed pods:" + out : "";
  }

  void retries_plausible() {
    for (const auto& p : plan.jobs) {
      auto& o = obs.jobs[p.name];
      if (!o.acked || o.retry == 0) continue;
      auto hit = faults_on_job(p.name);
      auto n = evicting(hit);
      if (o.retry > static_cast<int64_t>(n))
        report.violation("job " + p.name + " retryCount " + std::to_string(o.retry) + " but " +
                         std::to_string(n) + " fault(s) that evict pods hit its nodes (" +
                         nodes_text(p.name) + ") while it lived (" + fmt_s(o.submit_ns) + " .. " +
                         fmt_s(o.terminal_ns) + "); " + describe(hit));
    }
  }

  void uids_ran_once() {
    for (const auto& [uid, runs] : log.by_uid) {
      std::set<std::string> nodes;
      for (const auto& r : runs) nodes.insert(r.node);
      if (nodes.size() > 1) {
        std::string on;
        for (const auto& n : nodes) on += (on.empty() ? "" : ",") + n;
        report.violation("pod " + runs.front().pod + " uid " + uid +
                         " ran on several nodes: " + on);
      } else if (runs.size() > 1) {
        report.violation("pod " + runs.front().pod + " uid " + uid + " started " +
                         std::to_string(runs.size()) + " times on " + runs.front().node);
      }
      auto seen = obs.pods.find(uid);
      if (seen != obs.pods.end() && !seen->second.node.empty() && !nodes.count(seen->second.node))
        report.violation("pod " + runs.front().pod + " uid " + uid + " bound to " +
                         seen->second.node + " but ran on " + runs.front().node);
    }
  }

  int64_t end_of(const PodRun& r) const {
    if (r.has_end) return r.end_ns;
    if (r.gone_ns) return r.gone_ns;
    auto parsed = parse_pod(r.pod);
    int dur = parsed ? std::get<1>(*parsed)->duration_ms : 5000;
    return r.start_ns + (dur + 500) * kMs;  // no END line: at most its sleep
  }

  void no_overcommit() {
    struct Ev {
      int64_t t;
      int delta;
      const PodRun* run;
    };
    std::map<std::string, std::vector<Ev>> by_node;
    for (const auto& [uid, runs] : log.by_uid)
      for (const auto& r : runs) {
        auto parsed = parse_pod(r.pod);
        if (!parsed) continue;
        int cpu = std::get<1>(*parsed)->cpu_milli;
        by_node[r.node].push_back({r.start_ns, cpu, &r});
        by_node[r.node].push_back({end_of(r), -cpu, &r});
      }
    for (auto& [node, evs] : by_node) {
      std::sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) {
        return a.t != b.t ? a.t < b.t : a.delta < b.delta;  // ends first
      });
      int sum = 0, reported = 0;
      std::set<const PodRun*> live;
      bool over = false;
      for (const auto& e : evs) {
        sum += e.delta;
        if (e.delta > 0)
          live.insert(e.run);
        else
          live.erase(e.run);
        if (sum > kNodeCpuMilli && !over) {
          over = true;
          if (++reported > 5) continue;
          std::string who;
          for (const auto* r : live)
            who += " " + r->pod + "[" + r->uid.substr(0, 8) + " " + fmt_s(r->start_ns) + ".." +
                   (r->has_end   ? fmt_s(r->end_ns) + " " + r->end_how
                    : r->gone_ns ? "gone by " + fmt_s(r->gone_ns) + ", no END"
                                 : "no END") +
                   "]";
          report.violation(node + " over-committed at " + fmt_s(e.t) + ": " + std::to_string(sum) +
                           "m of " + std::to_string(kNodeCpuMilli) + "m cpu in use by" + who);
        } else if (sum <= kNodeCpuMilli) {
          over = false;
        }
      }
      if (reported > 5)
        report.violation(node + ": " + std::to_string(reported - 5) + " more over-commit episodes");
    }
  }

  // The job version of a run (its uid's, as polled), -1 when no poll saw it.
  int64_t version_of(const PodRun& r) const {
    auto it = obs.pods.find(r.uid);
    return it == obs.pods.end() ? -1 : it->second.version;
  }

  std::string run_text(const PodRun& r) const {
    auto v = version_of(r);
    return r.pod + " uid " + r.uid.substr(0, 8) + " on " + r.node + " (version " +
           (v < 0 ? std::string("?") : std::to_string(v)) + ", " + fmt_s(r.start_ns) + ".." +
           (r.has_end   ? fmt_s(r.end_ns) + " " + r.end_how
            : r.gone_ns ? "gone by " + fmt_s(r.gone_ns) + ", no END"
                        : "no END") +
           ")";
  }

  // The faults whose window (from the injection to a second after every node was Ready again)
  // meets [from, to], as text.
  std::string faults_near(int64_t from, int64_t to) const {
    std::string out;
    for (size_t i = 0; i < faults.size(); ++i) {
      const auto& f = faults[i];
      if (!overlaps(from, to, f.inject_ns, f.window_end())) continue;
      out += std::string(out.empty() ? "" : "; ") + "fault " + std::to_string(i + 1) + " " +
             to_string(f.kind) + " of " + node_name(f) + " at " + fmt_s(f.inject_ns) + " (" +
             std::to_string((f.restore_ns - f.inject_ns) / kMs) + " ms" +
             (f.detected
                  ? ", NotReady after " + std::to_string((f.detect_ns - f.inject_ns) / kMs) + " ms"
                  : "") +
             ")";
    }
    return out.empty() ? "no fault near" : out;
  }

  // No pod alive twice at once (on two nodes, or twice on one): the OVERLAP marks the runs wrote
  // as they started, and the intervals each run surely lived (START to END, or to when the /proc
  // watch last saw it alive) for two runs of one pod name.
  void no_pod_alive_twice() {
    std::set<std::pair<std::string, std::string>> reported;  // uid pairs
    std::map<std::string, const PodRun*> run_of_uid;         // the last run of each uid
    for (const auto& [uid, runs] : log.by_uid)
      for (const auto& r : runs) run_of_uid[uid] = &r;
    auto text_of = [&](const std::string& uid, const std::string& node, long pid) {
      auto it = run_of_uid.find(uid);
      if (it != run_of_uid.end()) return run_text(*it->second);
      return "uid " + uid.substr(0, 8) + " on " + node + " pid " + std::to_string(pid);
    };
    for (const auto& o : log.overlaps) {
      if (!reported.insert(std::minmax(o.uid, o.other_uid)).second) continue;
      report.violation("pod " + o.pod + " alive twice at once: " + text_of(o.uid, o.node, 0) +
                       " found, as it started, " + text_of(o.other_uid, o.other_node, o.other_pid) +
                       " still alive (pid " + std::to_string(o.other_pid) + ") at " + fmt_s(o.ns) +
                       "; " + faults_near(o.ns - 15 * kSec, o.ns));
    }
    std::map<std::string, std::vector<const PodRun*>> by_pod;
    for (const auto& [uid, runs] : log.by_uid)
      for (const auto& r : runs) by_pod[r.pod].push_back(&r);
    for (auto& [pod, runs] : by_pod) {
      std::sort(runs.begin(), runs.end(),
                [](const PodRun* a, const PodRun* b) { return a->start_ns < b->start_ns; });
      for (size_t i = 0; i < runs.size(); ++i)
        for (size_t k = i + 1; k < runs.size(); ++k) {
          const PodRun& a = *runs[i];
          const PodRun& b = *runs[k];
          if (a.uid == b.uid && a.node == b.node) continue;  // uids_ran_once says it
          if (b.start_ns >= a.surely_alive_until()) continue;
          if (!reported.insert(std::minmax(a.uid, b.uid)).second) continue;
          report.violation("pod " + pod + " alive twice at once: " + run_text(b) +
                           " started while " + run_text(a) + " surely ran (no OVERLAP mark); " +
                           faults_near(b.start_ns - 15 * kSec, b.start_ns));
        }
    }
  }

  // A pod whose run ended Succeeded (END ok) starts again only in a later version of a job with
  // PodEvicted -> RestartJob, after a fault that may evict pods hit the job's nodes between that
  // end and the new start (its pods all start anew then, the finished ones too). Never in the same
  // version, never in a job without RestartJob.
  void succeeded_pods_not_rerun() {
    std::map<std::string, std::vector<const PodRun*>> by_pod;
    for (const auto& [uid, runs] : log.by_uid)
      for (const auto& r : runs) by_pod[r.pod].push_back(&r);
    for (auto& [pod, runs] : by_pod) {
      auto parsed = parse_pod(pod);
      if (!parsed) continue;
      const JobPlan& job = *std::get<0>(*parsed);
      std::sort(runs.begin(), runs.end(),
                [](const PodRun* a, const PodRun* b) { return a->start_ns < b->start_ns; });
      for (size_t i = 0; i < runs.size(); ++i) {
        const PodRun& done = *runs[i];
        if (!done.has_end || done.end_how != "ok") continue;
        for (size_t k = i + 1; k < runs.size(); ++k) {
          const PodRun& again = *runs[k];
          if (again.uid == done.uid || again.start_ns < done.end_ns) continue;
          const int64_t v1 = version_of(done), v2 = version_of(again);
          std::string why;
          if (v1 >= 0 && v1 == v2) {
            why = "in the same job version";
          } else if (!job.restart) {
            why = "in a job without PodEvicted -> RestartJob";
          } else {
            auto nodes = nodes_of(job.name);
            bool evicted = false;
            for (const auto& f : faults)
              evicted |= !coordinator_fault(f.kind) && f.node_down_fault() &&
                         nodes.count(node_name(f)) && f.inject_ns <= again.start_ns &&
                         f.window_end() + 8 * kSec >= done.end_ns;
            if (!evicted) why = "with no fault that may evict pods on the job's nodes in between";
          }
          if (!why.empty())
            report.violation("pod " + pod + " ended Succeeded, then started again " + why + ": " +
                             run_text(done) + ", then " + run_text(again) + "; " +
                             faults_near(done.start_ns, again.start_ns));
          break;  // the next run only: it is the one to explain
        }
      }
    }
  }

  // A worker's pods run only while its lease is renewed. A worker gone (killed, stopped, cut off)
  // for longer than the lease lost it at most a lease after the fault (its last renewal came
  // before): every run on it then must have ended by that time, +1% for clock rates, +1 s for the
  // stop's grace, +1 s for the supervisor's wake-up and this machine's load. And no run starts on
  // it from then until the fault ends: a node starts no pod without a lease.
  void pods_end_with_their_lease() {
    int unknown = 0;
    for (const auto& f : faults) {
      if (coordinator_fault(f.kind) || f.node == 0 || !f.restore_ns) continue;
      const int64_t lease = kLeaseTimeoutMs * kMs * 101 / 100;
      if (f.restore_ns - f.inject_ns <= lease + 200 * kMs) continue;
      const int64_t deadline = f.inject_ns + lease + 2 * kSec;
      for (const auto& [uid, runs] : log.by_uid)
        for (const auto& r : runs) {
          if (r.node != node_name(f)) continue;
          if (r.start_ns > f.inject_ns + lease + 200 * kMs && r.start_ns < f.restore_ns)
            report.violation("pod " + run_text(r) +
                             " started while its node had no lease: " + to_string(f.kind) + " of " +
                             r.node + " from " + fmt_s(f.inject_ns) + " to " + fmt_s(f.restore_ns) +
                             ", the lease over by " + fmt_s(f.inject_ns + lease));
          if (r.start_ns >= f.inject_ns + lease) continue;
          if (r.has_end && r.end_ns <= f.inject_ns) continue;
          const int64_t gone = r.surely_gone_by();
          if (!gone) {
            ++unknown;
            continue;
          }
          if (gone <= deadline) continue;
          report.violation("pod " + run_text(r) + " outlived its node's lease: " +
                           to_string(f.kind) + " of " + r.node + " at " + fmt_s(f.inject_ns) +
                           " for " + std::to_string((f.restore_ns - f.inject_ns) / kMs) +
                           " ms, so the lease was over by " + fmt_s(f.inject_ns + lease) +
                           ", and the run went on " + std::to_string((gone - deadline) / kMs) +
                           " ms past " + fmt_s(deadline));
        }
    }
    if (unknown)
      report.note(std::to_string(unknown) +
                  " run(s) live when their node lost its lease have no known end (no END, not "
                  "seen by the /proc watch)");
  }

  // A coordinator paused for less than a lease costs nothing (README, "Leases"): no pod of a worker
  // is stopped meanwhile or just after, by its lease or by a restart, when no other fault was near.
  void pause_costs_nothing() {
    for (size_t i = 0; i < faults.size(); ++i) {
      const auto& f = faults[i];
      if (f.kind != FaultKind::PauseCoordinator) continue;
      const int64_t from = f.inject_ns, to = f.window_end() + 2 * kSec;
      bool other = false;
      for (const auto& g : faults)
        other |= !coordinator_fault(g.kind) && overlaps(g.inject_ns, g.window_end(), from, to);
      if (other) continue;
      for (const auto& [uid, runs] : log.by_uid)
        for (const auto& r : runs) {
          if (r.node == node_name_of(0) || !r.has_end || r.end_how != "term") continue;
          if (r.start_ns >= from || r.end_ns < from || r.end_ns > to) continue;
          report.violation("pod " + run_text(r) + " was stopped " +
                           std::to_string((r.end_ns - f.inject_ns) / kMs) + " ms after fault " +
                           std::to_string(i + 1) + " paused the coordinator for " +
                           std::to_string((f.restore_ns - f.inject_ns) / kMs) + " ms (from " +
                           fmt_s(f.inject_ns) + "), less than the " +
                           std::to_string(kLeaseTimeoutMs) +
                           " ms lease: such a pause should cost nothing");
        }
    }
  }

  // A real pod is reported as its run ended: one whose last run ended ok (its END mark) is not
  // Failed, unless a fault that may evict pods hit its node while it ran or just after (its node
  // lost, the outcome may not have reached anyone in time). A coordinator's fault explains none:
  // the outcome is the node's to keep and report; but a wipe takes the coordinator's own node's
  // records with it, and the outcome of a pod of that node that ended while nobody held its
  // deleted state file open (between the backup and the restored node's adoption) is lost: a
  // note says so.
  void outcomes_match_runs() {
    for (const auto& [uid, p] : obs.pods) {
      if (p.phase != "Failed") continue;
      auto it = log.by_uid.find(uid);
      if (it == log.by_uid.end() || it->second.empty()) continue;
      const PodRun& r = it->second.back();
      if (!r.has_end || r.end_how != "ok") continue;
      bool excused = false;
      for (const auto& f : faults)
        excused |= !coordinator_fault(f.kind) && f.node_down_fault() && node_name(f) == r.node &&
                   overlaps(r.start_ns, r.end_ns + 10 * kSec, f.inject_ns, f.window_end());
      if (excused) continue;
      bool wiped = false;
      for (size_t i = 0; i < faults.size() && !wiped; ++i) {
        const auto& f = faults[i];
        wiped = f.kind == FaultKind::WipeCoordinator && r.node == node_name_of(0) &&
                r.end_ns >= f.inject_ns - 5 * kSec &&
                r.end_ns <= (f.restore_ns ? f.restore_ns : now_ns()) + 5 * kSec;
        if (wiped)
          report.note("pod " + run_text(r) + " of the coordinator's node ended ok around fault " +
                      std::to_string(i + 1) +
                      " wipe-coordinator; its outcome went with the data dir (reported " +
                      p.reason + ")");
      }
      if (wiped) continue;
      report.violation("pod " + run_text(r) +
                       " ended ok (its END mark), but it is reported Failed (" + p.reason + "); " +
                       faults_near(r.start_ns, r.end_ns + 2 * kSec));
    }
  }

  // A coordinator halted on its wiped data dir decides nothing and kills nothing, and its
  // heartbeats renew the workers' leases; nor do its orders take effect later. From the time it was
  // up again until 3 s after the restored coordinator answered, no pod on a worker was stopped (END
  // term, or gone without an END), and none started during the halt. A pod that finished (END ok)
  // is fine, and so is a stop after the restore of a pod that the restored coordinator does not
  // list (launched after the backup: a stray it rightly stops; a note says so). The coordinator's
  // own node is left out: its pods' dirs went with the wipe (a note says what became of them).
  void halt_costs_nothing() {
    for (size_t i = 0; i < faults.size(); ++i) {
      const auto& f = faults[i];
      if (f.kind != FaultKind::WipeCoordinator || !f.wiped_up_ns) continue;
      const int64_t from = f.wiped_up_ns, to = f.restore_ns ? f.restore_ns : now_ns();
      const int64_t after = f.restored_ns ? f.restored_ns + 3 * kSec : to;
      const std::string what = "fault " + std::to_string(i + 1) + " wipe-coordinator";
      const std::string when = " during the halt (" + fmt_s(from) + " .. " + fmt_s(to) + ")";
      std::string on_coordinator, strays;
      for (const auto& [uid, runs] : log.by_uid)
        for (const auto& r : runs) {
          const int64_t stop_ns = r.has_end ? (r.end_how == "term" ? r.end_ns : 0) : r.gone_ns;
          const bool stopped = r.start_ns < to && stop_ns > from && stop_ns <= after;
          const bool started = r.start_ns > from && r.start_ns < to;
          if (!stopped && !started) continue;
          if (r.node == node_name_of(f.node)) {
            on_coordinator += " " + run_text(r) + (started ? " started;" : " stopped;");
            continue;
          }
          if (started || stop_ns <= to) {
            report.violation(what + ": pod " + run_text(r) +
                             (started ? " started" : " was stopped") + when);
            continue;
          }
          auto seen = obs.pods.find(uid);
          if (seen == obs.pods.end() || seen->second.last_seen_ns < f.restored_ns) {
            strays += " " + run_text(r) + ";";
            continue;
          }
          report.violation(what + ": pod " + run_text(r) + " was stopped " +
                           std::to_string((stop_ns - to) / kMs) +
                           " ms after the restore began, though the restored coordinator knows "
                           "it (it reports it " +
                           seen->second.phase +
                           (seen->second.reason.empty() ? "" : " " + seen->second.reason) + ")");
        }
      if (!on_coordinator.empty())
        report.note(what + ": on the coordinator's own node," + when.substr(1) + ":" +
                    on_coordinator);
      if (!strays.empty())
        report.note(what + ": stopped after the restore, unknown to the restored coordinator " +
                    "(launched after the backup):" + strays);
    }
  }

  // Real-pod gangs: every attempt (job version) that started any pod of its first gang started all
  // of them, within a few seconds of each other, unless a fault on its nodes fell then; a task
  // that depends on another starts only once that one's pods have started.
  void gangs_whole() {
    struct Start {
      const PodRun* run;
      const TaskPlan* task;
      int index;
    };
    std::map<std::pair<std::string, int64_t>, std::vector<Start>> attempts;
    int unmapped = 0;
    for (const auto& [uid, runs] : log.by_uid) {
      auto seen = obs.pods.find(uid);
      for (const auto& r : runs) {
        auto parsed = parse_pod(r.pod);
        if (!parsed) continue;
        auto [job, task, index] = *parsed;
        int64_t version = seen != obs.pods.end() ? seen->second.version : -1;
        if (version < 0) ++unmapped;
        attempts[{job->name, version}].push_back({&r, task, index});
      }
    }
    if (unmapped)
      report.note(
          std::to_string(unmapped) +
          " real pod start(s) whose job version no poll saw (checked as one group per job)");
    for (const auto& [key, starts] : attempts) {
      const auto& [job_name, version] = key;
      const JobPlan* job = job_plan(job_name);
      if (!job || version < 0) continue;
      const TaskPlan& first = job->tasks.front();
      std::set<int> first_started;
      int64_t t_min = INT64_MAX, t_max = 0;
      std::set<std::string> nodes;
      for (const auto& s : starts) {
        nodes.insert(s.run->node);
        if (s.task != &first) continue;
        first_started.insert(s.index);
        t_min = std::min(t_min, s.run->start_ns);
        t_max = std::max(t_max, s.run->start_ns);
      }
      // The nodes the attempt's pods were bound to, started or not.
      for (const auto& [uid, p] : obs.pods)
        if (p.job == job_name && p.version == version && !p.node.empty()) nodes.insert(p.node);
      auto excused = [&](int64_t from, int64_t to) {
        for (const auto& f : faults)
          if (overlaps(from, to, f.inject_ns, f.window_end()) &&
              (coordinator_fault(f.kind) || nodes.count(node_name(f))))
            return true;
        return false;
      };
      std::string what = "job " + job_name + " version " + std::to_string(version);
      if (!first_started.empty()) {
        bool whole = static_cast<int>(first_started.size()) == first.replicas;
        bool together = t_max - t_min <= 5 * kSec;
        if ((!whole || !together) && !excused(t_min - 3 * kSec, t_max + 10 * kSec)) {
          report.violation(what + ": gang task " + first.name + " started " +
                           std::to_string(first_started.size()) + " of " +
                           std::to_string(first.replicas) + " pods, over " +
                           std::to_string((t_max - t_min) / kMs) + " ms from " + fmt_s(t_min) +
                           ", with no fault on its nodes then");
        }
      }
      for (const auto& s : starts) {
        if (!s.task->depends) continue;
        int before = 0;
        for (const auto& a : starts)
          if (a.task == &first && a.run->start_ns <= s.run->start_ns + 300 * kMs) ++before;
        if (before < first.replicas)
          report.violation(what + ": " + s.run->pod + " started at " + fmt_s(s.run->start_ns) +
                           " when only " + std::to_string(before) + " of the " +
                           std::to_string(first.replicas) + " pods of task " + first.name +
                           " it depends on had started");
      }
    }
  }
};

// ---- wipe-coordinator ----

// Everything in a node's data dir goes (its store, its pods' dirs, its port file), but
// calderad.log: the driver's capture of what the node printed, not the node's data.
std::string wipe_data_dir(const std::string& dir) {
  std::string failed;
  for (int attempt = 0; attempt < 5; ++attempt) {
    std::error_code ec;
    std::vector<fs::path> entries;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().filename() != "calderad.log") entries.push_back(it->path());
    if (ec) return "cannot list " + dir + ": " + ec.message();
    failed.clear();
    for (const auto& e : entries) {
      std::error_code rm;
      fs::remove_all(e, rm);  // a pod's supervisor may still write in its dir: tried again
      if (rm) failed = e.string() + ": " + rm.message();
    }
    if (failed.empty()) return "";
    std::this_thread::sleep_for(100ms);
  }
  return "cannot wipe " + dir + ": " + failed;
}

std::string move_aside(const std::string& from, const std::string& to) {
  std::error_code ec;
  if (!fs::exists(from, ec)) return "";
  fs::rename(from, to, ec);
  return ec ? "cannot move " + from + " aside to " + to + ": " + ec.message() : "";
}

// A refusal of a halted coordinator: it names the lost store.
bool refused_as_halted(const CommandResult& r) {
  return r.exit_code != 0 && r.err.find("coordinator's store") != std::string::npos;
}

// After the kill and the wipe: the coordinator starts again on its empty data dir, as before.
// Once a worker registers, presenting the cluster's id, it halts: every client request but ping
// and listNodes is refused with an error that names the lost store and says how to restore it
// (asked of it, and of each worker, which passes requests on). It stays so for down_ms from then,
// and still is at the end. Until a worker registered it answers from its empty store: a note says
// how long. False when it could not be started: the run ends.
bool halt_after_wipe(Cluster& cluster, Partitioner& part, Fault& f, size_t number, Report& report) {
  const std::string what = "fault " + std::to_string(number) + " wipe-coordinator";
  try {
    cluster.start(f.node, part);
  } catch (const std::exception& e) {
    report.violation(what + ": the coordinator did not start again on its wiped data dir: " +
                     first_line(e.what()));
    return false;
  }
  f.wiped_up_ns = now_ns();
  int answered = 0;
  int64_t answered_until = 0;
  std::string last, refusal;
  bool halted = wait_for(
      [&] {
        auto r = cluster.cli_at(f.node, {"get", "jobs"});
        if (r.exit_code == 0) {
          ++answered;
          answered_until = now_ns();
          last = "answered";
          return false;
        }
        last = first_line(r.err);
        if (!refused_as_halted(r)) return false;
        refusal = r.err;
        return true;
      },
      20s);
  if (answered)
    report.note(what + ": the coordinator on its wiped data dir answered get jobs " +
                std::to_string(answered) + " time(s), from its empty store, until " +
                std::to_string((answered_until - f.wiped_up_ns) / kMs) + " ms after it was up" +
                (halted ? ", before it halted" : ""));
  if (!halted) {
    report.violation(what + ": the coordinator restarted on its wiped data dir did not halt " +
                     "within 20 s (get jobs: " + last + ")");
    nap(std::chrono::milliseconds(f.down_ms));
    return true;
  }
  f.halted_ns = now_ns();
  say("  halted %lld ms after it was up again: get jobs refused: %s",
      static_cast<long long>((f.halted_ns - f.wiped_up_ns) / kMs), first_line(refusal).c_str());
  if (refusal.find("--restore-from") == std::string::npos)
    report.violation(what + ": the halted coordinator's refusal does not say how to restore " +
                     "its store (calderad --restore-from): " + first_line(refusal));
  for (int i = 0; i < cluster.size(); ++i) {
    if (i == f.node) continue;
    CommandResult r;
    if (!wait_for(
            [&] {
              r = cluster.cli_at(i, {"get", "jobs"});
              return refused_as_halted(r);
            },
            5s))
      report.violation(what + ": get jobs at " + cluster.spec(i).name +
                       (r.exit_code == 0
                            ? std::string(" answered")
                            : " failed without naming the lost store: " + first_line(r.err)) +
                       " while the coordinator was halted");
  }
  nap_until_ns(f.halted_ns + f.down_ms * kMs);
  if (g_abort) return true;
  auto r = cluster.cli_at(f.node, {"get", "jobs"});
  if (!refused_as_halted(r))
    report.violation(what + ": the coordinator was no longer halted " +
                     std::to_string((now_ns() - f.halted_ns) / kMs) +
                     " ms after it halted (get jobs " +
                     (r.exit_code == 0 ? std::string("answered") : first_line(r.err)) + ")");
  return true;
}

int run(int argc, char** argv) {
  uint64_t seed = 1;
  double minutes = 0, seconds = 0;
  int n_nodes = 3;
  int drain_s = 240;
  std::string work_dir;
  bool keep = false;
  CLI::App app{"caldera chaos driver: seeded jobs and node faults on a real cluster, then checks"};
  app.add_option("--seed", seed, "seed of the jobs and faults (default 1)");
  app.add_option("--minutes", minutes, "how long jobs are submitted and faults injected");
  app.add_option("--seconds", seconds, "the same in seconds (default 120)");
  app.add_option("--nodes", n_nodes, "nodes in the cluster, node-1 the coordinator (default 3)")
      ->check(CLI::Range(2, 9));
  app.add_option("--drain-seconds", drain_s,
                 "afterwards, how long to wait for every job to end (default 240)");
  app.add_option("--work-dir", work_dir, "an empty directory to run in (default: a new /tmp dir)");
  app.add_flag("--keep", keep, "keep the work directory (kept anyway when there are violations)");
  std::vector<std::string> fault_names;
  for (auto k : kAllFaultKinds) fault_names.push_back(to_string(k));
  app.add_option("--faults", fault_names,
                 "the kinds of fault to inject (default all: kill-worker stop-long stop-short "
                 "partition-worker kill-coordinator pause-coordinator wipe-coordinator; none for "
                 "none); the seeded "
                 "schedule is the same, the other kinds are left out. partition-worker needs "
                 "iptables (with its cgroup and connmark matches), a cgroup v2 tree and root; "
                 "without them it is skipped, with a line saying why")
      ->delimiter(',');
  bool dry_run = false;
  app.add_flag("--dry-run", dry_run, "print the seeded plan (jobs, fault kinds) and exit");
  CLI11_PARSE(app, argc, argv);
  const int64_t run_ms = static_cast<int64_t>(1000 * (seconds > 0   ? seconds
                                                      : minutes > 0 ? minutes * 60
                                                                    : 120));

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  // A reader of the output that goes away ends the run cleanly (a handler, unlike SIG_IGN, is not
  // inherited by the nodes and pods).
  struct sigaction pipe_sa {};
  pipe_sa.sa_handler = on_sigpipe;
  sigaction(SIGPIPE, &pipe_sa, nullptr);

  std::set<FaultKind> allowed;
  for (const auto& name : fault_names) {
    bool known = false;
    for (auto k : kAllFaultKinds)
      if (name == to_string(k)) {
        allowed.insert(k);
        known = true;
      }
    if (!known && name != "none") {
      std::fprintf(stderr, "chaos: --faults: unknown kind '%s'\n", name.c_str());
      return 2;
    }
  }
  if (work_dir.empty()) {
    std::string tmpl = (fs::temp_directory_path() / "caldera-chaos-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    work_dir = tmpl;
  } else {
    fs::create_directories(work_dir);
    work_dir = fs::absolute(work_dir).lexically_normal().string();
  }
  const std::string run_file = work_dir + "/runs.log";
  std::ofstream(run_file).flush();

  // Partitions need iptables and cgroups: checked first, and left out (one line says why) when
  // they cannot be had. `part` outlives the cluster: its chain and cgroups go once the nodes did.
  Partitioner part;
  if (allowed.count(FaultKind::PartitionWorker) && !dry_run) {
    if (auto why = part.setup(n_nodes); !why.empty()) {
      std::printf("chaos: partition-worker skipped: %s\n", why.c_str());
      std::fflush(stdout);
      part.teardown();
      allowed.erase(FaultKind::PartitionWorker);
    }
  }

  t0_ns = now_ns();
  Plan plan = make_plan(seed, run_ms, n_nodes, run_file, allowed);
  Report report;
  std::vector<Fault> injected;
  injected.reserve(plan.faults.size());  // the monitor holds pointers into it
  Observations obs;
  if (dry_run) {
    for (const auto& j : plan.jobs) {
      std::string tasks;
      for (const auto& t : j.tasks)
        tasks += " " + t.name + "=" + std::to_string(t.replicas) + "x" +
                 std::to_string(t.cpu_milli) + "m/" + std::to_string(t.duration_ms) + "ms" +
                 (t.depends ? "(dependsOn)" : "");
      std::printf("job %-16s at %6.2fs minAvailable %d%s\n", j.name.c_str(),
                  static_cast<double>(j.at_ns) / 1e9, j.min_available, tasks.c_str());
    }
    int64_t at = 0;
    for (const auto& f : plan.faults) {
      at += f.gap_ms + f.down_ms;
      if (at > run_ms) break;
      std::printf("fault %-16s node-%d down %lld ms (after a %lld ms pause)\n", to_string(f.kind),
                  f.node + 1, static_cast<long long>(f.down_ms), static_cast<long long>(f.gap_ms));
    }
    fs::remove_all(work_dir);
    return 0;
  }
  std::printf("chaos: seed %llu, %d nodes of %d cpu, %.0f s of jobs and faults, work dir %s\n",
              static_cast<unsigned long long>(seed), n_nodes, kNodeCpuMilli / 1000,
              static_cast<double>(run_ms) / 1000, work_dir.c_str());
  std::fflush(stdout);

  {
    Cluster cluster(work_dir, n_nodes);
    if (part.ready())
      if (auto e = part.arm("127.0.0.1", cluster.spec(0).cluster_port); !e.empty())
        say("partition-worker skipped: %s", e.c_str());
    try {
      for (int i = 0; i < n_nodes; ++i) {
        cluster.start(i, part);
        cluster.set_up(i, true);
      }
    } catch (const std::exception& e) {
      report.violation(std::string("the cluster did not start: ") + e.what());
    }
    if (report.violations.empty() && !wait_for([&] { return cluster.all_ready(); }, 60s))
      report.violation("the nodes were not all Ready 60 s after they started");
    // Each worker's connection must carry its mark, or a cut would cut nothing.
    bool partitions = part.ready() && report.violations.empty();
    if (partitions)
      if (auto e = part.check_marks(10s); !e.empty()) {
        say("partition-worker skipped: %s", e.c_str());
        partitions = false;
      }
    t0_ns = now_ns();
    say("cluster up: %d nodes; %zu jobs planned", n_nodes, plan.jobs.size());

    const bool started = report.violations.empty();
    std::atomic<bool> stop_monitor{false}, stop_watch{false};
    std::thread monitor_thread, submit_thread, watch_thread;
    PidWatch watch(run_file);
    SubmitGate gate;
    if (started) {
      monitor_thread = std::thread([&] { monitor(cluster, obs, stop_monitor); });
      submit_thread = std::thread([&] { submitter(cluster, obs, plan.jobs, gate); });
      watch_thread = std::thread([&] { watch.run(stop_watch); });
    }

    // The faults, one at a time, each once the cluster is whole again.
    int64_t last_ready = t0_ns;
    for (size_t fi = 0; started && fi < plan.faults.size() && !g_abort; ++fi) {
      Fault f = plan.faults[fi];
      if (f.kind == FaultKind::PartitionWorker && !partitions) continue;
      nap_until_ns(last_ready + f.gap_ms * kMs);
      if (now_ns() + f.down_ms * kMs > t0_ns + run_ms * kMs || g_abort) break;
      if (!wait_for([&] { return cluster.all_ready(); }, 60s)) {
        report.violation("before fault " + std::to_string(fi + 1) +
                         ": the nodes were not all Ready within 60 s");
        break;
      }
      const std::string node = cluster.spec(f.node).name;
      // A wipe holds the submissions from before its backup until the restored coordinator
      // answers: a job acknowledged after the backup would be lost by the restore, rightly.
      std::optional<SubmitHold> hold;
      if (f.kind == FaultKind::WipeCoordinator) hold.emplace(gate);
      // Which jobs it should disturb: those with live pods on the node (all running ones for the
      // coordinator).
      auto pods = get_items(cluster, "pods", f.node);
      auto jobs = get_items(cluster, "jobs", f.node);
      if (pods) update_pods(obs, *pods, now_ns());  // where every live pod is as the fault hits
      std::map<std::string, int64_t> version_of;
      std::set<std::string> running_jobs;
      if (jobs)
        for (const auto& j : *jobs) {
          version_of[j["metadata"]["name"]] = j["status"].value("version", 0);
          if (j["status"]["state"]["phase"] == "Running")
            running_jobs.insert(j["metadata"]["name"]);
        }
      if (coordinator_fault(f.kind)) {
        for (const auto& j : running_jobs) f.affected[j] = version_of[j];
      } else if (f.kind != FaultKind::StopShort && pods) {
        for (const auto& p : *pods) {
          std::string phase = p["status"]["phase"];
          if (p["spec"].value("nodeName", "") != node || (phase != "Running" && phase != "Pending"))
            continue;
          std::string job = p["metadata"]["labels"].value("volcano.sh/job-name", "");
          if (version_of.count(job)) f.affected[job] = version_of[job];
        }
      }

      // The operator's backup, taken while the coordinator runs, just before its store is lost.
      if (f.kind == FaultKind::WipeCoordinator) {
        f.backup = work_dir + "/backup-" + std::to_string(fi + 1);
        auto r = cluster.cli_at(f.node, {"admin", "backup", f.backup});
        if (r.exit_code != 0) {
          report.violation("fault " + std::to_string(fi + 1) +
                           " wipe-coordinator: caldera admin backup failed: " + first_line(r.err));
          break;
        }
      }

      cluster.set_up(f.node, false);
      f.inject_ns = now_ns();
      f.injected = true;
      std::string failed;
      switch (f.kind) {
        case FaultKind::KillWorker:
        case FaultKind::KillCoordinator:
          cluster.kill9(f.node);
          break;
        case FaultKind::WipeCoordinator:
          cluster.kill9(f.node);
          failed = wipe_data_dir(cluster.data_dir(f.node));
          break;
        case FaultKind::StopLong:
        case FaultKind::StopShort:
        case FaultKind::PauseCoordinator:
          cluster.node(f.node).signal(SIGSTOP);
          break;
        case FaultKind::PartitionWorker:
          failed = part.cut(f.node);
          break;
      }
      if (!failed.empty()) {
        report.violation("fault " + std::to_string(fi + 1) + " " + to_string(f.kind) + " of " +
                         node + ": " + failed);
        if (f.kind == FaultKind::WipeCoordinator) try {  // killed: back, for the drain
            cluster.start(f.node, part);
          } catch (const std::exception&) {
          }
        cluster.set_up(f.node, true);
        break;
      }
      {
        std::lock_guard lock(obs.mu);
        injected.push_back(f);
      }
      Fault& live = injected.back();  // recoveries point here: `injected` never reallocates
      say("fault %zu: %s %s for %lld ms (%zu jobs to run again)", fi + 1, to_string(f.kind),
          node.c_str(), static_cast<long long>(f.down_ms), f.affected.size());
      {
        std::lock_guard lock(obs.mu);
        for (const auto& [job, v] : live.affected)
          obs.recoveries.push_back({&live, job, v, coordinator_fault(f.kind)});
      }

      // A wipe: the coordinator starts again on its empty data dir, and halts (down_ms of it).
      if (f.kind == FaultKind::WipeCoordinator &&
          !halt_after_wipe(cluster, part, live, fi + 1, report))
        break;
      // Detection: the node NotReady in `get nodes` at another node, polled every 100 ms. A
      // worker's kill, long stop or partition lasts until it is seen (20 s at most).
      const int64_t planned_end = live.inject_ns + live.down_ms * kMs;
      const bool wait_detection = worker_loss(f.kind);
      while (!g_abort && f.kind != FaultKind::WipeCoordinator) {
        int64_t t = now_ns();
        if (t >= planned_end && (!wait_detection || live.detected)) break;
        if (t >= live.inject_ns + 20 * kSec) break;
        if (!coordinator_fault(f.kind) && !live.detected) {
          auto r = cluster.readiness(f.node);
          if (r && r->count(node) && !r->at(node)) {
            live.detected = true;
            live.detect_ns = now_ns();
            say("  %s NotReady after %lld ms", node.c_str(),
                static_cast<long long>((live.detect_ns - live.inject_ns) / kMs));
          }
        }
        nap(100ms);
      }
      if (wait_detection && !live.detected)
        report.violation(std::string(to_string(f.kind)) + " of " + node + " at " +
                         fmt_s(live.inject_ns) + ": not seen NotReady within 20 s");
      live.restore_ns = now_ns();
      try {
        switch (f.kind) {
          case FaultKind::KillWorker:
          case FaultKind::KillCoordinator:
            cluster.start(f.node, part);
            break;
          case FaultKind::StopLong:
          case FaultKind::StopShort:
          case FaultKind::PauseCoordinator:
            cluster.node(f.node).signal(SIGCONT);
            break;
          case FaultKind::PartitionWorker:
            if (auto e = part.heal(f.node); !e.empty()) throw std::runtime_error(e);
            break;
          case FaultKind::WipeCoordinator:
            // The halted one goes, and its new empty store aside (a restore never overwrites a
            // store): then the backup.
            cluster.kill9(f.node);
            if (auto e = move_aside(cluster.data_dir(f.node) + "/db",
                                    work_dir + "/halted-store-" + std::to_string(fi + 1));
                !e.empty())
              throw std::runtime_error(e);
            cluster.start(f.node, part, {"--restore-from", live.backup});
            break;
        }
        cluster.set_up(f.node, true);
      } catch (const std::exception& e) {
        report.violation(node + " did not come back after " + to_string(f.kind) + ": " + e.what());
        break;
      }
      // Restored: once it answers for its jobs, the submissions go on.
      if (f.kind == FaultKind::WipeCoordinator) {
        std::string last;
        bool answers = wait_for(
            [&] {
              auto r = cluster.cli_at(f.node, {"get", "jobs"});
              last = first_line(r.err);
              return r.exit_code == 0;
            },
            30s);
        if (!answers) {
          report.violation("fault " + std::to_string(fi + 1) + " wipe-coordinator: restored from " +
                           live.backup +
                           ", the coordinator did not answer get jobs within 30 s: " + last);
          break;
        }
        {
          std::lock_guard lock(obs.mu);
          live.restored_ns = now_ns();
        }
        hold.reset();
        say("  restored from its backup: get jobs answered %lld ms after the restore began; "
            "submissions resume",
            static_cast<long long>((live.restored_ns - live.restore_ns) / kMs));
      }
      // A short stop: watch a little longer for a late NotReady. A coordinator's pause: whether
      // it judged any node NotReady when it woke (it should not: it notices its own stall).
      if (f.kind == FaultKind::StopShort || f.kind == FaultKind::PauseCoordinator) {
        const bool pause = f.kind == FaultKind::PauseCoordinator;
        auto until = now_ns() + (pause ? 2 : 1) * kSec;
        std::string seen;
        int64_t all_ready = 0;  // when every node was first seen Ready after the pause
        while (!live.detected && now_ns() < until && !g_abort) {
          // After a pause, asked of the coordinator itself: a worker that dropped its link
          // answers nothing until it is back.
          auto r = pause ? cluster.readiness(-1, 0) : cluster.readiness(f.node);
          for (const auto& [name, ready] : r ? *r : std::map<std::string, bool>{})
            if (!ready && (pause || name == node)) seen += (seen.empty() ? "" : ",") + name;
          if (!seen.empty()) {
            live.detected = true;
            live.detect_ns = now_ns();
          } else if (r && static_cast<int>(r->size()) == cluster.size() && !all_ready) {
            all_ready = now_ns();
          }
          nap(100ms);
        }
        if (pause && !live.detected && all_ready) {
          std::lock_guard lock(obs.mu);  // the monitor reads it
          live.ready_ns = all_ready;
        }
        if (live.detected && !pause)
          say("  %s seen NotReady %lld ms into a %lld ms stop", node.c_str(),
              static_cast<long long>((live.detect_ns - live.inject_ns) / kMs),
              static_cast<long long>(live.down_ms));
        if (live.detected && pause) {
          say("  %s seen NotReady %lld ms after a %lld ms pause of the coordinator began",
              seen.c_str(), static_cast<long long>((live.detect_ns - live.inject_ns) / kMs),
              static_cast<long long>(live.down_ms));
          report.note("fault " + std::to_string(fi + 1) + " pause-coordinator at " +
                      fmt_s(live.inject_ns) + ": " + seen + " seen NotReady " +
                      std::to_string((live.detect_ns - live.inject_ns) / kMs) +
                      " ms after it began, by the coordinator (fine while no lease ran out: "
                      "nothing is evicted then)");
        }
      }
      if (!wait_for([&] { return cluster.all_ready(); }, 60s)) {
        report.violation(node + " not Ready again within 60 s of its " + to_string(f.kind) +
                         " ending");
        break;
      }
      {
        std::lock_guard lock(obs.mu);  // the monitor reads it
        last_ready = now_ns();
        if (!live.ready_ns) live.ready_ns = last_ready;
      }
      say("  back: every node Ready %lld ms after the fault ended",
          static_cast<long long>((live.ready_ns - live.restore_ns) / kMs));
      if (injected.size() == injected.capacity()) break;  // never reallocate under the monitor
    }
    say("faults over: %zu injected", injected.size());
    if (submit_thread.joinable()) submit_thread.join();
    say("submissions over");

    // Every acknowledged job ends: wait until they all have, or nothing changed for 60 s.
    int64_t drain_start = now_ns(), changed_at = drain_start;
    std::string last_signature;
    bool ended = false;
    while (started && !g_abort && now_ns() < drain_start + static_cast<int64_t>(drain_s) * kSec) {
      const int64_t sent = now_ns();
      auto jobs = get_items(cluster, "jobs");
      if (jobs) {
        update_jobs(obs, *jobs, sent, now_ns());
        std::string signature;
        for (const auto& j : *jobs)
          signature += j["metadata"]["name"].get<std::string>() + ":" +
                       j["status"]["state"]["phase"].get<std::string>() + ":" +
                       std::to_string(j["status"].value("version", 0)) + " ";
        if (signature != last_signature) {
          last_signature = signature;
          changed_at = now_ns();
        }
        std::lock_guard lock(obs.mu);
        ended = std::all_of(obs.jobs.begin(), obs.jobs.end(), [](const auto& kv) {
          return !kv.second.acked || terminal_phase(kv.second.phase);
        });
      }
      if (ended) break;
      if (now_ns() - changed_at > 60 * kSec) {
        say("drain: no job changed phase or version for 60 s: giving up");
        break;
      }
      nap(1000ms);
    }
    say("drain: every job %s after %.1f s", ended ? "ended" : "had NOT ended",
        static_cast<double>(now_ns() - drain_start) / 1e9);
    stop_monitor = true;
    if (monitor_thread.joinable()) monitor_thread.join();

    // Once every job ended nothing stays allocated on a node and no pod stays live (15 s to
    // settle).
    if (ended) {
      std::string leak;
      bool clean = wait_for(
          [&] {
            leak.clear();
            auto nodes = get_items(cluster, "nodes");
            auto pods = get_items(cluster, "pods");
            if (!nodes || !pods) {
              leak = " get nodes/pods failed";
              return false;
            }
            for (const auto& n : *nodes) {
              const auto& alloc = n["status"]["allocated"];
              auto cpu = alloc.value("cpu", "0");
              auto pods_n = alloc.value("pods", "0");
              if (cpu_milli(cpu) != 0 || pods_n != "0")
                leak += " " + n["metadata"]["name"].get<std::string>() + " allocated cpu=" + cpu +
                        " pods=" + pods_n + ";";
            }
            int live = 0;
            for (const auto& p : *pods) {
              std::string phase = p["status"]["phase"];
              if (phase != "Running" && phase != "Pending") continue;
              if (++live <= 5)
                leak += " pod " + p["metadata"]["name"].get<std::string>() + " " + phase + " on " +
                        p["spec"].value("nodeName", "<none>") + ";";
            }
            if (live > 5) leak += " and " + std::to_string(live - 5) + " more live pods";
            return leak.empty();
          },
          15s);
      if (!clean) report.violation("every job ended, yet 15 s later:" + leak);
    }

    // The final state, also kept in the work dir; not asked for after an interrupt (an interrupt
    // from the terminal stopped the nodes too, and the CLI would retry each for 30 s).
    std::optional<json> final_jobs, final_pods, final_nodes;
    if (!g_abort) {
      final_jobs = get_items(cluster, "jobs");
      final_pods = get_items(cluster, "pods");
      final_nodes = get_items(cluster, "nodes");
    }
    if (final_jobs) std::ofstream(work_dir + "/jobs.json") << final_jobs->dump(2);
    if (final_pods) std::ofstream(work_dir + "/pods.json") << final_pods->dump(2);
    if (final_nodes) {
      std::ofstream(work_dir + "/nodes.json") << final_nodes->dump(2);
      if (!ended) {
        std::string alloc;
        for (const auto& n : *final_nodes)
          alloc += " " + n["metadata"]["name"].get<std::string>() + " " +
                   (n["status"]["conditions"][0]["status"] == "True" ? "Ready" : "NotReady") +
                   " cpu " + n["status"]["allocated"].value("cpu", "?") + "/" +
                   n["status"]["capacity"].value("cpu", "?") + ";";
        report.note("nodes at the end:" + alloc);
      }
    }
    if (final_pods) update_pods(obs, *final_pods, now_ns());
    if (!final_jobs && started) report.violation("get jobs failed at the end");
    // The pods' processes have all ended by now; wait a little for any END line still coming.
    nap(500ms);
    stop_watch = true;
    if (watch_thread.joinable()) watch_thread.join();
    RunLog log = read_run_log(run_file, watch.seen());
    if (log.malformed) report.note(std::to_string(log.malformed) + " malformed run-log lines");
    Checker check{plan, injected, obs, log, report, cluster};
    if (g_abort) {
      report.violations.assign({"the run was interrupted: nothing was checked"});
    } else {
      if (final_jobs) {
        check.jobs_exist_and_ended(*final_jobs);
        check.retries_plausible();
      }
      check.uids_ran_once();
      check.no_pod_alive_twice();
      check.succeeded_pods_not_rerun();
      check.no_overcommit();
      check.gangs_whole();
      check.pods_end_with_their_lease();
      check.pause_costs_nothing();
      check.halt_costs_nothing();
      check.outcomes_match_runs();
    }

    // Figures.
    std::map<std::string, int> kinds;
    std::vector<double> detect_ms, worker_recovery, coord_recovery, pause_recovery, wipe_recovery;
    // Worker-loss recovery, one figure per fault: to the first of its jobs Running again.
    std::vector<double> loss_recovery;
    std::map<std::string, std::vector<double>> loss_recovery_by_kind;
    int short_detected = 0, ended_instead = 0, open_recoveries = 0, loss_no_job = 0,
        loss_none_ran = 0;
    for (const auto& f : injected) {
      ++kinds[to_string(f.kind)];
      if (f.detected && worker_loss(f.kind))
        detect_ms.push_back(static_cast<double>(f.detect_ns - f.inject_ns) / kMs);
      if (f.detected && f.kind == FaultKind::StopShort) ++short_detected;
      auto& into = f.kind == FaultKind::KillCoordinator    ? coord_recovery
                   : f.kind == FaultKind::PauseCoordinator ? pause_recovery
                   : f.kind == FaultKind::WipeCoordinator  ? wipe_recovery
                                                           : worker_recovery;
      into.insert(into.end(), f.recovery_ms.begin(), f.recovery_ms.end());
      ended_instead += static_cast<int>(f.ended.size());
      if (!worker_loss(f.kind)) continue;
      if (f.affected.empty()) {
        ++loss_no_job;
      } else if (f.recovery_ms.empty()) {
        ++loss_none_ran;
      } else {
        double first = *std::min_element(f.recovery_ms.begin(), f.recovery_ms.end());
        loss_recovery.push_back(first);
        loss_recovery_by_kind[to_string(f.kind)].push_back(first);
      }
    }
    open_recoveries = static_cast<int>(obs.recoveries.size());
    int acked = 0, late = 0, completed = 0, failed = 0, retries = 0, real_pods = 0, no_end = 0;
    for (const auto& p : plan.jobs) {
      const auto& j = obs.jobs[p.name];
      if (!j.acked) continue;
      ++acked;
      late += j.late_ack;
      completed += j.phase == "Completed";
      failed += j.phase == "Failed";
      retries += static_cast<int>(j.retry);
    }
    int watched_end = 0;
    for (const auto& [uid, runs] : log.by_uid)
      for (const auto& r : runs) {
        ++real_pods;
        no_end += !r.has_end;
        watched_end += !r.has_end && r.gone_ns;
      }
    if (no_end)
      report.note(std::to_string(no_end) + " real pod run(s) without an END line (" +
                  std::to_string(watched_end) + " of them seen gone by the /proc watch)");
    if (short_detected)
      report.note(std::to_string(short_detected) +
                  " stop(s) shorter than the heartbeat timeout were seen NotReady");
    if (open_recoveries)
      report.note(std::to_string(open_recoveries) +
                  " job(s) a fault hit were never seen running again (ended between polls?)");

    std::printf("\n---- faults ----\n");
    for (size_t i = 0; i < injected.size(); ++i) {
      const auto& f = injected[i];
      std::string line = "fault " + std::to_string(i + 1) + " " + to_string(f.kind) + " " +
                         node_name_of(f.node) + " at " + fmt_s(f.inject_ns) + ", down " +
                         std::to_string((f.restore_ns - f.inject_ns) / kMs) + " ms";
      if (f.detected)
        line += ", NotReady after " + std::to_string((f.detect_ns - f.inject_ns) / kMs) + " ms";
      if (f.kind == FaultKind::WipeCoordinator) {
        if (f.halted_ns)
          line += ", halted " + std::to_string((f.halted_ns - f.inject_ns) / kMs) +
                  " ms after the kill";
        if (f.restored_ns)
          line += ", restored (answering) " + std::to_string((f.restored_ns - f.restore_ns) / kMs) +
                  " ms after the halt ended";
      }
      if (f.ready_ns && f.kind != FaultKind::StopShort)
        line += ", all Ready " + std::to_string((f.ready_ns - f.restore_ns) / kMs) +
                " ms after it ended";
      if (!f.affected.empty()) {
        line += "; " + std::to_string(f.affected.size()) + " job(s) hit";
        if (!f.recovery_ms.empty()) {
          line += ", running again after";
          for (size_t k = 0; k < f.recovery_ms.size(); ++k)
            line += std::string(k ? "," : "") + " " + f.recovered[k] + " " +
                    std::to_string(static_cast<int64_t>(f.recovery_ms[k])) + " ms";
        }
        if (!f.ended.empty()) {
          line += " (ended instead:";
          for (const auto& e : f.ended) line += " " + e;
          line += ")";
        }
      }
      std::printf("%s\n", line.c_str());
    }
    std::string kind_list;
    for (const auto& [k, n] : kinds) kind_list += " " + k + "=" + std::to_string(n);
    std::printf("\n---- figures ----\n");
    std::printf("faults: %zu (%s)\n", injected.size(),
                kind_list.empty() ? " none" : kind_list.c_str());
    std::printf(
        "jobs: %zu planned, %d acknowledged (%d after a lost answer), %d completed, %d failed,"
        " %d restarts in all\n",
        plan.jobs.size(), acked, late, completed, failed, retries);
    std::printf("real pod runs: %d (%zu OVERLAP marks); polls: %d of jobs, %d of pods, %d failed\n",
                real_pods, log.overlaps.size(), obs.job_polls, obs.pod_polls, obs.failed_polls);
    std::printf("detection (worker kill / long stop / partition -> NotReady in get nodes): %s\n",
                figures(detect_ms).c_str());
    std::string by_kind;
    for (const auto& [kind, ms] : loss_recovery_by_kind) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s%s n=%zu median=%.0f ms", by_kind.empty() ? "" : ", ",
                    kind.c_str(), ms.size(), percentile(ms, 0.5));
      by_kind += buf;
    }
    std::printf(
        "worker-loss recovery (worker kill / long stop / partition -> the first job that had a "
        "pod on the worker Running again, at a new version or once every node is Ready): %s "
        "faults%s%s%s\n",
        figures(loss_recovery).c_str(), by_kind.empty() ? "" : (" (" + by_kind + ")").c_str(),
        loss_no_job ? ("; " + std::to_string(loss_no_job) + " hit no job").c_str() : "",
        loss_none_ran
            ? ("; " + std::to_string(loss_none_ran) + " whose jobs all ended instead").c_str()
            : "");
    std::printf(
        "recovery per job (worker fault -> that job Running again): %s%s\n",
        figures(worker_recovery).c_str(),
        ended_instead ? (", " + std::to_string(ended_instead) + " ended instead").c_str() : "");
    std::printf("recovery (coordinator kill -> its running jobs Running again): %s\n",
                figures(coord_recovery).c_str());
    std::printf("recovery (coordinator pause -> its running jobs Running again): %s\n",
                figures(pause_recovery).c_str());
    std::printf(
        "recovery (coordinator wipe, halt and restore -> its running jobs Running again): %s\n",
        figures(wipe_recovery).c_str());
    if (!report.notes.empty()) {
      std::printf("notes:\n");
      for (const auto& n : report.notes) std::printf("  - %s\n", n.c_str());
    }
    if (!report.violations.empty()) {
      std::printf("VIOLATIONS:\n");
      for (const auto& v : report.violations) std::printf("  ! %s\n", v.c_str());
      if (!g_abort || keep)
        std::printf("work dir kept: %s (node logs: <node>/calderad.log; pods: runs.log)\n",
                    work_dir.c_str());
    }
    std::fflush(stdout);
    // `cluster` stops the nodes here.
  }
  bool keep_dir = keep || (!report.violations.empty() && !g_abort);
  kill_processes_under(work_dir);
  part.teardown();  // the rules and cgroups, once their processes are gone
  if (!keep_dir) {
    std::error_code ec;
    fs::remove_all(work_dir, ec);
  } else if (report.violations.empty()) {
    std::printf("work dir kept: %s\n", work_dir.c_str());
  }
  int acked = 0;
  for (const auto& [name, j] : obs.jobs) acked += j.acked;
  std::printf("chaos: %zu faults, %d jobs, %zu violations\n", injected.size(), acked,
              report.violations.size());
  return report.violations.empty() ? 0 : 1;
}

}  // namespace
}  // namespace caldera::chaos

int main(int argc, char** argv) {
  try {
    return caldera::chaos::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chaos: %s\n", e.what());
    std::printf("chaos: 0 faults, 0 jobs, 1 violations\n");
    return 2;
  }
}
