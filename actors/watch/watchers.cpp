#include "actors/watch/watchers.hpp"

#include <capnp/message.h>

#include "messages/codec/codec.hpp"
#include "messages/codec/flat.hpp"
#include "messages/model/job_spec.hpp"

namespace caldera {

Result<WatchKind> parse_watch_kind(const std::string& text) {
  if (text == "jobs" || text == "job" || text == "vcjob" || text == "vj" || is_batch_watch(text))
    return WatchKind::Jobs;
  if (text == "pods" || text == "pod" || text == "po") return WatchKind::Pods;
  if (text == "jobflows" || text == "jobflow" || text == "jf") return WatchKind::JobFlows;
  return Failure{"cannot watch \"" + text +
                 "\": the kinds are jobs, jobs.batch, pods and jobflows"};
}

bool is_batch_watch(const std::string& text) {
  return text == kBatchJobResource || text == "job.batch";
}

Result<Watcher*> Watchers::add(Watcher w) {
  if (by_key_.size() >= kMaxWatchers)
    return Failure{"the coordinator serves " + std::to_string(kMaxWatchers) +
                   " watches already (its limit); cancel one first"};
  Key key{w.bridge.address(), w.stream};
  if (by_key_.count(key)) return Failure{"this watch exists already"};
  ++counts_[static_cast<int>(w.kind)];
  return &by_key_.emplace(key, std::move(w)).first->second;
}

void Watchers::remove(const caf::actor_addr& bridge, uint64_t stream) {
  auto it = by_key_.find(Key{bridge, stream});
  if (it == by_key_.end()) return;
  --counts_[static_cast<int>(it->second.kind)];
  by_key_.erase(it);
}

void Watchers::remove_bridge(const caf::actor_addr& bridge) {
  for (auto it = by_key_.lower_bound(Key{bridge, 0});
       it != by_key_.end() && it->first.first == bridge;) {
    --counts_[static_cast<int>(it->second.kind)];
    it = by_key_.erase(it);
  }
}

Watcher* Watchers::find(const caf::actor_addr& bridge, uint64_t stream) {
  auto it = by_key_.find(Key{bridge, stream});
  return it == by_key_.end() ? nullptr : &it->second;
}

bool Watchers::knows(const caf::actor_addr& bridge) const {
  auto it = by_key_.lower_bound(Key{bridge, 0});
  return it != by_key_.end() && it->first.first == bridge;
}

void Watchers::for_each(WatchKind kind, const std::string& key,
                        const std::function<void(Watcher&)>& fn) {
  if (count(kind) == 0) return;
  for (auto& [k, w] : by_key_)
    if (w.kind == kind && watches(w, key)) fn(w);
}

bool watches(const Watcher& w, const std::string& key) {
  auto slash = key.find('/');
  if (slash == std::string::npos) return false;
  if (!w.ns.empty() && key.compare(0, slash, w.ns) != 0) return false;
  if (!w.ns.empty() && slash != w.ns.size()) return false;
  // A watch of jobs sees one kind; a watch of pods, the pods of a job of either.
  if (w.kind == WatchKind::Jobs && is_batch_job_key(key) != w.batch) return false;
  return w.name.empty() || key.compare(key.rfind('/') + 1, std::string::npos, w.name) == 0;
}

namespace {

template <class Fill>
std::string event_frame(uint64_t id, api::WatchEvent::Type type, Fill&& fill) {
  capnp::MallocMessageBuilder b;
  auto r = b.initRoot<api::Response>();
  r.setId(id);
  auto e = r.initEvent();
  e.setType(type);
  fill(e);
  return to_bytes(b);
}

}  // namespace

std::string watch_job_event(uint64_t id, api::WatchEvent::Type type, api::Job::Reader job) {
  return event_frame(id, type, [&](api::WatchEvent::Builder e) { e.setJob(job); });
}

std::string watch_pod_event(uint64_t id, api::WatchEvent::Type type, api::Pod::Reader pod) {
  return event_frame(id, type, [&](api::WatchEvent::Builder e) { e.setPod(pod); });
}

std::string watch_flow_event(uint64_t id, api::WatchEvent::Type type, const JobFlow& flow) {
  return event_frame(id, type, [&](api::WatchEvent::Builder e) { encode(flow, e.initJobFlow()); });
}

std::string watch_synced(uint64_t id) {
  return event_frame(id, api::WatchEvent::Type::SYNCED,
                     [](api::WatchEvent::Builder e) { e.setNone(); });
}

}  // namespace caldera
