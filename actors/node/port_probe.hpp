// Whether a TCP port refuses connections: nothing listens there now (the coordinator's process is
// down), as opposed to a host that does not answer at all (a partition, a hung machine).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace caldera {

// Connects to host:port without blocking for longer than `wait`; true only when the connection
// was refused (ECONNREFUSED). A connection that succeeds, times out, or fails otherwise: false.
bool connection_refused(const std::string& host, uint16_t port, std::chrono::milliseconds wait);

}  // namespace caldera
