#include "actors/scheduler/scheduler_actor.hpp"

#include <map>

#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "actors/local_types.hpp"

namespace caldera {
namespace {

struct SchedulerState {
  Placer placer;
  std::map<std::string, caf::actor> requesters;  // job key -> the job actor waiting for bindings
  // job key -> the unplaced message sent last: a session runs on every release, and the same
  // message again would only cost the job actor an event.
  std::map<std::string, std::string> told;
  static inline const char* name = "scheduler";
};

// One scheduling session: place what fits, tell each job actor its bindings, and the job actors
// whose gangs do not fit why not.
void run_session(caf::stateful_actor<SchedulerState>* self) {
  auto& st = self->state;
  auto session = st.placer.session();
  for (auto& [key, why] : session.unplaced) {
    auto it = st.requesters.find(key);
    if (it == st.requesters.end()) continue;
    auto& told = st.told[key];
    if (told == why) continue;
    told = why;
    self->send(it->second, unsched_atom::value, std::move(why));
  }
  if (session.bindings.empty()) return;
  std::map<std::string, std::vector<Binding>> by_job;
  for (auto& b : session.bindings) by_job[b.job_key].push_back(std::move(b));
  for (auto& [key, list] : by_job) {
    st.told.erase(key);  // placed: if it waits again later, that is news
    auto it = self->state.requesters.find(key);
    if (it == self->state.requesters.end()) {
      for (const auto& b : list) self->state.placer.release(b.uid);
      continue;
    }
    self->send(it->second, placed_atom::value, std::move(list));
  }
}

caf::behavior scheduler(caf::stateful_actor<SchedulerState>* self) {
  return {
      [=](place_atom, GangRequest& r) {
        auto key = r.job_key;
        bool cancel = r.pods.empty();
        self->state.requesters[key] = caf::actor_cast<caf::actor>(self->current_sender());
        self->state.placer.request(std::move(r));
        // A new request may follow a restart that reset the job's reason: say why again.
        self->state.told.erase(key);
        if (cancel) self->state.requesters.erase(key);
        run_session(self);
      },
      [=](reserve_atom, const std::string& key, const std::string& uid, const std::string& node,
          const ResourceList& requests) { self->state.placer.reserve(key, uid, node, requests); },
      [=](release_atom, const std::vector<std::string>& uids) {
        for (const auto& uid : uids) self->state.placer.release(uid);
        run_session(self);
      },
      [=](capacity_atom, const std::string& node, const ResourceList& capacity, bool ready,
          const std::string& host_ip) {
        self->state.placer.upsert_node(node, capacity, ready, host_ip);
        run_session(self);
      },
      [=](nodes_atom) { return self->state.placer.nodes(); },
  };
}

}  // namespace

caf::actor spawn_scheduler(caf::actor_system& sys) {
  return sys.spawn(scheduler);
}

}  // namespace caldera
