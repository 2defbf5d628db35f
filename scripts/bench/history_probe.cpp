// Probes a node that holds many finished jobs: how soon after its start it answers a client and
// can show a given job, then how long the first page of `get jobs -A` and `get job` take.
// Prints one line of KEY=VALUE figures (run by scripts/bench/history.sh).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "client/client.hpp"
#include "messages/api.capnp.h"

using namespace caldera;
using namespace std::chrono;

namespace {

using Clock = steady_clock;

double ms_since(Clock::time_point t) {
  return duration_cast<microseconds>(Clock::now() - t).count() / 1000.0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Whether the request was answered without errors. A connection that failed (or timed out: its
// answer may still come, out of step) is dropped, to connect again.
bool answered(std::unique_ptr<Client>& c, const std::function<void(api::Request::Builder)>& fill) {
  auto r = c->call(fill, seconds(10));
  if (!r) {
    c.reset();
    return false;
  }
  return r.value()->root<api::Response>().which() != api::Response::ERRORS;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"caldera-bench-history-probe"};
  std::string server, job;
  int timeout_s = 600, samples = 9;
  app.add_option("--server", server)->required();
  app.add_option("--job", job, "a job (default namespace) that must be readable")->required();
  app.add_option("--timeout-s", timeout_s, "give up after this long");
  app.add_option("--samples", samples, "requests per latency figure");
  CLI11_PARSE(app, argc, argv);

  const auto start = Clock::now();
  const auto give_up = start + seconds(timeout_s);
  std::unique_ptr<Client> client;
  auto ping = [](api::Request::Builder b) { b.setPing(); };
  auto get_job = [&](api::Request::Builder b) {
    auto ref = b.initGetJob();
    ref.setName(job);
  };
  double serving_ms = -1, job_ms = -1;
  while (Clock::now() < give_up && job_ms < 0) {
    if (!client) {
      auto c = Client::connect(server, seconds(1));
      if (!c) {
        std::this_thread::sleep_for(milliseconds(10));
        continue;
      }
      client = std::move(*c);
    }
    if (serving_ms < 0) {
      if (answered(client, ping)) serving_ms = ms_since(start);
    } else if (answered(client, get_job)) {
      job_ms = ms_since(start);
    }
    if (job_ms < 0) std::this_thread::sleep_for(milliseconds(10));
  }
  if (job_ms < 0) {
    std::fprintf(stderr, "history-probe: %s did not show job %s within %d s\n", server.c_str(),
                 job.c_str(), timeout_s);
    return 1;
  }
  std::vector<double> page, one, floor;
  for (int i = 0; i < samples; ++i) {
    auto t = Clock::now();
    if (!answered(client, ping)) return 1;
    floor.push_back(ms_since(t));
    t = Clock::now();
    if (!answered(client, [](api::Request::Builder b) {
          auto f = b.initListJobs();
          f.setLimit(500);
          f.setSummary(true);
        }))
      return 1;
    page.push_back(ms_since(t));
    t = Clock::now();
    if (!answered(client, get_job)) return 1;
    one.push_back(ms_since(t));
  }
  std::printf(
      "serving_ms=%.0f job_readable_ms=%.0f first_page_ms=%.2f get_job_ms=%.2f ping_ms=%.2f\n",
      serving_ms, job_ms, median(page), median(one), median(floor));
  return 0;
}
