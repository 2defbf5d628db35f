// What may be asked of a flow actor (one per JobFlow): the flow directory passes on its jobs'
// status, wakes it, stops it (passivation) or deletes it.
#pragma once

#include <cstdint>
#include <string>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/protocol/atoms.hpp"
#include "actors/protocol/local_types.hpp"

namespace caldera::protocol {

using jobflow = caf::typed_actor<
    // (job name, uid, created ms, status): one of its jobs changed, durably
    caf::reacts_to<job_status_atom, std::string, std::string, int64_t, JobStatus>,
    // (job name, uid): that job was deleted
    caf::reacts_to<job_gone_atom, std::string, std::string>,
    // look again at what is due (a JobTemplate arrived)
    caf::reacts_to<sync_atom>,
    // -> ok once no write of its record is in flight; the actor then quits
    caf::replies_to<delete_atom>::with<caf::ok_atom>,
    // -> true when it stops (still finished and idle), false when it goes on
    caf::replies_to<stop_atom>::with<bool>>;

}  // namespace caldera::protocol
