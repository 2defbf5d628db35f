// The coordinator: registry of job actors and nodes, entry point of every client request, and
// router between job actors and node actors.
#pragma once

#include <memory>
#include <string>

#include <caf/actor.hpp>

#include "storage/store.hpp"

namespace caldera {

struct CoordinatorEnv {
  std::shared_ptr<Store> store;
  caf::actor scheduler;
  caf::actor timer;       // the job actors' clock (actors/timer)
  caf::actor membership;  // the nodes: routes to them, knows who is Ready (actors/cluster)
  std::string node_name;  // the node this coordinator runs on, for `ping`
};

// Messages:
//   (api_atom, Request bytes) -> Response bytes          the client API (messages/api.capnp)
//   (register_atom, NodeRegistration bytes, node actor)  a node (re)joins
//   (report_atom, PodReport bytes)                       routed to the pod's job actor
//   (launch_atom | kill_atom, node, bytes), (remove_atom, node, uid)   routed to node actors
//   (update_atom, job key, JobRecord bytes)              a job actor's latest durable record
//   (committed_atom, seq, error)                         its own JobTemplate/JobFlow writes done
//   (expire_atom, job key, uid)                          a job's TTL passed: delete it
// On start it reloads every job from the store and respawns its actor, and every JobTemplate and
// JobFlow (which have no actor: their controller is not in this version).
caf::actor spawn_coordinator(caf::actor_system& sys, CoordinatorEnv env);

}  // namespace caldera
