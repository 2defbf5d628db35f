// Live job actors at scale: submits N simulated jobs that keep running, reports the node's
// resident memory per live job, then aborts and resumes every job and reports how many state
// transitions per second the job actors make (each durable in RocksDB before it takes effect).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <unistd.h>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

#include <capnp/message.h>
#include <CLI/CLI.hpp>

#include "client/client.hpp"
#include "messages/codec/flat.hpp"
#include "scripts/bench/list_jobs.hpp"

using namespace caldera;
using namespace std::chrono;

namespace {

long rss_kb(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  long value = 0;
  while (in >> key) {
    if (key == "VmRSS:") {
      in >> value;
      return value;
    }
    in.ignore(1 << 12, '\n');
  }
  return -1;
}

std::string job_yaml(const std::string& name, int replicas = 1,
                     const std::string& sim_ms = "86400000") {
  return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: " + name +
         "}\nspec:\n  minAvailable: 1\n  tasks:\n    - name: main\n      replicas: " +
         std::to_string(replicas) +
         "\n      template:\n"
         "        metadata: {annotations: {caldera.io/sim-duration-ms: '" +
         sim_ms +
         "'}}\n"
         "        spec: {containers: [{name: main, command: [/bin/true]}]}\n";
}

// CPU time so far (user + system) of a process or one of its threads, in seconds.
double cpu_s(const std::string& stat_path) {
  std::ifstream in(stat_path);
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  unsigned long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoul(field);
    if (i == 15) stime = std::stoul(field);
  }
  return double(utime + stime) / double(sysconf(_SC_CLK_TCK));
}

double cpu_s(int pid) {
  return cpu_s("/proc/" + std::to_string(pid) + "/stat");
}

// The part of it spent by RocksDB's own threads (flushes and compactions, named "rocksdb:..."):
// work that earlier writes left behind, charged to whatever phase it happens in.
double rocksdb_cpu_s(int pid) {
  double total = 0;
  std::error_code ec;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    if (name.rfind("rocksdb:", 0) == 0) total += cpu_s((task.path() / "stat").string());
  }
  return total;
}

// Sends one request per job, `window` in flight, and reads every answer. Counts errors.
template <class Fill>
int pipeline(Client& c, int jobs, int window, Fill&& fill) {
  int sent = 0, answered = 0, failed = 0;
  while (answered < jobs) {
    while (sent < jobs && sent - answered < window) {
      capnp::MallocMessageBuilder b;
      auto r = b.initRoot<api::Request>();
      r.setId(static_cast<uint64_t>(sent + 1));
      fill(r, sent);
      if (!c.send_raw(to_bytes(b))) return -1;
      ++sent;
    }
    auto f = c.read_frame(seconds(120));
    if (!f) return -1;
    FlatReader reader(*f);
    auto resp = reader.root<api::Response>();
    if (resp.which() == api::Response::ERRORS && failed++ == 0)
      std::cerr << "error: " << resp.getErrors()[0].getMessage().cStr() << "\n";
    ++answered;
  }
  return failed;
}

struct Census {
  int in_phase = 0;
  long conditions = 0;  // every phase a job entered is one condition: the transitions made
};

Census census(Client& c, const std::string& prefix, const std::string& phase) {
  Census out;
  bench::for_each_job(
      c, "default",
      [&](api::Job::Reader j) {
        if (std::string(j.getSpec().getName()).rfind(prefix, 0) != 0) return;
        if (j.getStatus().getState().getPhase() == phase) ++out.in_phase;
        out.conditions += j.getStatus().getConditions().size();
      },
      /*summary=*/true);
  return out;
}

// Waits until every job is in `phase`; returns the census then, or nullopt on timeout.
std::optional<Census> wait_all(Client& c, const std::string& prefix, const std::string& phase,
                               int jobs) {
  auto deadline = steady_clock::now() + minutes(10);
  while (steady_clock::now() < deadline) {
    auto now = census(c, prefix, phase);
    if (now.in_phase >= jobs) return now;
    std::this_thread::sleep_for(milliseconds(200));
  }
  return std::nullopt;
}

