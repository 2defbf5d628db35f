// What may be asked of a node actor: the coordinator's actors (through the membership) and the
// node's own link send only these, and the compiler holds them to it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/protocol/atoms.hpp"

namespace caldera::protocol {

// Payloads are cluster.capnp bytes, so that the node may live in another process.
using node = caf::typed_actor<
    // PodLaunch: run this pod; idempotent per pod uid
    caf::reacts_to<launch_atom, std::string>,
    // PodKill: stop it (SIGTERM, SIGKILL after its grace)
    caf::reacts_to<kill_atom, std::string>,
    // uid: kill it if it runs, then forget it and its logs
    caf::reacts_to<remove_atom, std::string>,
    // PodFiles: a running pod's plugin files, written again
    caf::reacts_to<files_atom, std::string>,
    // PodReservations -> per gang "" (reserved, all its pods) or why not (DESIGN rule 6)
    caf::replies_to<prepare_atom, std::string>::with<std::vector<std::string>>,
    // PodReservation: let go of what is only reserved
    caf::reacts_to<cancel_atom, std::string>,
    // PodAcks: the jobs hold these statuses, out of the outbox (DESIGN rule 5)
    caf::reacts_to<ack_atom, std::string>,
    // (uid, container, offset, max bytes) -> (data, next offset, eof) of <container>.log
    caf::replies_to<log_atom, std::string, std::string, int64_t, int64_t>::with<std::string,
                                                                                int64_t, bool>,
    // -> NodeRegistration: who it is and every pod it holds in memory, now (not those it
    // retired: ended, their end acknowledged)
    caf::replies_to<register_atom>::with<std::string>,
    // (uids) -> a PodReport for each of them it retired: how they ended
    caf::replies_to<lookup_atom, std::vector<std::string>>::with<std::vector<std::string>>>;

}  // namespace caldera::protocol
