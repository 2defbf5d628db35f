// The clients watching jobs, pods or flows: what each asked to see, and the frames it is sent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_addr.hpp>

#include "messages/api.capnp.h"
#include "messages/model/job_flow.hpp"
#include "messages/model/result.hpp"

namespace caldera {

enum class WatchKind { Jobs, Pods, JobFlows };

// "jobs", "pods" or "jobflows" (kubectl's plurals, also the singular and the short names);
// "jobs.batch" (Kubernetes' Jobs) is a kind of jobs too (is_batch_watch).
Result<WatchKind> parse_watch_kind(const std::string& text);
bool is_batch_watch(const std::string& text);

// One watch: a client connection's request, as the client bridge that holds it numbers it.
struct Watcher {
  caf::actor bridge;  // the bridge holding the client's connection: it gets the frames
  uint64_t stream = 0;
  uint64_t request_id = 0;  // the client's id: every frame of the watch carries it
  WatchKind kind = WatchKind::Jobs;
  std::string ns;      // empty: every namespace
  std::string name;    // empty: every object; for pods, a job's name
  bool batch = false;  // jobs: Kubernetes' (batch/v1) rather than Volcano's
  // Pods only: jobs whose pods were asked for the initial list and have not answered yet; their
  // events wait for that answer, which already holds them. Until live_asked (the directory has
  // said which jobs are live), every event waits so.
  std::set<std::string> listing = {};
  bool live_asked = false;
  bool synced = false;
};

// Every watch the watch hub serves, by (bridge, stream).
class Watchers {
 public:
  using Key = std::pair<caf::actor_addr, uint64_t>;

  static constexpr size_t kMaxWatchers = 1024;

  // Refused (with why) beyond kMaxWatchers or for a (bridge, stream) already watching.
  Result<Watcher*> add(Watcher w);
  void remove(const caf::actor_addr& bridge, uint64_t stream);
  // Every watch of a bridge that went away.
  void remove_bridge(const caf::actor_addr& bridge);
  Watcher* find(const caf::actor_addr& bridge, uint64_t stream);

  bool empty() const { return by_key_.empty(); }
  size_t count(WatchKind kind) const { return counts_[static_cast<int>(kind)]; }
  // Whether a watch already holds this bridge (the hub monitors each bridge once).
  bool knows(const caf::actor_addr& bridge) const;

  // Calls fn(watcher) for each watch of `kind` that wants the object `key` ("ns/name"; for pods,
  // the key of their job).
  void for_each(WatchKind kind, const std::string& key, const std::function<void(Watcher&)>& fn);

 private:
  std::map<Key, Watcher> by_key_;
  size_t counts_[3] = {0, 0, 0};
};

// Whether watch `w` wants the object `key` ("ns/name"; for pods, their job's key).
bool watches(const Watcher& w, const std::string& key);

// Frames of a watch (Responses with the watch's request id and an event).
std::string watch_job_event(uint64_t id, api::WatchEvent::Type type, api::Job::Reader job);
std::string watch_pod_event(uint64_t id, api::WatchEvent::Type type, api::Pod::Reader pod);
std::string watch_flow_event(uint64_t id, api::WatchEvent::Type type, const JobFlow& flow);
std::string watch_synced(uint64_t id);

}  // namespace caldera
