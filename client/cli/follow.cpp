// wait and logs: commands that poll the server until something happens.
#include <algorithm>
#include <chrono>
#include <functional>
#include <iostream>
#include <thread>
#include <tuple>

#include "client/cli/commands.hpp"
#include "client/render.hpp"
#include "messages/job_flow.hpp"
#include "messages/job_status.hpp"
#include "messages/yaml_duration.hpp"

namespace caldera::cli {
namespace {

using SteadyClock = std::chrono::steady_clock;

void write_out(std::string_view data) {
  std::cout.write(data.data(), static_cast<std::streamsize>(data.size()));
}

// What `wait` needs of a kind: how to ask for one object, and what its answer says.
struct WaitKind {
  const char* resource;  // "job.batch.volcano.sh"
  const char* noun;      // "job"
  std::function<void(api::Request::Builder, const std::string& ns, const std::string& name)> ask;
  // The phase and message in an answer, and whether that phase is final.
  std::function<std::tuple<std::string, std::string, bool>(api::Response::Reader)> read;
  std::function<bool(const std::string&)> known;  // whether a phase exists for the kind
};

int wait_phase(const Globals& g, const WaitKind& kind, const std::string& name,
               const std::string& condition, const std::string& timeout_text) {
  const std::string prefix = "phase=";
  if (condition.rfind(prefix, 0) != 0)
    return fail("--for must be phase=PHASE (e.g. --for=phase=Completed)");
  const auto want = condition.substr(prefix.size());
  if (!kind.known(want)) return fail("unknown phase '" + want + "'");
  auto timeout = parse_go_duration_ms(timeout_text);
  if (!timeout) return fail("--timeout must be a duration such as 30s or 5m");
  const auto deadline = SteadyClock::now() + std::chrono::milliseconds(*timeout);
  Session session(g);
  // A coordinator out of reach is waited for as by any read, but never past the deadline.
  Retry retry;
  retry.give_up_at = deadline;
  auto pause = std::chrono::milliseconds(20);
  for (;;) {
    int rc = 0;
    auto r = session.call([&](api::Request::Builder b) { kind.ask(b, g.ns, name); }, &rc, retry);
    if (!r) return rc;
    auto [last, message, final] = kind.read(r->root<api::Response>());
    if (last == want) {
      if (g.output == "name")
        print_name(kind.resource, name);
      else
        std::cout << kind.resource << "/" << name << " condition met\n";
      return 0;
    }
    if (final)
      return fail(std::string(kind.noun) + " " + name + " reached phase " + last + ", not " + want +
                  " (" + message + ")");
    // The last look is at or after the deadline, never before it.
    const auto now = SteadyClock::now();
    if (now >= deadline)
      return fail("timed out after " + timeout_text + " waiting for " + kind.noun + " " + name +
                  " to reach phase " + want + " (phase now " + last + ")");
    std::this_thread::sleep_for(
        std::min<SteadyClock::duration>(pause, deadline - now + std::chrono::milliseconds(1)));
    pause = std::min(pause * 2, std::chrono::milliseconds(250));
  }
}

}  // namespace

int wait_job(const Globals& g, const std::string& name, const std::string& condition,
             const std::string& timeout_text) {
  static const WaitKind kind{
      kJobResource, "job",
      [](api::Request::Builder b, const std::string& ns, const std::string& name) {
        auto ref = b.initGetJob();
        ref.setNamespace(ns);
        ref.setName(name);
      },
      [](api::Response::Reader r) {
        auto state = r.getJob().getStatus().getState();
        std::string last = state.getPhase().cStr();
        auto phase = parse_job_phase(last);
        return std::make_tuple(last, std::string(state.getMessage().cStr()),
                               phase && (is_finished(*phase) || *phase == JobPhase::Aborted));
      },
      [](const std::string& p) { return parse_job_phase(p).has_value(); }};
  return wait_phase(g, kind, name, condition, timeout_text);
}

int wait_flow(const Globals& g, const std::string& name, const std::string& condition,
              const std::string& timeout_text) {
  static const WaitKind kind{
      kFlowResource, "jobflow",
      [](api::Request::Builder b, const std::string& ns, const std::string& name) {
        auto ref = b.initGetJobFlow();
        ref.setNamespace(ns);
        ref.setName(name);
      },
      [](api::Response::Reader r) {
        auto state = r.getJobFlow().getStatus().getState();
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
