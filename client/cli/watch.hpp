// A watch from the command line: the objects of a kind as they are, then each change as it
// happens, over one connection that is opened again when it breaks.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "client/cli/common.hpp"
#include "messages/api.capnp.h"

namespace caldera::cli {

struct WatchTarget {
  std::string kind;  // "jobs" | "pods" | "jobflows"
  std::string ns;    // empty: every namespace
  std::string name;  // one object (pods: one job's); empty: all
};

enum class WatchVerdict { Continue, Stop };

// Runs a watch until on_event says Stop (0), the server refuses it (its errors are printed, 1),
// the server cannot be reached for --retry-for (1), or `deadline` passes (sets *timed_out, 0).
// A connection that breaks, or a coordinator that is lost, is waited for and the watch started
// again (on_restart is called first): its objects then come again as Added, then Synced. The
// first list is read whole even when the deadline passes meanwhile (within kListGrace), so that
// a short deadline still looks once, as a poll would.
struct WatchOptions {
  std::optional<std::chrono::steady_clock::time_point> deadline;
  bool* timed_out = nullptr;
  std::function<void()> on_restart;
};
inline constexpr std::chrono::seconds kListGrace{5};
int watch(const Globals& g, const WatchTarget& target,
          const std::function<WatchVerdict(api::WatchEvent::Reader)>& on_event,
          const WatchOptions& options = {});

// get -w: kubectl's table (or -o json|yaml|name per event) of the objects, then of each change.
// Pods: `name` one pod, `job` one job's pods.
int watch_jobs(const Globals& g, const std::string& name, bool all_ns, JobKind kind);
int watch_pods(const Globals& g, const std::string& name, const std::string& job, bool all_ns);
int watch_flows(const Globals& g, const std::string& name, bool all_ns);

}  // namespace caldera::cli
