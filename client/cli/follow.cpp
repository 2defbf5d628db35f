// wait and logs: commands that poll the server until something happens.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>

#include "client/cli/commands.hpp"
#include "client/render.hpp"
#include "messages/job_status.hpp"
#include "messages/yaml_duration.hpp"

namespace caldera::cli {
namespace {

using SteadyClock = std::chrono::steady_clock;

void write_out(std::string_view data) {
  std::cout.write(data.data(), static_cast<std::streamsize>(data.size()));
}

}  // namespace

int wait_job(const Globals& g, const std::string& name, const std::string& condition,
             const std::string& timeout_text) {
  const std::string prefix = "phase=";
  if (condition.rfind(prefix, 0) != 0)
    return fail("--for must be phase=PHASE (e.g. --for=phase=Completed)");
  auto want = parse_job_phase(condition.substr(prefix.size()));
  if (!want) return fail("unknown phase '" + condition.substr(prefix.size()) + "'");
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
    auto r = session.call(
        [&](api::Request::Builder b) {
          auto ref = b.initGetJob();
          ref.setNamespace(g.ns);
          ref.setName(name);
        },
        &rc, retry);
    if (!r) return rc;
    auto state = r->root<api::Response>().getJob().getStatus().getState();
    const std::string last = state.getPhase().cStr();
    auto phase = parse_job_phase(last);
    if (phase == want) {
      if (g.output == "name")
        print_name(kJobResource, name);
      else
        std::cout << kJobResource << "/" << name << " condition met\n";
      return 0;
    }
    if (phase && (is_finished(*phase) || *phase == JobPhase::Aborted))
      return fail("job " + name + " reached phase " + last + ", not " +
                  std::string(to_string(*want)) + " (" + state.getMessage().cStr() + ")");
    // The last look is at or after the deadline, never before it.
    const auto now = SteadyClock::now();
    if (now >= deadline)
      return fail("timed out after " + timeout_text + " waiting for job " + name +
                  " to reach phase " + std::string(to_string(*want)) + " (phase now " + last + ")");
    std::this_thread::sleep_for(
        std::min<SteadyClock::duration>(pause, deadline - now + std::chrono::milliseconds(1)));
    pause = std::min(pause * 2, std::chrono::milliseconds(250));
  }
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
