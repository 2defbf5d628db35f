// What may be sent to the watch hub (actors/watch): the API router starts and ends watches, job
// actors and the job directory publish changes to it.
#pragma once

#include <cstdint>
#include <string>

#include <caf/actor.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/protocol/atoms.hpp"
#include "actors/protocol/local_types.hpp"
#include "messages/model/job_flow.hpp"

namespace caldera::protocol {

using watch_hub = caf::typed_actor<
    // (Request bytes, stream, bridge) -> Response bytes: ok, or why not; the bridge then gets
    // (watch_event_atom, stream, frame) for each object, Synced, then each change
    caf::replies_to<watch_atom, std::string, uint64_t, caf::actor>::with<std::string>,
    // (bridge, stream): one watch ends; stream 0: every one of the bridge's
    caf::reacts_to<unwatch_atom, caf::actor, uint64_t>,
    // (job key, api::WatchEvent::Type, its job row, its spec row) once the change is durable;
    // spec row "": the store's (a Deleted event carries it, the store has it no more)
    caf::reacts_to<job_event_atom, std::string, int32_t, std::string, std::string>,
    // (job key, Response bytes with pods, one type letter per pod)
    caf::reacts_to<pod_events_atom, std::string, std::string, std::string>,
    // (flow, api::WatchEvent::Type)
    caf::reacts_to<flow_event_atom, JobFlow, int32_t>,
    // (job key, its actor): it may publish its pods while a pods watch wants them; (job key,
    // none): its actor stopped
    caf::reacts_to<job_started_atom, std::string, caf::actor>,
    // the job directory, once at start
    caf::reacts_to<coordinator_atom, caf::actor>>;

}  // namespace caldera::protocol
