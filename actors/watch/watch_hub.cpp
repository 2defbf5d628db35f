#include "actors/watch/watch_hub.hpp"

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <capnp/message.h>
#include <kj/exception.h>
#include <caf/all.hpp>

#include "actors/api/responses.hpp"
#include "actors/directory/stored_jobs.hpp"
#include "actors/job/job_record.hpp"
#include "actors/jobflow/flow_records.hpp"
#include "actors/watch/watchers.hpp"
#include "messages/api.capnp.h"
#include "messages/codec/flat.hpp"

namespace caldera {
namespace {

using Code = api::Error::Code;
using EventType = api::WatchEvent::Type;

struct HubState {
  std::shared_ptr<Store> store;
  caf::actor directory;
  Watchers watchers;
  bool pods_told = false;  // the directory was told that pods are watched
  // The job actors told to publish their pod changes, by job key: a pods watch wants them.
  std::map<std::string, caf::actor> publishing;
  static inline const char* name = "watch_hub";
};

using HubSelf = caf::stateful_actor<HubState>;

void send_frame(HubSelf* self, const Watcher& w, std::string frame) {
  self->send(w.bridge, watch_event_atom::value, w.stream, std::move(frame));
}

// `record`: the job's job row; `spec`: its spec row, or "" to read it from the store.
void publish_job(HubSelf* self, const std::string& key, EventType type, const std::string& record,
                 std::string spec) {
  auto& st = self->state;
  if (st.watchers.count(WatchKind::Jobs) == 0 || record.empty()) return;
  bool wanted = false;
  st.watchers.for_each(WatchKind::Jobs, key, [&](Watcher& w) { wanted |= w.synced; });
  if (!wanted) return;
  if (spec.empty()) spec = st.store->get(Family::Specs, key).value_or(std::string());
  capnp::MallocMessageBuilder b;
  fill_job(b, record, spec);
  auto job = b.getRoot<api::Job>().asReader();
  st.watchers.for_each(WatchKind::Jobs, key, [&](Watcher& w) {
    if (w.synced) send_frame(self, w, watch_job_event(w.request_id, type, job));
  });
}

void publish_flow(HubSelf* self, const JobFlow& flow, EventType type) {
  self->state.watchers.for_each(WatchKind::JobFlows, flow.spec.key(), [&](Watcher& w) {
    if (w.synced) send_frame(self, w, watch_flow_event(w.request_id, type, flow));
  });
}

// `page`: a Response listing pods; `types`: one letter per pod (A, M, D), or empty: all Added.
void send_pods(HubSelf* self, const Watcher& w, const std::string& page, const std::string& types) {
  FlatReader reader(page, record_reader_options());
  auto pods = reader.root<api::Response>().getPods();
  for (unsigned i = 0; i < pods.size(); ++i) {
    const char t = i < types.size() ? types[i] : 'A';
    auto type = t == 'D' ? EventType::DELETED : t == 'M' ? EventType::MODIFIED : EventType::ADDED;
    send_frame(self, w, watch_pod_event(w.request_id, type, pods[i]));
  }
}

// A settled job's pods, as the store holds them (they change no more).
void send_stored_pods(HubSelf* self, const Watcher& w, const std::string& key) {
  if (auto model = load_stored_job(*self->state.store, key))
    send_pods(self, w, pod_page(*model, std::string(), std::numeric_limits<uint32_t>::max()), {});
}

void publish_pods(HubSelf* self, const std::string& job_key, const std::string& page,
                  const std::string& types) {
  self->state.watchers.for_each(WatchKind::Pods, job_key, [&](Watcher& w) {
    // Not listed yet: the list it is waiting for holds these changes.
    if (w.live_asked && !w.listing.count(job_key)) send_pods(self, w, page, types);
  });
}

bool pods_wanted(HubSelf* self, const std::string& key) {
  bool want = false;
  self->state.watchers.for_each(WatchKind::Pods, key, [&](Watcher&) { want = true; });
  return want;
}

// A job publishes its pod changes only while a pods watch wants it.
void publish_from(HubSelf* self, const std::string& key, const caf::actor& actor) {
  auto& st = self->state;
  auto it = st.publishing.find(key);
  if (it != st.publishing.end() && it->second == actor) return;
  st.publishing[key] = actor;
  self->send(actor, watch_atom::value, true);
}

// After watches ended: the jobs no watch wants any more stop publishing, and once no pods watch
// is left the directory stops naming the jobs it starts.
void unwatch_pods(HubSelf* self) {
  auto& st = self->state;
  for (auto it = st.publishing.begin(); it != st.publishing.end();) {
    if (pods_wanted(self, it->first)) {
      ++it;
      continue;
    }
    self->send(it->second, watch_atom::value, false);
    it = st.publishing.erase(it);
  }
  if (st.watchers.count(WatchKind::Pods) == 0 && st.pods_told) {
    st.pods_told = false;
    self->send(st.directory, pods_watched_atom::value, false);
  }
}

// Every watch of `bridge` (stream 0), or one; a bridge left without watches is no longer
// monitored (each `caldera wait` would otherwise leave a monitor behind on it).
void end_watch(HubSelf* self, const caf::actor_addr& bridge, uint64_t stream) {
  auto& ws = self->state.watchers;
  const size_t pods = ws.count(WatchKind::Pods);
  if (stream == 0)
    ws.remove_bridge(bridge);
  else
    ws.remove(bridge, stream);
  if (!ws.knows(bridge)) self->demonitor(bridge);
  if (ws.count(WatchKind::Pods) < pods) unwatch_pods(self);
}

void synced_if_listed(HubSelf* self, Watcher& w) {
  if (w.live_asked && w.listing.empty() && !w.synced) {
    w.synced = true;
    send_frame(self, w, watch_synced(w.request_id));
  }
}

// A live job's answer to a pods watch's list; none: it stopped meanwhile (passivation, or its
// delete), and the store holds what it had.
void pods_listed(HubSelf* self, const caf::actor_addr& bridge, uint64_t stream,
                 const std::string& job_key, const std::string* page) {
  auto* w = self->state.watchers.find(bridge, stream);
  if (!w || !w->listing.erase(job_key)) return;
  if (page)
    send_pods(self, *w, *page, {});
  else
    send_stored_pods(self, *w, job_key);
  synced_if_listed(self, *w);
}

// A pods watch lists the settled jobs' pods from the store and asks each live job (told first to
// publish its changes: its answer comes after those it had published, and before later ones).
void list_pods(HubSelf* self, const caf::actor_addr& bridge, uint64_t stream,
               const std::vector<std::string>& keys, const std::vector<caf::actor>& actors) {
  auto* w = self->state.watchers.find(bridge, stream);
  if (!w) return;
  w->live_asked = true;
  std::map<std::string, caf::actor> live;
  for (size_t i = 0; i < keys.size() && i < actors.size(); ++i) live[keys[i]] = actors[i];
  const std::string ns = w->ns;
  for_each_stored_job(*self->state.store, Family::Jobs, ns, "",
                      [&](std::string_view k, std::string_view) {
                        const std::string key(k);
                        if (watches(*w, key) && !live.count(key)) send_stored_pods(self, *w, key);
                        return true;
                      });
  for (const auto& [key, actor] : live) {
    if (!watches(*w, key)) continue;
    publish_from(self, key, actor);
    w->listing.insert(key);
    self->request(actor, caf::infinite, list_pods_atom::value, std::string(),
                  std::numeric_limits<uint32_t>::max())
        .then([self, bridge, stream,
               key](const std::string& page) { pods_listed(self, bridge, stream, key, &page); },
              [self, bridge, stream, key](caf::error&) {
                pods_listed(self, bridge, stream, key, nullptr);
              });
  }
  synced_if_listed(self, *w);
}

// Starts a watch: its objects as they are now (Added each, then Synced), then their changes.
caf::result<std::string> start_watch(HubSelf* self, const std::string& bytes, uint64_t stream,
                                     const caf::actor& bridge) {
  auto& st = self->state;
  uint64_t id = 0;
  Watcher w;
  try {
    FlatReader reader(bytes, client_reader_options());
    auto req = reader.root<api::Request>();
    id = req.getId();
    if (!req.isWatch()) return error_response(id, Code::INVALID_ARGUMENT, "not a watch request");
    auto watch = req.getWatch();
    auto kind = parse_watch_kind(watch.getKind());
    if (!kind) return error_response(id, Code::INVALID_ARGUMENT, kind.error(), "watch.kind");
    w.kind = *kind;
    w.batch = is_batch_watch(watch.getKind());
    w.ns = watch.getNamespace();
    w.name = watch.getName();
    if (!w.name.empty() && w.ns.empty()) w.ns = "default";
  } catch (const kj::Exception& e) {
    return unreadable_response(id, e.getDescription().cStr());
  }
  if (!st.directory)
    return error_response(id, Code::UNAVAILABLE, "the coordinator is starting; retry");
  w.bridge = bridge;
  w.stream = stream;
  w.request_id = id;
  const bool known = st.watchers.knows(bridge.address());
  auto added = st.watchers.add(std::move(w));
  if (!added) return error_response(id, Code::UNAVAILABLE, added.error());
  Watcher& watcher = **added;
  if (!known) self->monitor(bridge);  // its watches end with it
  const auto ns = watcher.ns;
  switch (watcher.kind) {
    case WatchKind::Jobs:
      for_each_stored_job(
          *st.store, Family::Jobs, ns, "", [&](std::string_view k, std::string_view row) {
            const std::string key(k);
            if (!watches(watcher, key)) return true;
            auto spec = st.store->get(Family::Specs, key);
            capnp::MallocMessageBuilder b;
            fill_job(b, std::string(row), spec.value_or(std::string()));
            send_frame(self, watcher,
                       watch_job_event(id, EventType::ADDED, b.getRoot<api::Job>().asReader()));
            return true;
          });
      break;
    case WatchKind::JobFlows:
      st.store->scan_from(Family::Flows, ns.empty() ? std::string() : ns + "/",
                          [&](std::string_view k, std::string_view row) {
                            const std::string key(k);
                            if (!ns.empty() && key.compare(0, ns.size() + 1, ns + "/") != 0)
                              return false;
                            if (!watches(watcher, key)) return true;
                            if (auto flow = FlowKind<JobFlow>::parse(row))
                              send_frame(self, watcher,
                                         watch_flow_event(id, EventType::ADDED, *flow));
                            return true;
                          });
      break;
    case WatchKind::Pods: {
      // The directory names every job actor it starts from now on; then it says which jobs are
      // live (messages to it arrive in order), and the list follows its answer.
      if (!st.pods_told) {
        st.pods_told = true;
        self->send(st.directory, pods_watched_atom::value, true);
      }
      const auto addr = bridge.address();
      self->request(st.directory, caf::infinite, live_jobs_atom::value, ns)
          .then(
              [self, addr, stream](const std::vector<std::string>& keys,
                                   const std::vector<caf::actor>& actors) {
                list_pods(self, addr, stream, keys, actors);
              },
              [self, addr, stream](caf::error&) { list_pods(self, addr, stream, {}, {}); });
      return ok_response(id);
    }
  }
  watcher.synced = true;
  send_frame(self, watcher, watch_synced(id));
  return ok_response(id);
}

caf::behavior watch_hub(HubSelf* self, std::shared_ptr<Store> store) {
  self->state.store = std::move(store);
  self->set_down_handler([=](caf::down_msg& msg) { end_watch(self, msg.source, 0); });
  return {
      [=](coordinator_atom, const caf::actor& directory) { self->state.directory = directory; },
      [=](watch_atom, const std::string& bytes, uint64_t stream, const caf::actor& bridge) {
        return start_watch(self, bytes, stream, bridge);
      },
      [=](unwatch_atom, const caf::actor& bridge, uint64_t stream) {
        end_watch(self, bridge.address(), stream);
      },
      [=](job_event_atom, const std::string& key, int32_t type, const std::string& record,
          std::string& spec) {
        publish_job(self, key, static_cast<EventType>(type), record, std::move(spec));
      },
      [=](pod_events_atom, const std::string& key, const std::string& page,
          const std::string& types) { publish_pods(self, key, page, types); },
      [=](flow_event_atom, const JobFlow& flow, int32_t type) {
        publish_flow(self, flow, static_cast<EventType>(type));
      },
      [=](job_started_atom, const std::string& key, const caf::actor& actor) {
        if (!actor)
          self->state.publishing.erase(key);  // stopped, or deleted
        else if (pods_wanted(self, key))
          publish_from(self, key, actor);
        else
          self->send(actor, watch_atom::value, false);  // it starts publishing while pods are
                                                        // watched: these are not
      },
  };
}

}  // namespace

protocol::watch_hub spawn_watch_hub(caf::actor_system& sys, std::shared_ptr<Store> store) {
  return caf::actor_cast<protocol::watch_hub>(sys.spawn(watch_hub, std::move(store)));
}

}  // namespace caldera
