// What may be asked of a flow actor (one per JobFlow): its jobs' actors tell it of their status,
// and the job directory wakes it or deletes it.
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
    caf::replies_to<delete_atom>::with<caf::ok_atom>>;

}  // namespace caldera::protocol
