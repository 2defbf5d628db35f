#include "messages/model/completion_indexes.hpp"

#include <charconv>
#include <optional>

namespace caldera {

Result<IndexIntervals> parse_index_intervals(std::string_view text, int32_t completions) {
  IndexIntervals out;
  if (text.empty()) return Failure{"the set of indexes is empty"};
  auto number = [](std::string_view s) -> std::optional<int32_t> {
    int32_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
    return v;
  };
  size_t start = 0;
  while (start <= text.size()) {
    auto comma = text.find(',', start);
    auto part = text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    auto dash = part.find('-');
    auto lo = number(part.substr(0, dash));
    auto hi = dash == std::string_view::npos ? lo : number(part.substr(dash + 1));
    if (!lo || !hi || *lo < 0)
      return Failure{"\"" + std::string(part) +
                     "\" is not an index or an interval of indexes (e.g. \"0-3,5\")"};
    if (*lo > *hi) return Failure{"interval \"" + std::string(part) + "\" ends before it begins"};
    if (*hi >= completions)
      return Failure{"index " + std::to_string(*hi) + " is not below completions (" +
                     std::to_string(completions) + ")"};
    if (!out.empty() && *lo <= out.back().second)
      return Failure{
          "\"" + std::string(part) +
          "\" must come after the interval before it (in increasing order, not overlapping)"};
    out.emplace_back(*lo, *hi);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string format_index_intervals(const std::set<int32_t>& indexes) {
  std::string out;
  for (auto it = indexes.begin(); it != indexes.end();) {
    const int32_t first = *it;
    int32_t last = first;
    while (++it != indexes.end() && *it == last + 1) ++last;
    if (!out.empty()) out += ',';
    out += std::to_string(first);
    // Kubernetes writes two adjacent indexes as a pair, "4,5", and a range from three on.
    if (last == first + 1)
      out += "," + std::to_string(last);
    else if (last != first)
      out += "-" + std::to_string(last);
  }
  return out;
}

}  // namespace caldera