// Waits until the one job `name` is in `phase`, asking for that job alone: listing every job
// while one big job runs would measure the listing.
bool wait_job(Client& c, const std::string& name, const std::string& phase) {
  auto deadline = steady_clock::now() + minutes(10);
  while (steady_clock::now() < deadline) {
    auto r = c.call([&](api::Request::Builder b) { b.initGetJob().setName(name); });
    if (r) {
      auto resp = r.value()->root<api::Response>();
      if (resp.isJob() && resp.getJob().getStatus().getState().getPhase() == phase) return true;
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"caldera job actor benchmark"};
  std::string server = "127.0.0.1:7070", prefix = "live";
  int jobs = 10000, window = 256, pid = 0;
  app.add_option("--server", server);
  app.add_option("--jobs", jobs);
  app.add_option("--pid", pid, "calderad's pid, for its resident memory")->required();
  app.add_option("--prefix", prefix);
  CLI11_PARSE(app, argc, argv);

  auto client = Client::connect(server, seconds(5));
  if (!client) {
    std::cerr << client.error() << "\n";
    return 1;
  }
  auto& c = **client;
  const long rss_before = rss_kb(pid);
  auto name = [&](int i) { return prefix + "-" + std::to_string(i); };
  if (pipeline(c, jobs, window,
               [&](api::Request::Builder r, int i) { r.setSubmitYaml(job_yaml(name(i))); }) != 0)
    return 1;
  auto running = wait_all(c, prefix, "Running", jobs);
  if (!running) {
    std::cerr << "not every job reached Running\n";
    return 1;
  }
  std::this_thread::sleep_for(seconds(1));  // let the allocator settle before measuring
  const long rss_after = rss_kb(pid);

  auto command = [&](const char* action, const char* round) {
    return pipeline(c, jobs, window, [&](api::Request::Builder r, int i) {
      auto cmd = r.initCommand();
      cmd.getJob().setName(name(i));
      cmd.setAction(action);
      cmd.setCommandId(std::string(round) + "-" + std::to_string(i));
    });
  };
  auto start = steady_clock::now();
  if (command("AbortJob", "abort") != 0) return 1;
  auto aborted = wait_all(c, prefix, "Aborted", jobs);
  if (!aborted || command("ResumeJob", "resume") != 0) return 1;
  auto resumed = wait_all(c, prefix, "Running", jobs);
  if (!resumed) return 1;
  double seconds_taken = duration<double>(steady_clock::now() - start).count();
  long transitions = resumed->conditions - running->conditions;

  // Finished jobs: as many again, each done at once; what they keep once Completed.
  const long rss_live = rss_kb(pid);
  const double cpu_small = cpu_s(pid), bg_small = rocksdb_cpu_s(pid);
  if (pipeline(c, jobs, window, [&](api::Request::Builder r, int i) {
        r.setSubmitYaml(job_yaml(prefix + "-done-" + std::to_string(i), 1, "0"));
      }) != 0)
    return 1;
  if (!wait_all(c, prefix + "-done-", "Completed", jobs)) return 1;
  const double cpu_per_small_pod = (cpu_s(pid) - cpu_small) / jobs;
  const double bg_per_small_pod = (rocksdb_cpu_s(pid) - bg_small) / jobs;
  std::this_thread::sleep_for(seconds(1));
  const long rss_done = rss_kb(pid);

  // One job with `jobs` pods (at most the replica limit), each done at once: what one pod event
  // costs in a big job, next to a one-pod job's whole life above.
  const int big = std::min(jobs, 10000);
  const double cpu_big = cpu_s(pid), bg_big = rocksdb_cpu_s(pid);
  if (pipeline(c, 1, 1, [&](api::Request::Builder r, int) {
        r.setSubmitYaml(job_yaml(prefix + "-big", big, "0"));
      }) != 0)
    return 1;
  if (!wait_job(c, prefix + "-big", "Completed")) return 1;
  const double cpu_per_big_pod = (cpu_s(pid) - cpu_big) / big;
  const double bg_per_big_pod = (rocksdb_cpu_s(pid) - bg_big) / big;

  std::printf(
      "jobs=%d rss_before_kb=%ld rss_after_kb=%ld bytes_per_live_job=%.0f "
      "bytes_per_finished_job=%.0f transitions=%ld transitions_s=%.3f transitions_per_s=%.0f "
      "cpu_us_per_pod_of_1pod_jobs=%.0f cpu_us_per_pod_of_%dpod_job=%.0f "
      "rocksdb_bg_us_per_pod_of_1pod_jobs=%.0f rocksdb_bg_us_per_pod_of_big_job=%.0f\n",
      jobs, rss_before, rss_after, (rss_after - rss_before) * 1024.0 / jobs,
      (rss_done - rss_live) * 1024.0 / jobs, transitions, seconds_taken,
      transitions / seconds_taken, cpu_per_small_pod * 1e6, big, cpu_per_big_pod * 1e6,
      bg_per_small_pod * 1e6, bg_per_big_pod * 1e6);
  return 0;
}
