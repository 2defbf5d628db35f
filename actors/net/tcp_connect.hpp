// A TCP connection made without blocking past a deadline: what the node's coordinator checks and
// a JobFlow's endpoint probes share.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace caldera {

// Connects to host:port (a name or an address); by `deadline` at the latest. Returns the
// connected socket (non-blocking, close-on-exec; the caller closes it), or -1 with why in
// `error` (an errno value: ECONNREFUSED when nothing listens, ETIMEDOUT at the deadline).
int connect_within(const std::string& host, int32_t port,
                   std::chrono::steady_clock::time_point deadline, int* error = nullptr);

// Waits for `events` (poll's) on fd until the deadline; false once it has passed.
bool wait_for(int fd, short events, std::chrono::steady_clock::time_point deadline);

}  // namespace caldera
