// Go duration strings ("300s", "1h30m", "500ms"), as Volcano's policy timeouts are written.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace caldera {

// Milliseconds in a Go duration string (time.ParseDuration syntax); a positive amount below 1ms
// rounds up to 1ms so that it stays positive. nullopt when malformed or beyond Go's range.
std::optional<int64_t> parse_go_duration_ms(std::string_view text);

}  // namespace caldera
