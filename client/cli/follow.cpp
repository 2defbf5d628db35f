// wait and logs: commands that follow the server until something happens (wait watches; logs
// polls the log's offset).
#include <algorithm>
#include <chrono>
#include <functional>
#include <iostream>
#include <thread>
#include <tuple>

#include "client/cli/commands.hpp"
#include "client/cli/watch.hpp"
#include "client/render.hpp"
#include "messages/model/job_flow.hpp"
#include "messages/model/job_status.hpp"
#include "messages/yaml/yaml_duration.hpp"

namespace caldera::cli {
namespace {

using SteadyClock = std::chrono::steady_clock;

void write_out(std::string_view data) {
  std::cout.write(data.data(), static_cast<std::streamsize>(data.size()));
}

// What `wait` needs of a kind: what to watch, and what an object of it says.
struct WaitKind {
  const char* resource;  // "job.batch.volcano.sh"
  const char* plural;    // "jobs.batch.volcano.sh", as a not-found error names it
  const char* noun;      // "job"
  const char* watch;     // the watch's kind
  // The phase and message of the object in an event, and whether that phase is final.
  std::function<std::tuple<std::string, std::string, bool>(api::WatchEvent::Reader)> read;
  std::function<bool(const std::string&)> known;  // whether a phase exists for the kind
  // Whether the object in an event is as wanted; unset: its phase is `want`.
  std::function<bool(api::WatchEvent::Reader, const std::string& want)> met = {};
  const char* goal = "phase";  // what --for names: "phase" (phase=PHASE) or "condition"
};

// Watches the object (no polling): decided the moment its phase changes.
int wait_phase(const Globals& g, const WaitKind& kind, const std::string& name,
               const std::string& condition, const std::string& timeout_text) {
  const std::string prefix = std::string(kind.goal) + "=";
  if (condition.rfind(prefix, 0) != 0)
    return fail(
        std::string("--for must be ") + kind.goal + "=" +
        (kind.met ? "TYPE (e.g. --for=condition=Complete)" : "PHASE (e.g. --for=phase=Completed)"));
  const auto want = condition.substr(prefix.size());
  if (!kind.known(want)) return fail("unknown " + std::string(kind.goal) + " '" + want + "'");
  auto timeout = parse_go_duration_ms(timeout_text);
  if (!timeout) return fail("--timeout must be a duration such as 30s or 5m");
  const auto deadline = SteadyClock::now() + std::chrono::milliseconds(*timeout);
  std::string last = "unknown";
  bool seen = false;
  int rc = -1;
  auto on_event = [&](api::WatchEvent::Reader e) {
    using Type = api::WatchEvent::Type;
    if (e.getType() == Type::SYNCED) {
      if (seen) return WatchVerdict::Continue;
      rc = fail(std::string(kind.plural) + " \"" + name + "\" not found in namespace " + g.ns);
      return WatchVerdict::Stop;
    }
    auto [phase, message, final] = kind.read(e);
    seen = true;
    last = phase;
    if (e.getType() == Type::DELETED) {
      rc = fail(std::string(kind.noun) + " " + name + " was deleted in " + kind.goal + " " + last +
                " before it reached " + kind.goal + " " + want);
      return WatchVerdict::Stop;
    }
    if (kind.met ? kind.met(e, want) : phase == want) {
      if (g.output == "name")
        print_name(kind.resource, name);
      else
        std::cout << kind.resource << "/" << name << " condition met\n";
      rc = 0;
      return WatchVerdict::Stop;
    }
    if (final) {
      rc = fail(std::string(kind.noun) + " " + name + " reached " + kind.goal + " " + phase +
                ", not " + want + " (" + message + ")");
      return WatchVerdict::Stop;
    }
    return WatchVerdict::Continue;
  };
  bool timed_out = false;
  WatchOptions options;
  options.deadline = deadline;
  options.timed_out = &timed_out;
  options.on_restart = [&] { seen = false; };  // listed again: it may be gone now
  int watched = watch(g, WatchTarget{kind.watch, g.ns, name}, on_event, options);
  if (rc >= 0) return rc;
  if (timed_out)
    return fail("timed out after " + timeout_text + " waiting for " + kind.noun + " " + name +
                " to reach " + kind.goal + " " + want + " (" + kind.goal + " now " + last + ")");
  return watched;
}

}  // namespace

int wait_job(const Globals& g, const std::string& name, const std::string& condition,
             const std::string& timeout_text) {
  static const WaitKind kind{kJobResource,
                             "jobs.batch.volcano.sh",
                             "job",
                             "jobs",
                             [](api::WatchEvent::Reader e) {
                               auto state = e.getJob().getStatus().getState();
                               std::string last = state.getPhase().cStr();
                               auto phase = parse_job_phase(last);
                               return std::make_tuple(
                                   last, std::string(state.getMessage().cStr()),
                                   phase && (is_finished(*phase) || *phase == JobPhase::Aborted));
                             },
                             [](const std::string& p) { return parse_job_phase(p).has_value(); }};
  return wait_phase(g, kind, name, condition, timeout_text);
}

namespace {

// kubectl's condition names match whatever their case.
bool same_word(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// The one word `get jobs.batch` shows of a Kubernetes Job: Complete, Failed, Suspended, Running.
std::string batch_status_word(api::WatchEvent::Reader e) {
  std::string shown = "Running";
  for (auto c : e.getJob().getStatus().getBatch().getConditions()) {
    if (c.getStatus() != "True") continue;
    if (c.getType() == "Complete" || c.getType() == "Failed" || c.getType() == "Suspended")
      shown = c.getType().cStr();
  }
  return shown;
}

}  // namespace

int wait_batch_job(const Globals& g, const std::string& name, const std::string& condition,
                   const std::string& timeout_text) {
  static const WaitKind kind{
      kBatchJobResourceName,
      kBatchJobKind,
      "job",
      kBatchJobKind,
      [](api::WatchEvent::Reader e) {
        auto shown = batch_status_word(e);
        return std::make_tuple(shown, std::string(), shown == "Complete" || shown == "Failed");
      },
      [](const std::string& want) { return !want.empty(); },
      [](api::WatchEvent::Reader e, const std::string& want) {
        // TYPE, or TYPE=STATUS (kubectl's --for=condition=Suspended=False).
        const auto eq = want.find('=');
        const std::string type = want.substr(0, eq);
        const std::string status = eq == std::string::npos ? "True" : want.substr(eq + 1);
        for (auto c : e.getJob().getStatus().getBatch().getConditions())
          if (same_word(c.getType().cStr(), type)) return same_word(c.getStatus().cStr(), status);
        return false;
      },
      "condition"};
  return wait_phase(g, kind, name, condition, timeout_text);
}

int wait_flow(const Globals& g, const std::string& name, const std::string& condition,
              const std::string& timeout_text) {
  static const WaitKind kind{kFlowResource,
                             "jobflows.flow.volcano.sh",
                             "jobflow",
                             "jobflows",
                             [](api::WatchEvent::Reader e) {
                               auto state = e.getJobFlow().getStatus().getState();
                               std::string last = state.getPhase().cStr();
                               auto phase = parse_flow_phase(last);
                               return std::make_tuple(last, std::string(state.getMessage().cStr()),
                                                      phase && is_finished(*phase));
                             },
                             [](const std::string& p) { return parse_flow_phase(p).has_value(); }};
  return wait_phase(g, kind, name, condition, timeout_text);
}

int logs(const Globals& g, const std::string& pod, const LogOptions& options) {
  // Each read names its offset, so one that is sent again (the coordinator was out of reach)
  // reads the same bytes.
  Session session(g);
  int64_t offset = 0;
  // With --tail, what was read so far is kept (its last lines only) until the end of the log
  // is reached; what comes after that (with -f) is printed as it comes.
  bool tailing = options.tail >= 0;
  std::string kept;
  auto pause = std::chrono::milliseconds(100);
  for (;;) {
    int rc = 0;
    auto r = session.call(
        [&](api::Request::Builder b) {
          auto req = b.initPodLog();
          req.getPod().setNamespace(g.ns);
          req.getPod().setName(pod);
          req.setContainer(options.container);
          req.setOffset(offset);
        },
        &rc);
    if (!r) return rc;
    auto log = r->root<api::Response>().getLog();
    auto data = log.getData();
    std::string_view chunk(reinterpret_cast<const char*>(data.begin()), data.size());
    if (tailing) {
      kept.append(chunk);
      kept = last_lines(kept, options.tail);
    } else {
      write_out(chunk);
    }
    // A next offset below ours: the log was rotated, and the chunk is the new file's beginning.
    // Any other change is progress in the same file.
    const bool progressed = log.getNextOffset() != offset;
    offset = log.getNextOffset();
    if (log.getEof()) break;
    if (progressed) {
      pause = std::chrono::milliseconds(100);
      continue;
    }
    // Everything written so far has been read.
    if (tailing) {
      write_out(kept);
      tailing = false;
    }
    if (!options.follow) break;
    std::cout.flush();
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(500));
  }
  if (tailing) write_out(kept);
  std::cout.flush();
  return 0;
}

}  // namespace caldera::cli
