// The node actor: one per node. Runs the pods bound to its node (processes, or timers when
// simulated), keeps them in its own column family, and reports their status to the coordinator.
#pragma once

#include <memory>
#include <string>

#include <caf/actor.hpp>

#include "messages/resources.hpp"
#include "storage/store.hpp"

namespace caldera {

struct NodeActorEnv {
  std::string name;
  std::string address;  // host:cluster-port, for `get nodes`
  ResourceList capacity;
  std::string data_dir;   // pods live in <data_dir>/pods/<uid>
  std::string shim_path;  // the caldera-shim executable
  std::shared_ptr<Store> store;
  caf::actor coordinator;
  bool is_coordinator = false;
};

// Messages (payloads are cluster.capnp bytes, so the coordinator may be in another process):
//   (launch_atom, PodLaunch bytes)   idempotent per pod uid
//   (kill_atom, PodKill bytes)
//   (remove_atom, uid)               kill if running, then forget the pod and its logs
//   (log_atom, uid, container, offset, max_bytes) -> (data, next_offset, eof)
// On start it re-adopts the pods of an earlier run and sends (register_atom, NodeRegistration
// bytes, itself) to the coordinator.
caf::actor spawn_node_actor(caf::actor_system& sys, NodeActorEnv env);

}  // namespace caldera
