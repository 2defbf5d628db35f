// Stored values in Cap'n Proto's packed form: the WAL's bytes, and so each group commit's fsync,
// shrink, since the zero bytes of a message's words are left out.
#pragma once

#include <string>
#include <string_view>

namespace caldera {

// The form a value is stored in: whole words (every Cap'n Proto message) packed behind a marker,
// anything else as it is. A value that itself starts with a marker is kept behind the raw one.
std::string pack_value(std::string_view value);

// The value `stored` holds: unpacked if it was packed, as it is if it was stored before values
// were packed (no marker). A packed value that does not unpack (a damaged row) comes back as
// stored, so that its reader fails on it the way it fails on any damaged row.
std::string unpack_value(std::string_view stored);

}  // namespace caldera
