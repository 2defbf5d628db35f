// The Queues and PriorityClasses: their records (store family Scheduling), pushed whole to the
// scheduler, which consumes them, and as names to the job directory, which admits the jobs that
// name them.
#pragma once

#include <memory>

#include <caf/actor.hpp>

#include "actors/protocol/scheduler.hpp"
#include "storage/store.hpp"

namespace caldera {

struct SchedulingObjectsEnv {
  std::shared_ptr<Store> store;
  protocol::scheduler scheduler;  // gets (queues_atom, queues, classes) at start and each change
};

// Messages (all from the job directory, which checks names and users first):
//   scheduling_names_atom -> (queue names, class names, global default class, closed queues)
//                                      what is stored now; the directory then gets
//                                      (scheduling_names_atom, ...) after every change
//   (create_atom, queues, classes) -> "" once stored in one commit, else why not
//   (delete_atom, name, bool queue) -> "" once its delete is durable, else why not
//   (update_atom, QueueSpec | PriorityClass) -> ApplyOutcome   `caldera apply` of one that may
//                                      exist: found, and changed once durable, or why not
//   (update_atom, queue name, "open" | "close") -> ApplyOutcome   caldera queue open|close
//   queues_atom -> (queues, classes)   every one, `default` queue included
// It reads its records from the store when it starts.
caf::actor spawn_scheduling_objects(caf::actor_system& sys, SchedulingObjectsEnv env);

}  // namespace caldera
