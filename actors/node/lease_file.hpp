// The node's lease on disk, where its pods' supervisors (caldera-shim) read it even while
// calderad is dead or stopped: two copies of the deadline (ms of CLOCK_MONOTONIC), then the boot
// id, since a monotonic deadline means nothing after a reboot.
#pragma once

#include <cstdint>
#include <string>

namespace caldera::lease_file {

// Now in ms of CLOCK_MONOTONIC (std::chrono::steady_clock), the clock the deadline is in.
int64_t monotonic_ms();

// The deadline a file holds, written in this boot; 0 when it is missing, unreadable, torn, or
// from an earlier boot (its pods are gone with that boot).
int64_t read(const std::string& path);

// Writes the deadline in place (a fixed-size record, so a reader sees either copy whole or a
// mismatch it reads again). Not synced: the page cache is shared with every reader, and a machine
// that loses it has lost the pods too. Empty on success, else why not.
std::string write(const std::string& path, int64_t deadline_ms);

}  // namespace caldera::lease_file
