#include "actors/scheduler/scheduling_objects.hpp"

#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/protocol/atoms.hpp"
#include "actors/protocol/local_types.hpp"
#include "actors/scheduler/core/scheduling_update.hpp"
#include "actors/scheduler/scheduling_registry.hpp"
#include "actors/store/pending_commits.hpp"
#include "actors/uid.hpp"
#include "common/clock.hpp"

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
  std::vector<std::string> queues, classes, closed;
  for (const auto& [name, q] : reg.queues) {
    queues.push_back(name);
    if (q.spec.state == kQueueClosed) closed.push_back(name);
  }
  for (const auto& [name, c] : reg.classes) classes.push_back(name);
  return caf::make_message(std::move(queues), std::move(classes), reg.default_class(),
                           std::move(closed));
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
  for (auto& q : queues)
    if (q.spec.state.empty()) q.spec.state = kQueueOpen;
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

// The stored queue `name`; `default` as it is before any document wrote it.
std::optional<Queue> stored_queue(const SchedulingRegistry& reg, const std::string& name) {
  auto it = reg.queues.find(name);
  if (it != reg.queues.end()) return it->second;
  if (name == kDefaultQueue)
    return Queue{"", 0, QueueSpec{kDefaultQueue, {}, {}, 1, {}, true, kQueueOpen}};
  return std::nullopt;
}

// Writes an updated object, then tells the scheduler and the directory; `done` hears "" once
// durable, else why not.
template <class T>
void write_update(ObjectsSelf* self, std::string key, std::string record, T next,
                  std::function<void(const std::string&)> done) {
  auto& st = self->state;
  st.commits.commit(caf::actor_cast<caf::actor>(self), *st.env.store,
                    {Write{Family::Scheduling, std::move(key), std::move(record)}},
                    [self, next = std::move(next), done](const std::string& error) mutable {
                      if (error.empty()) {
                        auto& reg = self->state.registry;
                        if constexpr (std::is_same_v<T, Queue>) {
                          spdlog::info("queue={} updated weight={} state={} generation={}",
                                       next.spec.name, next.spec.weight, next.spec.state,
                                       next.generation);
                          reg.queues[next.spec.name] = std::move(next);
                        } else {
                          spdlog::info("priorityclass={} updated", next.name);
                          reg.classes[next.name] = std::move(next);
                        }
                        changed(self);
                      }
                      done(error);
                    });
}

caf::result<ApplyOutcome> write_change(ObjectsSelf* self, Change<Queue> change) {
  ApplyOutcome out{true, false, change.next.uid, std::move(change.diags)};
  if (!out.diags.ok() || !change.changed) return out;
  if (change.next.uid.empty()) {  // `default`, written for the first time
    change.next.uid = random_uid();
    change.next.created_ms = system_now_ms();
    out.uid = change.next.uid;
  }
  auto rp = self->make_response_promise<ApplyOutcome>();
  auto key = queue_key(change.next.spec.name);
  auto record = queue_record(change.next);
  write_update(self, std::move(key), std::move(record), std::move(change.next),
               [rp, out](const std::string& error) mutable {
                 if (error.empty())
                   out.changed = true;
                 else
                   out.diags.error("", "the queue was not stored: " + error);
                 rp.deliver(out);
               });
  return rp;
}

caf::result<ApplyOutcome> update(ObjectsSelf* self, QueueSpec applied) {
  auto stored = stored_queue(self->state.registry, applied.name);
  if (!stored) return ApplyOutcome{};
  return write_change(self, update_queue(*stored, std::move(applied)));
}

caf::result<ApplyOutcome> update(ObjectsSelf* self, const PriorityClass& applied) {
  auto& reg = self->state.registry;
  auto it = reg.classes.find(applied.name);
  if (it == reg.classes.end()) return ApplyOutcome{};
  auto change = update_priority_class(it->second, applied, reg.default_class());
  ApplyOutcome out{true, false, it->second.uid, std::move(change.diags)};
  if (!out.diags.ok() || !change.changed) return out;
  auto rp = self->make_response_promise<ApplyOutcome>();
  auto record = priority_class_record(change.next);
  write_update(self, priority_class_key(applied.name), std::move(record), std::move(change.next),
               [rp, out](const std::string& error) mutable {
                 if (error.empty())
                   out.changed = true;
                 else
                   out.diags.error("", "the priority class was not stored: " + error);
                 rp.deliver(out);
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
      [=](update_atom, QueueSpec& applied) { return update(self, std::move(applied)); },
      [=](update_atom, const PriorityClass& applied) { return update(self, applied); },
      // (name, "open" | "close"): found false when there is no such queue
      [=](update_atom, const std::string& name, const std::string& action) {
        auto stored = stored_queue(self->state.registry, name);
        if (!stored) return caf::result<ApplyOutcome>(ApplyOutcome{});
        return write_change(self, operate_queue(*stored, action));
      },
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
