// The gang scheduler's session on simulated (hollow) nodes, without actors or I/O: GANGS gangs of
// PODS pods arrive in waves of WAVE gangs; each wave is decided by one session (the one calderad
// runs: sched::Session over the Placer's cache, with the configured actions) over every node.
// Prints pods bound per second of session time and session time per pending pod group.
#include <chrono>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "actors/scheduler/core/placer.hpp"

using namespace caldera;
using namespace std::chrono;

int main(int argc, char** argv) {
  CLI::App app{"sched-session: the gang scheduler's session on simulated nodes"};
  int nodes = 1000, gangs = 1000, pods = 8, wave = 100;
  std::string scoring = "default";
  app.add_option("--nodes", nodes);
  app.add_option("--gangs", gangs);
  app.add_option("--pods", pods, "pods per gang, all needed (minAvailable)");
  app.add_option("--wave", wave, "gangs submitted together, decided by one session");
  app.add_option("--scoring", scoring, "default: the default scheduler conf's plugins")
      ->check(CLI::IsMember({"default", "binpack", "least-allocated"}));
  CLI11_PARSE(app, argc, argv);

  Placer placer = scoring == "default" ? Placer() : Placer(*sched::parse_scoring(scoring));
  for (int i = 0; i < nodes; ++i)
    // 8 cpu and 32Gi each: the cluster holds exactly the gangs' pods of 1 cpu and 4Gi.
    placer.upsert_node(
        "node-" + std::to_string(i),
        ResourceList{{{"cpu", 8000}, {"memory", 32LL << 30 << 10}, {"pods", 110000}}}, true);
  const ResourceList ask{{{"cpu", 1000}, {"memory", 4LL << 30 << 10}, {"pods", 1000}}};
  double session_s = 0;
  long bound = 0, sessions = 0, pending_groups = 0;
  for (int first = 0; first < gangs; first += wave) {
    for (int g = first; g < std::min(gangs, first + wave); ++g) {
      GangRequest r;
      r.job_key = "default/gang-" + std::to_string(g);
      r.created_ms = g;
      r.min_count = pods;
      r.group.min_available = pods;
      for (int p = 0; p < pods; ++p)
        r.pods.push_back({r.job_key + "-" + std::to_string(p), ask, "w"});
      placer.request(std::move(r));
    }
    pending_groups += static_cast<long>(placer.waiting());
    const auto start = steady_clock::now();
    auto decisions = placer.session();
    session_s += duration<double>(steady_clock::now() - start).count();
    ++sessions;
    bound += static_cast<long>(decisions.bindings.size());  // they run on: what the next sees
  }
  std::printf(
      "nodes=%d gangs=%d pods_per_gang=%d wave=%d scoring=%s sessions=%ld pods_bound=%ld "
      "session_s=%.3f pods_bound_per_s=%.0f session_us_per_pending_group=%.1f\n",
      nodes, gangs, pods, wave, scoring.c_str(), sessions, bound, session_s, bound / session_s,
      session_s * 1e6 / std::max(1L, pending_groups));
  return bound == static_cast<long>(gangs) * pods ? 0 : 1;
}
