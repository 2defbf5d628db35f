#include "actors/scheduler/scheduling_objects.hpp"

#include <string>
#include <vector>

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/protocol/atoms.hpp"
#include "actors/protocol/local_types.hpp"
#include "actors/scheduler/scheduling_registry.hpp"
#include "actors/store/pending_commits.hpp"

namespace caldera {
namespace {

struct ObjectsState {
  SchedulingObjectsEnv env;
  SchedulingRegistry registry;
  PendingCommits commits;
  caf::actor directory;  // told the names after each change, once it has asked for them
  static inline const char* name = "scheduling_objects";
};

using ObjectsSelf = caf::stateful_actor<ObjectsState>;

caf::message names_of(const SchedulingRegistry& reg) {
  std::vector<std::string> queues, classes;
  for (const auto& [name, q] : reg.queues) queues.push_back(name);
  for (const auto& [name, c] : reg.classes) classes.push_back(name);
  return caf::make_message(std::move(queues), std::move(classes), reg.default_class());
}

// The scheduler learns every Queue and PriorityClass, whole, and the directory their names.
void changed(ObjectsSelf* self) {
  auto& st = self->state;
  self->send(st.env.scheduler, queues_atom::value, st.registry.all_queues(),
             st.registry.all_classes());
  if (st.directory)
    self->send(st.directory,
               caf::make_message(scheduling_names_atom::value) + names_of(st.registry));
}

caf::result<std::string> create(ObjectsSelf* self, std::vector<Queue> queues,
                                std::vector<PriorityClass> classes) {
  auto& st = self->state;
  std::vector<Write> writes;
  for (const auto& q : queues)
    writes.push_back({Family::Scheduling, queue_key(q.spec.name), queue_record(q)});
  for (const auto& c : classes)
    writes.push_back({Family::Scheduling, priority_class_key(c.name), priority_class_record(c)});
  auto rp = self->make_response_promise<std::string>();
  st.commits.commit(caf::actor_cast<caf::actor>(self), *st.env.store, std::move(writes),
                    [self, rp, queues, classes](const std::string& error) mutable {
                      auto& reg = self->state.registry;
                      if (!error.empty()) {
                        rp.deliver(error);
                        return;
                      }
                      for (auto& q : queues) {
                        spdlog::info("queue={} accepted weight={}", q.spec.name, q.spec.weight);
                        reg.queues[q.spec.name] = std::move(q);
                      }
                      for (auto& c : classes) {
                        spdlog::info("priorityclass={} accepted value={}", c.name, c.value);
                        reg.classes[c.name] = std::move(c);
                      }
                      changed(self);
                      rp.deliver(std::string());
                    });
  return rp;
}

caf::result<std::string> remove(ObjectsSelf* self, const std::string& name, bool queue) {
  auto& st = self->state;
  auto key = queue ? queue_key(name) : priority_class_key(name);
  auto rp = self->make_response_promise<std::string>();
  st.commits.commit(caf::actor_cast<caf::actor>(self), *st.env.store,
                    {Write{Family::Scheduling, key, std::nullopt}},
                    [self, rp, name, queue](const std::string& error) mutable {
                      auto& reg = self->state.registry;
                      if (!error.empty()) {
                        rp.deliver(error);
                        return;
                      }
                      if (queue ? reg.queues.erase(name) : reg.classes.erase(name)) {
                        spdlog::info("{}={} deleted", queue ? "queue" : "priorityclass", name);
                        changed(self);
                      }
                      rp.deliver(std::string());
                    });
  return rp;
}

caf::behavior scheduling_objects(ObjectsSelf* self, SchedulingObjectsEnv env) {
  self->state.env = std::move(env);
  recover(self->state.registry, *self->state.env.store);
  changed(self);
  return {
      [=](scheduling_names_atom) {
        self->state.directory = caf::actor_cast<caf::actor>(self->current_sender());
        return names_of(self->state.registry);
      },
      [=](create_atom, std::vector<Queue>& queues, std::vector<PriorityClass>& classes) {
        return create(self, std::move(queues), std::move(classes));
      },
      [=](delete_atom, const std::string& name, bool queue) { return remove(self, name, queue); },
      [=](queues_atom) {
        return caf::make_message(self->state.registry.all_queues(),
                                 self->state.registry.all_classes());
      },
      [=](committed_atom, uint64_t id, const std::string& error) {
        self->state.commits.done(id, error);
      },
  };
}

}  // namespace

caf::actor spawn_scheduling_objects(caf::actor_system& sys, SchedulingObjectsEnv env) {
  return sys.spawn(scheduling_objects, std::move(env));
}

}  // namespace caldera
