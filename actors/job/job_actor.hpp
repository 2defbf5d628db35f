// The job actor: one per Job. Its mailbox serializes everything that happens to the job; it feeds
// events to the pure controller core and carries the effects out once the new state is durable.
#pragma once

#include <memory>

#include <caf/actor.hpp>

#include "actors/job/core/job_model.hpp"
#include "storage/store.hpp"

namespace caldera {

struct JobActorEnv {
  std::shared_ptr<Store> store;
  caf::actor coordinator;  // caches records for reads, deletes expired jobs
  caf::actor scheduler;
  caf::actor timer;  // wakes the actor for its ticks (actors/timer); unset: CAF's own clock
  caf::actor nodes;  // routes launches, kills and removals to the pods' nodes (the membership)
};

// Messages:
//   (create_atom) -> ok_atom, once the new job is durable
//   (recover_atom)                    after a coordinator restart: re-reserve, re-sync
//   (report_atom, PodReport bytes)    a node's report on one of the job's pods; once what it
//                                     changed is durable (or it was applied already), the job
//                                     sends (ack_atom, node, uid, status seq) to `nodes`
//   (placed_atom, vector<Binding>)    from the scheduler
//   (node_up_atom, node, vector<string> uids)  a node (re)registered with these pods
//   (node_lost_atom, node, why)       the node went NotReady: its pods are evicted
//   (command_atom, action, command id) -> string, once the command's effect is durable: "" when
//                                     it acted, else why the job's phase ignores it
//   (tick_atom, due ms)               its own timer: delayed actions, deadline, TTL
// It sends (expire_atom, key, uid) to the coordinator once ttlSecondsAfterFinished has passed.
//   (list_pods_atom, after, limit) -> Response bytes: a page of its pods, with `continue`
//   (get_pod_atom, name) -> PodRecord bytes, or "" when it has no such pod
//   (delete_atom) -> ok_atom, once the record is gone; the actor then quits
caf::actor spawn_job_actor(caf::actor_system& sys, JobModel model, JobActorEnv env);

}  // namespace caldera
