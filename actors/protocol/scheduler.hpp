// What may be asked of the scheduler: job actors, the job directory, the membership and the API
// router hold it by this handle, so the compiler holds what they send to it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/protocol/atoms.hpp"
#include "actors/protocol/local_types.hpp"

namespace caldera::protocol {

using scheduler = caf::typed_actor<
    // a job's pods that wait for nodes (none: its pod group is cancelled); it answers later
    // with (placed_atom, bindings) or (unsched_atom, why, enqueued) to the sender
    caf::reacts_to<place_atom, GangRequest>,
    // (job key) -> ok once its pod group request is cancelled: a job that stops (passivation)
    // has heard every binding sent before
    caf::replies_to<forget_atom, std::string>::with<caf::ok_atom>,
    // (job key, uid, node, requests, its pod group) a binding it adopts after a restart
    caf::reacts_to<reserve_atom, std::string, std::string, std::string, ResourceList, PodGroupInfo>,
    // the Queues and PriorityClasses, whole, on start and after each change
    caf::reacts_to<queues_atom, std::vector<Queue>, std::vector<PriorityClass>>,
    // -> each queue's allocated, deserved share and pod groups
    caf::replies_to<queues_atom>::with<std::vector<QueueStatus>>,
    // uids whose resources are free again
    caf::reacts_to<release_atom, std::vector<std::string>>,
    // (node, capacity, ready, host) a node joined, changed or went away
    caf::reacts_to<capacity_atom, std::string, ResourceList, bool, std::string,
                   std::map<std::string, std::string>>,
    // -> what every node's pods hold
    caf::replies_to<nodes_atom>::with<std::vector<NodeInfo>>,
    // its way to the nodes: from then on every gang is reserved on them before it is bound
    caf::reacts_to<membership_atom, caf::actor>>;

}  // namespace caldera::protocol
