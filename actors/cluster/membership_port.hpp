// The actor published on the coordinator's cluster port: it takes registrations and heartbeats
// from other processes and passes them to the membership, which is never published itself.
#pragma once

#include <caf/fwd.hpp>

#include "actors/protocol/membership.hpp"
#include "actors/protocol/membership_port.hpp"

namespace caldera {

protocol::membership_port spawn_membership_port(caf::actor_system& sys,
                                                protocol::membership membership);

}  // namespace caldera
