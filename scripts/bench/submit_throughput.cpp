// Submits N single-task jobs through the client API (pipelined on one connection) and reports
// how fast they are accepted (durable) and how fast they reach Completed.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <thread>

#include <capnp/message.h>
#include <CLI/CLI.hpp>

#include "client/client.hpp"
#include "messages/codec/codec.hpp"
#include "messages/codec/flat.hpp"
#include "messages/yaml/job_yaml.hpp"
#include "scripts/bench/list_jobs.hpp"

using namespace caldera;
using namespace std::chrono;

namespace {

// One task of `replicas` pods, a gang (minAvailable = replicas), each asking `cpu` if set.
std::string job_yaml(const std::string& name, const std::string& kind, int replicas = 1,
                     const std::string& cpu = "", int64_t sim_ms = 0,
                     const std::string& ns = "default") {
  std::string t = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: " + name +
                  ", namespace: " + ns + "}\nspec:\n  minAvailable: " + std::to_string(replicas) +
                  "\n  tasks:\n    - name: main\n      replicas: " + std::to_string(replicas) +
                  "\n      template:\n";
  if (kind == "sim")
    t += "        metadata: {annotations: {caldera.io/sim-duration-ms: '" + std::to_string(sim_ms) +
         "'}}\n";
  t += "        spec: {containers: [{name: main, command: [/bin/true]";
  if (!cpu.empty()) t += ", resources: {requests: {cpu: " + cpu + "}}";
  t += "}]}\n";
  return t;
}

std::string frame(uint64_t id, const std::string& yaml) {
  capnp::MallocMessageBuilder b;
  auto r = b.initRoot<api::Request>();
  r.setId(id);
  r.setSubmitYaml(yaml);
  return to_bytes(b);
}

// The same job as structured fields (submitJob), as a Cap'n Proto client that builds its jobs
// in code would send it: no YAML for the node to read.
std::string struct_frame(uint64_t id, JobSpec spec) {
  capnp::MallocMessageBuilder b;
  auto r = b.initRoot<api::Request>();
  r.setId(id);
  encode(spec, r.initSubmitJob());
  return to_bytes(b);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"submit-throughput: jobs/s to accepted and to Completed"};
  std::string server = "127.0.0.1:7070", kind = "sim", prefix = "bench", ns = "default";
  int jobs = 1000, window = 256, poll_ms = 5, replicas = 1;
  std::string cpu;
  app.add_option("--server", server);
  app.add_option("--jobs", jobs);
  app.add_option("--kind", kind, "sim (simulated pods) or true (/bin/true processes)");
  app.add_option("--prefix", prefix, "job name prefix");
  app.add_option("--namespace", ns,
                 "the jobs' namespace: the final count lists it whole (default: default)");
  app.add_option("--window", window, "requests in flight on the connection");
  std::string api = "yaml";
  app.add_option("--api", api, "yaml (submitYaml) or struct (submitJob, the same job as fields)")
      ->check(CLI::IsMember({"yaml", "struct"}));
  app.add_option("--replicas", replicas, "pods per job, all of one gang")
      ->check(CLI::Range(1, 10000));
  app.add_option("--cpu", cpu, "cpu each pod asks, e.g. 1 or 500m (default: none)");
  app.add_option("--poll-ms", poll_ms,
                 "how often to ask for the last job while waiting for Completed");
  int64_t sim_ms = 0;
  app.add_option("--sim-ms", sim_ms, "how long each simulated pod runs (default 0)");
  bool accept_only = false;
  app.add_flag("--accept-only", accept_only,
               "stop once every job is accepted (durable): do not wait for them to end");
  CLI11_PARSE(app, argc, argv);

