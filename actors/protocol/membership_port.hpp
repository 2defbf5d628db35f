// What another process may ask of the coordinator: the one actor published on its cluster port.
// Anything else sent there is refused by CAF's type check, before any of our code runs.
#pragma once

#include <cstdint>
#include <string>

#include <caf/actor.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/protocol/atoms.hpp"

namespace caldera::protocol {

using membership_port = caf::typed_actor<
    // (NodeRegistration bytes, the node actor) -> (refusal, report port, API router, cluster id,
    // generation): when admitted, an empty refusal, whom the node's reports go to
    // (protocol::report_port), whom its gateway's client requests go to, and the cluster's
    // identity ("" while the coordinator's is unsettled, or it acts on nothing)
    caf::replies_to<register_atom, std::string,
                    caf::actor>::with<std::string, caf::actor, caf::actor, std::string, uint64_t>,
    // (node, incarnation) -> false when the node must register again
    caf::replies_to<heartbeat_atom, std::string, uint64_t>::with<bool>>;

}  // namespace caldera::protocol
