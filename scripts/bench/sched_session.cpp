// The gang scheduler's session on simulated (hollow) nodes, without actors or I/O: GANGS gangs of
// PODS pods arrive in waves of WAVE gangs; each wave is decided by one session over every node.
// Prints pods bound per second of session time and session time per pending pod group.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "actors/scheduler/core/session.hpp"

using namespace caldera;
using namespace caldera::sched;
using namespace std::chrono;

int main(int argc, char** argv) {
  CLI::App app{"sched-session: the gang scheduler's session on simulated nodes"};
  int nodes = 1000, gangs = 1000, pods = 8, wave = 100;
  std::string scoring = "least-allocated";
  app.add_option("--nodes", nodes);
  app.add_option("--gangs", gangs);
  app.add_option("--pods", pods, "pods per gang, all needed (minAvailable)");
  app.add_option("--wave", wave, "gangs submitted together, decided by one session");
  app.add_option("--scoring", scoring)->check(CLI::IsMember({"binpack", "least-allocated"}));
  CLI11_PARSE(app, argc, argv);

  Snapshot s;
  for (int i = 0; i < nodes; ++i) {
    auto name = "node-" + std::to_string(i);
    // 8 cpu and 32Gi each: the cluster holds exactly the gangs' pods of 1 cpu and 4Gi.
    s.nodes[name] = empty_node(
        name, ResourceList{{{"cpu", 8000}, {"memory", 32LL << 30 << 10}, {"pods", 110000}}});
  }
  SessionOptions options{*parse_scoring(scoring)};
  const ResourceList ask{{{"cpu", 1000}, {"memory", 4LL << 30 << 10}, {"pods", 1000}}};
  double session_s = 0;
  long bound = 0, sessions = 0, pending_groups = 0;
  for (int first = 0; first < gangs; first += wave) {
    for (int g = first; g < std::min(gangs, first + wave); ++g) {
      JobInfo j;
      j.uid = "default/gang-" + std::to_string(g);
      j.created_ms = g;
      j.min_available = pods;
      for (int p = 0; p < pods; ++p)
        j.tasks.push_back({j.uid + "-" + std::to_string(p),
                           "gang-" + std::to_string(g) + "-w-" + std::to_string(p),
                           "w",
                           0,
                           ask,
                           TaskStatus::Pending,
                           "",
                           {}});
      j.min_resources = ask;
      for (auto& [name, v] : j.min_resources.values) v *= pods;
      s.jobs.push_back(std::move(j));
    }
    for (const auto& j : s.jobs)
      pending_groups += std::any_of(j.tasks.begin(), j.tasks.end(), [](const TaskInfo& t) {
        return t.status == TaskStatus::Pending;
      });
    const auto start = steady_clock::now();
    auto r = run_session(s, options);
    session_s += duration<double>(steady_clock::now() - start).count();
    ++sessions;
    for (const auto& op : r.operations) bound += op.kind == OpKind::Allocate;
    // Bound pods run on: what the next session sees.
    for (auto& j : s.jobs)
      for (auto& t : j.tasks)
        if (t.status == TaskStatus::Allocated) t.status = TaskStatus::Running;
  }
  std::printf(
      "nodes=%d gangs=%d pods_per_gang=%d wave=%d scoring=%s sessions=%ld pods_bound=%ld "
      "session_s=%.3f pods_bound_per_s=%.0f session_us_per_pending_group=%.1f\n",
      nodes, gangs, pods, wave, scoring.c_str(), sessions, bound, session_s, bound / session_s,
      session_s * 1e6 / std::max(1L, pending_groups));
  return bound == static_cast<long>(gangs) * pods ? 0 : 1;
}
