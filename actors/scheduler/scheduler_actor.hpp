// The scheduler actor: owns the Placer and binds waiting pods to nodes whenever room appears.
#pragma once

#include <string>
#include <vector>

#include <caf/fwd.hpp>

#include "actors/scheduler/core/placer.hpp"

namespace caldera {

// Messages (all local to the coordinator process):
//   (place_atom, GangRequest)                      -> later (placed_atom, vector<Binding>) to
//   sender (reserve_atom, job_key, uid, node, ResourceList)   adopt a binding after a restart
//   (release_atom, vector<string> uids)
//   (capacity_atom, node, ResourceList, bool ready)    a node joined, changed or went away
//   (nodes_atom) -> vector<NodeInfo>
//   (membership_atom, membership)   its way to the nodes: from then on every placed gang is
//                                   reserved on its nodes (prepare) and bound only when all
//                                   confirm; on a refusal or silence it is released and queued
//                                   again, and its job told why (unsched_atom)
caf::actor spawn_scheduler(caf::actor_system& sys);

}  // namespace caldera