  auto client = Client::connect(server, seconds(5));
  if (!client) {
    std::cerr << client.error() << "\n";
    return 1;
  }
  auto& c = **client;
  // Read once here, so that the client's own YAML work does not compete with the node's.
  JobSpec base;
  if (api == "struct") {
    Diagnostics diags;
    auto docs = parse_yaml(job_yaml("x", kind, replicas, cpu, sim_ms, ns), diags);
    if (docs.jobs.size() != 1) {
      std::cerr << "cannot build the job\n";
      return 1;
    }
    base = docs.jobs[0].value;
  }
  auto start = steady_clock::now();
  const int64_t start_ms =
      duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
  int64_t last_ms = 0;
  int sent = 0, answered = 0, failed = 0;
  while (answered < jobs) {
    while (sent < jobs && sent - answered < window) {
      ++sent;
      std::string name = prefix + "-" + std::to_string(sent);
      std::string bytes;
      if (api == "yaml") {
        bytes = frame(sent, job_yaml(name, kind, replicas, cpu, sim_ms, ns));
      } else {
        JobSpec spec = base;
        spec.name = name;
        bytes = struct_frame(sent, std::move(spec));
      }
      if (!c.send_raw(bytes)) {
        std::cerr << "send failed\n";
        return 1;
      }
    }
    auto f = c.read_frame(seconds(60));
    if (!f) {
      std::cerr << "read failed: " << f.error() << "\n";
      return 1;
    }
    FlatReader reader(*f);
    auto resp = reader.root<api::Response>();
    if (resp.which() != api::Response::SUBMITTED) {
      if (failed++ == 0 && resp.which() == api::Response::ERRORS)
        std::cerr << "error: " << resp.getErrors()[0].getMessage().cStr() << "\n";
    }
    ++answered;
  }
  double accept_s = duration<double>(steady_clock::now() - start).count();
  if (accept_only) {
    std::printf("kind=%s jobs=%d rejected=%d accepted_s=%.3f accepted_per_s=%.1f\n", kind.c_str(),
                jobs, failed, accept_s, jobs / accept_s);
    return failed == 0 ? 0 : 1;
  }

  // Completed: jobs finish about in order, so wait cheaply for the last one, then count them
  // all with a list of summaries; listing every job at each poll would load the node being
  // measured. The figure is the time the count confirmed them all; list_s is that last list's
  // share, and last_completed_s when the last job entered Completed by the node's own clock.
  auto finished = [](const std::string& phase) {
    return phase == "Completed" || phase == "Failed";
  };
  int done = 0;
  double list_s = 0;
  auto deadline = steady_clock::now() + minutes(5);
  std::string last = prefix + "-" + std::to_string(jobs);
  while (steady_clock::now() < deadline) {
    auto r = c.call([&](api::Request::Builder b) {
      auto ref = b.initGetJob();
      ref.setNamespace(ns);
      ref.setName(last);
    });
    auto resp = r ? r.value()->root<api::Response>() : api::Response::Reader();
    if (r && resp.which() == api::Response::JOB &&
        !finished(resp.getJob().getStatus().getState().getPhase())) {
      std::this_thread::sleep_for(milliseconds(poll_ms));
      continue;
    }
    done = 0;
    auto list_start = steady_clock::now();
    bool ok = bench::for_each_job(
        c, ns,
        [&](api::Job::Reader j) {
          std::string name = j.getSpec().getName();
          if (name.rfind(prefix + "-", 0) == 0 && finished(j.getStatus().getState().getPhase())) {
            ++done;
            last_ms = std::max<int64_t>(last_ms, j.getStatus().getState().getLastTransitionMs());
          }
        },
        /*summary=*/true);
    if (!ok) {
      std::cerr << "cannot list jobs\n";
      return 1;
    }
    list_s = duration<double>(steady_clock::now() - list_start).count();
    if (done >= jobs - failed) break;
    std::this_thread::sleep_for(milliseconds(poll_ms));
  }
  double complete_s = duration<double>(steady_clock::now() - start).count();
  std::printf(
      "kind=%s jobs=%d rejected=%d accepted_s=%.3f accepted_per_s=%.1f completed=%d "
      "completed_s=%.3f completed_per_s=%.1f list_s=%.3f last_completed_s=%.3f\n",
      kind.c_str(), jobs, failed, accept_s, jobs / accept_s, done, complete_s, done / complete_s,
      list_s, (last_ms - start_ms) / 1000.0);
  return failed == 0 && done == jobs ? 0 : 1;
}
