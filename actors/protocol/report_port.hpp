// What a worker may send the job directory: its node's pod reports, and nothing else. Workers get
// this port, never the directory itself, whose other messages only the coordinator's actors send.
#pragma once

#include <string>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/protocol/atoms.hpp"

namespace caldera::protocol {

// PodReport bytes (messages/cluster.capnp)
using report_port = caf::typed_actor<caf::reacts_to<report_atom, std::string>>;

}  // namespace caldera::protocol
