#include "messages/yaml/yaml_duration.hpp"

#include <array>
#include <cctype>
#include <limits>
#include <utility>

namespace caldera {
namespace {

constexpr __int128 kNs = 1, kUs = 1000 * kNs, kMs = 1000 * kUs, kS = 1000 * kMs, kMin = 60 * kS,
                   kHour = 60 * kMin;

// Longest spellings first so that "ms" is not read as "m" followed by "s".
constexpr std::array<std::pair<std::string_view, __int128>, 8> kUnits{{
    {"ns", kNs},
    {"us", kUs},
    {"\xC2\xB5s", kUs},  // U+00B5 micro sign
    {"\xCE\xBCs", kUs},  // U+03BC Greek mu
    {"ms", kMs},
    {"h", kHour},
    {"m", kMin},
    {"s", kS},
}};

bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

}  // namespace

std::optional<int64_t> parse_go_duration_ms(std::string_view s) {
  constexpr __int128 kLimit = std::numeric_limits<int64_t>::max();  // Go's range, in nanoseconds
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return 0;
  if (s.empty()) return std::nullopt;
  __int128 total_ns = 0;
  while (!s.empty()) {
    __int128 whole = 0, frac = 0, frac_scale = 1;
    size_t i = 0;
    bool digits = false;
    for (; i < s.size() && is_digit(s[i]); ++i, digits = true) {
      whole = whole * 10 + (s[i] - '0');
      if (whole > kLimit) return std::nullopt;
    }
    if (i < s.size() && s[i] == '.') {
      for (++i; i < s.size() && is_digit(s[i]); ++i, digits = true) {
        if (frac_scale < static_cast<__int128>(1e18)) {  // further digits are below a nanosecond
          frac = frac * 10 + (s[i] - '0');
          frac_scale *= 10;
        }
      }
    }
    if (!digits) return std::nullopt;
    s.remove_prefix(i);
    __int128 unit = 0;
    for (const auto& [name, ns] : kUnits) {
      if (s.starts_with(name)) {
        unit = ns;
        s.remove_prefix(name.size());
        break;
      }
    }
    if (unit == 0) return std::nullopt;  // Go requires a unit on every number but a lone "0"
    total_ns += whole * unit + frac * unit / frac_scale;
    if (total_ns > kLimit) return std::nullopt;
  }
  __int128 ms = (total_ns + kMs - 1) / kMs;
  return static_cast<int64_t>(negative ? -ms : ms);
}

}  // namespace caldera
