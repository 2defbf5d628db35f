// Reading YAML nodes into plain values with field paths: type errors and unknown-field warnings.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "messages/model/diagnostic.hpp"
#include "messages/model/resources.hpp"
#include "messages/yaml/yaml_tree.hpp"

namespace caldera {

std::string child_path(const std::string& path, std::string_view key);
std::string index_path(const std::string& path, size_t index);

// Where diagnostics go while one parse runs: the document prefix and a node budget, because
// aliases let a short text expand into more nodes than it is worth walking.
class YamlContext {
 public:
  explicit YamlContext(Diagnostics& diags, size_t node_budget = 1'000'000)
      : diags_(diags), budget_(node_budget) {}

  void set_prefix(std::string prefix) { prefix_ = std::move(prefix); }
  void error(const std::string& path, std::string message);
  void warn(const std::string& path, std::string message);
  // Accounts for one more node; false (with a single error) once the budget is spent.
  bool spend();

 private:
  std::string full(const std::string& path) const;

  Diagnostics& diags_;
  std::string prefix_;
  size_t budget_;
  bool exhausted_ = false;
};

// A mapping being read: remembers which keys were consumed so the rest can be reported.
class MapReader {
 public:
  // A null node reads as an empty mapping; any other non-mapping is an error at `path`.
  MapReader(YamlContext& ctx, const YamlNode& node, std::string path);

  bool valid() const { return valid_; }
  const std::string& path() const { return path_; }
  std::string path(std::string_view key) const { return child_path(path_, key); }
  const std::vector<std::pair<std::string, YamlNode>>& entries() const { return entries_; }

  // The value under `key`; nullopt when absent or null. Marks the key as known.
  std::optional<YamlNode> get(std::string_view key);
  void str(std::string_view key, std::string& out);
  void i32(std::string_view key, int32_t& out);
  void i32(std::string_view key, std::optional<int32_t>& out);
  void i64(std::string_view key, std::optional<int64_t>& out);
  void strings(std::string_view key, std::vector<std::string>& out);
  void string_map(std::string_view key, std::map<std::string, std::string>& out);
  void quantities(std::string_view key, ResourceList& out);

  // Kubernetes fields caldera accepts and does not use: a warning each when present.
  void ignore(std::initializer_list<std::string_view> keys);
  // A warning for every key neither read nor ignored.
  void warn_unknown();

 private:
  YamlContext& ctx_;
  std::string path_;
  bool valid_ = true;
  std::vector<std::pair<std::string, YamlNode>> entries_;
  std::vector<bool> used_;
};

std::optional<std::string> read_string(YamlContext& ctx, const YamlNode& node,
                                       const std::string& path);
std::optional<int64_t> read_int(YamlContext& ctx, const YamlNode& node, const std::string& path,
                                int64_t min, int64_t max);
// YAML 1.2's booleans, as Kubernetes reads them (a quoted "true" is a string there too).
std::optional<bool> read_bool(YamlContext& ctx, const YamlNode& node, const std::string& path);
// The elements of a sequence, or nullopt (with an error) when `node` is not one.
std::optional<std::vector<YamlNode>> read_sequence(YamlContext& ctx, const YamlNode& node,
                                                   const std::string& path);
std::optional<std::vector<std::string>> read_string_list(YamlContext& ctx, const YamlNode& node,
                                                         const std::string& path);

}  // namespace caldera
