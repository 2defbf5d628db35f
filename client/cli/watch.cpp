#include "client/cli/watch.hpp"

#include <algorithm>
#include <iostream>
#include <thread>
#include <vector>

#include "client/client.hpp"
#include "client/render.hpp"
#include "client/render_batch_job.hpp"
#include "common/clock.hpp"
#include "messages/codec/codec.hpp"

namespace caldera::cli {
namespace {

using SteadyClock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto kFirstPause = 200ms;
constexpr auto kMaxPause = 1s;  // as a request's retries (cli/common.cpp)
// How long one read waits before it looks at the deadline again; a watch may be quiet for hours.
constexpr auto kReadSlice = 60s;

}  // namespace

int watch(const Globals& g, const WatchTarget& target,
          const std::function<WatchVerdict(api::WatchEvent::Reader)>& on_event,
          const WatchOptions& options) {
  auto pause = std::chrono::milliseconds(kFirstPause);
  // Reconnecting gives up after --retry-for without a working watch (or at the deadline).
  auto give_up = SteadyClock::now() + std::chrono::milliseconds(g.retry_for_ms);
  bool said = false, started = false, listed = false;
  auto timed_out = [&] {
    if (options.timed_out) *options.timed_out = true;
    return 0;
  };
  for (;;) {
    std::string why;  // the watch broke: why (a retry may cure it)
    bool transient = false;
    auto connected = Client::connect(g.server, 5s, &transient);
    if (!connected) {
      if (!transient) return fail(connected.error());
      why = connected.error();
    } else {
      auto& client = **connected;
      if (started && options.on_restart) options.on_restart();
      started = true;
      auto id = client.start([&](api::Request::Builder b) {
        b.setToken(g.token);
        auto w = b.initWatch();
        w.setKind(target.kind);
        w.setNamespace(target.ns);
        w.setName(target.name);
      });
      if (!id) why = id.error();
      while (id) {
        std::chrono::milliseconds slice = kReadSlice;
        if (options.deadline) {
          auto until = listed ? *options.deadline : *options.deadline + kListGrace;
          auto left = until - SteadyClock::now();
          if (left <= SteadyClock::duration::zero()) return timed_out();
          slice = std::min<std::chrono::milliseconds>(
              kReadSlice, std::chrono::duration_cast<std::chrono::milliseconds>(left) + 1ms);
        }
        auto r = client.next(*id, slice);
        if (!r) {
          if (r.error().rfind("timed out", 0) == 0) continue;
          why = r.error();
          break;
        }
        auto resp = (*r)->root<api::Response>();
        if (resp.isEvent()) {
          said = false;
          pause = kFirstPause;
          give_up = SteadyClock::now() + std::chrono::milliseconds(g.retry_for_ms);
          auto event = resp.getEvent();
          if (on_event(event) == WatchVerdict::Stop) return 0;
          if (event.getType() == api::WatchEvent::Type::SYNCED) listed = true;
          continue;
        }
        if (resp.isErrors()) {
          auto errors = resp.getErrors();
          if (errors.size() > 0 && errors[0].getCode() == api::Error::Code::UNAVAILABLE) {
            why = errors[0].getMessage().cStr();
            break;
          }
          return print_errors(resp);
        }
        return 0;  // the watch's final answer: it ended
      }
    }
    const auto now = SteadyClock::now();
    auto stop = options.deadline ? std::min(give_up, *options.deadline) : give_up;
    if (now >= stop) {
      if (options.deadline && now >= *options.deadline) return timed_out();
      return fail(why + " (gave up after --retry-for " + g.retry_for + ")");
    }
    if (!said) {
      std::cerr << "waiting for the server (" << why << "); watching again\n";
      said = true;
    }
    std::this_thread::sleep_for(std::min<SteadyClock::duration>(pause, stop - now));
    pause = std::min<std::chrono::milliseconds>(pause * 2, kMaxPause);
  }
}

namespace {

// Prints a table's rows without its header line.
void print_rows(const std::string& table) {
  auto eol = table.find('\n');
  if (eol != std::string::npos) std::cout << table.substr(eol + 1);
}

// kubectl get -w: the objects as a table once the watch is synced, then a row per change (or
// one JSON/YAML document or name per event).
// `not_found`: for one named object, what to say when it does not exist (as kubectl does).
template <class T>
int watch_table(const Globals& g, const WatchTarget& target, const char* resource,
                T (*read)(api::WatchEvent::Reader), nlohmann::json (*to_json)(const T&),
                const std::function<std::string(const std::vector<T>&)>& table,
                const std::function<bool(const T&)>& wanted,
                const std::function<std::string(const T&)>& name_of, const std::string& not_found) {
  std::vector<T> initial;
  bool synced = false, header = false, any = false;
  const bool table_output = g.output != "json" && g.output != "yaml" && g.output != "name";
  int rc = 0;
  int watched = watch(g, target, [&](api::WatchEvent::Reader e) {
    if (e.getType() == api::WatchEvent::Type::SYNCED) {
      if (!synced && !any && !not_found.empty()) {
        rc = fail(not_found);
        return WatchVerdict::Stop;
      }
      // Watched again after a break: the objects come again, and are shown again.
      if (table_output && !initial.empty()) {
        auto text = table(initial);
        if (header) {
          print_rows(text);
        } else {
          std::cout << text;
          header = true;
        }
      }
      initial.clear();
      synced = true;
      std::cout.flush();
      return WatchVerdict::Continue;
    }
    T item = read(e);
    if (!wanted(item)) return WatchVerdict::Continue;
    any = true;
    if (g.output == "json" || g.output == "yaml") {
      print_json(to_json(item), g.output);
    } else if (g.output == "name") {
      print_name(resource, name_of(item));
    } else if (!synced) {
      initial.push_back(std::move(item));
      return WatchVerdict::Continue;
    } else if (!header) {
      std::cout << table({item});  // kubectl: the header comes with the first row
      header = true;
    } else {
      print_rows(table({item}));
    }
    std::cout.flush();
    return WatchVerdict::Continue;
  });
  return rc ? rc : watched;
}

Job read_job(api::WatchEvent::Reader e) {
  return decode(e.getJob());
}
Pod read_pod(api::WatchEvent::Reader e) {
  return decode(e.getPod());
}
JobFlow read_flow(api::WatchEvent::Reader e) {
  return decode(e.getJobFlow());
}

}  // namespace

int watch_jobs(const Globals& g, const std::string& name, bool all_ns, JobKind kind) {
  const bool wide = g.output == "wide";
  const bool batch = kind == JobKind::Batch;
  return watch_table<Job>(
      g, WatchTarget{batch ? kBatchJobKind : "jobs", all_ns && name.empty() ? "" : g.ns, name},
      batch ? kBatchJobResourceName : kJobResource, read_job,
      batch ? batch_job_to_json : job_to_json,
      [&](const std::vector<Job>& v) {
        return batch ? batch_jobs_table(v, wide, system_now_ms(), all_ns)
                     : jobs_table(v, wide, system_now_ms(), all_ns);
      },
      [](const Job&) { return true; }, [](const Job& j) { return j.spec.name; },
      name.empty() ? ""
                   : std::string(batch ? kBatchJobKind : "jobs.batch.volcano.sh") + " \"" + name +
                         "\" not found in namespace " + g.ns);
}

int watch_pods(const Globals& g, const std::string& name, const std::string& job, bool all_ns) {
  const bool wide = g.output == "wide";
  return watch_table<Pod>(
      g, WatchTarget{"pods", all_ns && name.empty() ? "" : g.ns, job}, kPodResource, read_pod,
      pod_to_json,
      [&](const std::vector<Pod>& v) { return pods_table(v, wide, system_now_ms(), all_ns); },
      [&](const Pod& p) { return name.empty() || p.name == name; },
      [](const Pod& p) { return p.name; },
      name.empty() ? "" : "pods \"" + name + "\" not found in namespace " + g.ns);
}

int watch_flows(const Globals& g, const std::string& name, bool all_ns) {
  const bool wide = g.output == "wide";
  return watch_table<JobFlow>(
      g, WatchTarget{"jobflows", all_ns && name.empty() ? "" : g.ns, name}, kFlowResource,
      read_flow, flow_to_json,
      [&](const std::vector<JobFlow>& v) { return flows_table(v, wide, system_now_ms()); },
      [](const JobFlow&) { return true; }, [](const JobFlow& f) { return f.spec.name; },
      name.empty() ? ""
                   : "jobflows.flow.volcano.sh \"" + name + "\" not found in namespace " + g.ns);
}

}  // namespace caldera::cli
