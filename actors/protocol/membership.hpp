// What the coordinator's own actors may ask of the membership: the job actors, the job directory,
// the scheduler, the API router and the membership port hold it by this handle, so the compiler
// holds what they send to it. Other processes reach it only through protocol::membership_port.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/protocol/atoms.hpp"
#include "actors/protocol/local_types.hpp"

namespace caldera::protocol {

using membership = caf::typed_actor<
    // (job directory, API router, report port): whom registrations and node events go to, and
    // whom links send client requests and pod reports
    caf::reacts_to<coordinator_atom, caf::actor, caf::actor, caf::actor>,
    // the cluster port is open: nodes that have not registered a whole lease from now are lost
    caf::reacts_to<listen_atom>,
    // passed on from the membership port (see protocol::membership_port)
    caf::replies_to<register_atom, std::string,
                    caf::actor>::with<std::string, caf::actor, caf::actor, std::string, uint64_t>,
    caf::replies_to<heartbeat_atom, std::string, uint64_t>::with<bool>,
    // (node, bytes) passed on to that node actor (protocol::node)
    caf::reacts_to<launch_atom, std::string, std::string>,
    caf::reacts_to<kill_atom, std::string, std::string>,
    caf::reacts_to<remove_atom, std::string, std::string>,
    caf::reacts_to<files_atom, std::string, std::string>,
    caf::replies_to<prepare_atom, std::string, std::string>::with<std::vector<std::string>>,
    caf::reacts_to<cancel_atom, std::string, std::string>,
    // (node, uid, status seq): a job holds this status; gathered per node into PodAcks
    caf::reacts_to<ack_atom, std::string, std::string, uint64_t>,
    // (node, uid, container, offset, max bytes) -> that node's answer
    caf::replies_to<log_atom, std::string, std::string, std::string, int64_t,
                    int64_t>::with<std::string, int64_t, bool>,
    // (node, uids) -> that node's answer: how those of them it retired ended
    caf::replies_to<lookup_atom, std::string,
                    std::vector<std::string>>::with<std::vector<std::string>>,
    // -> every node it knows, with readiness, reason, incarnation, heartbeat and labels
    caf::replies_to<nodes_atom>::with<std::vector<NodeInfo>>>;

}  // namespace caldera::protocol
