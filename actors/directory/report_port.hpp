// The actor a worker's link sends its pod reports to: it passes them to the job directory, and
// CAF's type check refuses anything else a worker might send.
#pragma once

#include <caf/fwd.hpp>

#include "actors/protocol/directory.hpp"
#include "actors/protocol/report_port.hpp"

namespace caldera {

protocol::report_port spawn_report_port(caf::actor_system& sys, protocol::directory directory);

}  // namespace caldera
