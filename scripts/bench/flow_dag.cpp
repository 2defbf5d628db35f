// Submits one JobFlow of simulated jobs (sim-duration-ms 0) as a chain of N (each entry depends on
// the one before) or as a fan-out / fan-in of N (a root, N entries that depend on it, a sink
// that depends on all N), waits for it to finish, and reports the time of each DAG step: a job's
// creation minus the latest Completed time of the jobs it depends on, from the jobs' own records
// (Job.createdMs, status.state.lastTransitionMs of Completed; whole milliseconds).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "client/client.hpp"
#include "scripts/bench/list_jobs.hpp"

using namespace caldera;
using namespace std::chrono;

namespace {

// A JobTemplate of one task with one simulated pod that finishes at once.
std::string job_template(const std::string& name) {
  return "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate\nmetadata: {name: " + name +
         "}\nspec:\n  tasks:\n    - name: main\n      replicas: 1\n      template:\n"
         "        metadata: {annotations: {caldera.io/sim-duration-ms: '0'}}\n"
         "        spec: {containers: [{name: main, command: [true]}]}\n---\n";
}

struct Entry {
  std::string name;
  std::vector<std::string> targets;
};

std::vector<Entry> dag(const std::string& shape, const std::string& prefix, int n) {
  std::vector<Entry> out;
  if (shape == "chain") {
    for (int i = 1; i <= n; ++i) {
      Entry e{prefix + "-" + std::to_string(i), {}};
      if (i > 1) e.targets.push_back(out.back().name);
      out.push_back(std::move(e));
    }
    return out;
  }
  out.push_back({prefix + "-root", {}});
  Entry sink{prefix + "-sink", {}};
  for (int i = 1; i <= n; ++i) {
    out.push_back({prefix + "-" + std::to_string(i), {prefix + "-root"}});
    sink.targets.push_back(out.back().name);
  }
  out.push_back(std::move(sink));
  return out;
}

std::string flow_yaml(const std::string& name, const std::vector<Entry>& entries) {
  std::string y;
  for (const auto& e : entries) y += job_template(e.name);
  y += "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: " + name +
       "}\nspec:\n  jobRetainPolicy: retain\n  flows:\n";
  for (const auto& e : entries) {
    y += "    - name: " + e.name + "\n";
    if (e.targets.empty()) continue;
    y += "      dependsOn: {targets: [";
    for (size_t i = 0; i < e.targets.size(); ++i) y += (i ? ", " : "") + e.targets[i];
    y += "]}\n";
  }
  return y;
}

// Nearest rank: the smallest value with at least q of the values at or below it.
double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"flow-dag: time per JobFlow DAG step (a job Completed to its successor created)"};
  std::string server = "127.0.0.1:7070", shape = "chain", prefix = "flow";
  int jobs = 200, poll_ms = 20, timeout_s = 300;
  app.add_option("--server", server);
  app.add_option("--shape", shape, "chain (each entry after the one before) or fan (root, N, sink)")
      ->check(CLI::IsMember({"chain", "fan"}));
  app.add_option("--jobs", jobs, "chain: entries; fan: parallel entries between root and sink")
      ->check(CLI::Range(1, 100000));
  app.add_option("--prefix", prefix, "the JobFlow's name and its entries' (templates') prefix");
  app.add_option("--poll-ms", poll_ms, "how often to ask for the flow while it runs");
  app.add_option("--timeout-s", timeout_s, "give up when the flow has not finished by then");
  CLI11_PARSE(app, argc, argv);

  auto client = Client::connect(server, seconds(5));
  if (!client) {
    std::cerr << client.error() << "\n";
    return 1;
  }
  auto& c = **client;
  const auto entries = dag(shape, prefix, jobs);
  const std::string yaml = flow_yaml(prefix, entries);

  auto start = steady_clock::now();
  auto r = c.call([&](api::Request::Builder b) { b.setSubmitYaml(yaml); }, seconds(60));
  if (!r) {
    std::cerr << "submit failed: " << r.error() << "\n";
    return 1;
  }
  {
    auto resp = r.value()->root<api::Response>();
    for (auto w : resp.getWarnings()) std::cerr << "warning: " << w.cStr() << "\n";
    if (resp.which() != api::Response::SUBMITTED) {
      std::cerr << "submit refused:\n";
      if (resp.which() == api::Response::ERRORS)
        for (auto e : resp.getErrors())
          std::cerr << "  " << e.getPath().cStr() << ": " << e.getMessage().cStr() << "\n";
      return 1;
    }
  }
  auto submitted = steady_clock::now();

  // Wait for the flow to finish.
  std::string phase, reason;
  int64_t flow_created_ms = 0;
  size_t flow_bytes = 0;
  int polls = 0;
  std::map<std::string, int64_t> seen_ms;  // job -> when the flow saw it finish (its end_ms)
  auto deadline = start + seconds(timeout_s);
  while (true) {
    auto g = c.call([&](api::Request::Builder b) {
      auto ref = b.initGetJobFlow();
      ref.setNamespace("default");
      ref.setName(prefix);
    });
    if (!g) {
      std::cerr << "getJobFlow failed: " << g.error() << "\n";
      return 1;
    }
    ++polls;
    auto resp = g.value()->root<api::Response>();
    if (resp.which() != api::Response::JOB_FLOW) {
      std::cerr << "no jobflow " << prefix << "\n";
      return 1;
    }
    auto f = resp.getJobFlow();
    flow_created_ms = f.getCreatedMs();
    phase = f.getStatus().getState().getPhase().cStr();
    reason = f.getStatus().getState().getMessage().cStr();
    flow_bytes = std::max<size_t>(flow_bytes, f.totalSize().wordCount * sizeof(capnp::word));
    if (phase == "Succeed" || phase == "Failed") {
      for (auto line : f.getStatus().getJobStatusList())
        seen_ms[line.getName().cStr()] = line.getEndMs();
      break;
    }
    if (steady_clock::now() > deadline) {
      std::cerr << "timed out after " << timeout_s << " s in phase " << phase << "\n";
      return 1;
    }
    std::this_thread::sleep_for(milliseconds(poll_ms));
  }
  double wall_ms = duration<double, std::milli>(steady_clock::now() - start).count();
  double submit_ms = duration<double, std::milli>(submitted - start).count();
  if (phase != "Succeed") {
    std::cerr << "jobflow " << prefix << " " << phase << ": " << reason << "\n";
    return 1;
  }

  // Each job's creation and Completed time, from its own record.
  struct Times {
    int64_t created = 0, running = -1, completed = -1;
  };
  std::map<std::string, Times> times;  // by entry name
  const std::string job_prefix = prefix + "-";
  bool listed = bench::for_each_job(
      c, "default",
      [&](api::Job::Reader j) {
        std::string name = j.getSpec().getName();
        if (name.rfind(job_prefix, 0) != 0) return;
        auto st = j.getStatus().getState();
        Times t{j.getCreatedMs(), -1, -1};
        for (auto cond : j.getStatus().getConditions())
          if (std::string(cond.getStatus().cStr()) == "Running")
            t.running = cond.getLastTransitionMs();
        if (std::string(st.getPhase().cStr()) == "Completed")
          t.completed = st.getLastTransitionMs();
        times[name.substr(job_prefix.size())] = t;
      },
      /*summary=*/true);
  if (!listed) {
    std::cerr << "cannot list jobs\n";
    return 1;
  }

  // How late the flow learned that a job finished: the end_ms of the job's line in the flow's
  // status (the flow actor's clock when the news arrived) minus the job's own Completed time.
  std::vector<double> steps, runs, starts, lags;
  double sink_step = -1;
  int64_t last_completed = 0;
  for (const auto& e : entries) {
    auto it = times.find(e.name);
    if (it == times.end() || it->second.completed < 0) {
      std::cerr << "job of entry " << e.name << " is missing or not Completed\n";
      return 1;
    }
    last_completed = std::max(last_completed, it->second.completed);
    runs.push_back(static_cast<double>(it->second.completed - it->second.created));
    if (it->second.running >= 0)
      starts.push_back(static_cast<double>(it->second.running - it->second.created));
    if (auto seen = seen_ms.find(job_prefix + e.name); seen != seen_ms.end())
      lags.push_back(static_cast<double>(seen->second - it->second.completed));
    if (e.targets.empty()) continue;
    int64_t ready = 0;
    for (const auto& t : e.targets) ready = std::max(ready, times.at(t).completed);
    steps.push_back(static_cast<double>(it->second.created - ready));
    if (shape == "fan" && e.name == prefix + "-sink") sink_step = steps.back();
  }
  const double flow_ms = static_cast<double>(last_completed - flow_created_ms);
  std::printf(
      "shape=%s jobs=%d flow_ms=%.3f steps=%zu step_p50_ms=%.3f step_p99_ms=%.3f "
      "step_max_ms=%.3f flow_ms_per_link=%.3f",
      shape.c_str(), jobs, flow_ms, steps.size(), percentile(steps, 0.5), percentile(steps, 0.99),
      percentile(steps, 1.0), steps.empty() ? 0.0 : flow_ms / static_cast<double>(steps.size()));
  if (shape == "fan") std::printf(" sink_step_ms=%.3f", sink_step);
  std::printf(
      " job_run_p50_ms=%.3f job_run_p99_ms=%.3f job_start_p50_ms=%.3f seen_lag_p50_ms=%.3f "
      "seen_lag_max_ms=%.3f "
      "submit_ms=%.3f wall_ms=%.3f polls=%d flow_record_kb=%.1f\n",
      percentile(runs, 0.5), percentile(runs, 0.99), percentile(starts, 0.5), percentile(lags, 0.5),
      percentile(lags, 1.0), submit_ms, wall_ms, polls, static_cast<double>(flow_bytes) / 1024.0);
  return 0;
}
