// Resource quantities as Kubernetes writes them, kept as exact integers in milli-units.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace caldera {

// A quantity in thousandths of its unit: cpu "500m" -> 500, "2" -> 2000, memory "1Ki" -> 1024000.
using MilliValue = int64_t;

// Parses "500m", "2", "1.5", "1Gi", "512Mi", "1e3", "100k"; nullopt when malformed, negative or
// too large to hold in milli-units.
std::optional<MilliValue> parse_quantity(std::string_view text);

// The shortest exact Kubernetes spelling: 500 -> "500m", 2000 -> "2", 1073741824000 -> "1Gi".
std::string format_quantity(MilliValue value);

// Resource name -> amount, e.g. {"cpu": 500, "memory": 268435456000, "pods": 1000}.
struct ResourceList {
  std::map<std::string, MilliValue> values;

  MilliValue get(const std::string& name) const {
    auto it = values.find(name);
    return it == values.end() ? 0 : it->second;
  }
  void add(const ResourceList& other);
  void subtract(const ResourceList& other);
  // True when every amount named in `request` is available here (names absent here count as 0).
  bool fits(const ResourceList& request) const;
  bool operator==(const ResourceList&) const = default;
};

// The positive amounts as a message says them: "cpu 500m, memory 1Gi".
std::string resource_text(const ResourceList& r);

}  // namespace caldera
