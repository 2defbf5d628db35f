#include "messages/yaml/yaml_reader.hpp"

#include <charconv>
#include <unordered_set>

namespace caldera {
namespace {

std::string_view kind_of(const YamlNode& node) {
  if (node.is_sequence()) return "a list";
  if (node.is_map()) return "a mapping";
  if (node.is_scalar()) return node.plain() ? "a scalar" : "a string";
  return "nothing";
}

bool present(const YamlNode& node) {
  return node.defined() && !node.is_null();
}

}  // namespace

std::string child_path(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string index_path(const std::string& path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

std::string YamlContext::full(const std::string& path) const {
  return prefixed(prefix_, path);
}

void YamlContext::error(const std::string& path, std::string message) {
  diags_.error(full(path), std::move(message));
}

void YamlContext::warn(const std::string& path, std::string message) {
  diags_.warn(full(path), std::move(message));
}

bool YamlContext::spend() {
  if (budget_ > 0) {
    --budget_;
    return true;
  }
  if (!exhausted_) {
    exhausted_ = true;
    diags_.error("", "the YAML expands to too many nodes (aliases?); the rest was not read");
  }
  return false;
}

MapReader::MapReader(YamlContext& ctx, const YamlNode& node, std::string path)
    : ctx_(ctx), path_(std::move(path)) {
  if (!present(node)) return;
  if (!node.is_map()) {
    ctx_.error(path_, "expected a mapping, got " + std::string(kind_of(node)));
    valid_ = false;
    return;
  }
  std::unordered_set<std::string> seen;
  for (const auto& kv : node.entries()) {
    if (!ctx_.spend()) break;
    if (!kv.first.is_scalar()) {
      ctx_.error(path_, "mapping keys must be strings, got " + std::string(kind_of(kv.first)));
      continue;
    }
    const std::string& key = kv.first.scalar();
    if (!seen.insert(key).second) {
      ctx_.error(child_path(path_, key), "duplicate field");
      continue;
    }
    entries_.emplace_back(key, kv.second);
  }
  used_.assign(entries_.size(), false);
}

std::optional<YamlNode> MapReader::get(std::string_view key) {
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].first != key) continue;
    used_[i] = true;
    if (!present(entries_[i].second)) return std::nullopt;
    return entries_[i].second;
  }
  return std::nullopt;
}

void MapReader::str(std::string_view key, std::string& out) {
  if (auto node = get(key))
    if (auto v = read_string(ctx_, *node, path(key))) out = std::move(*v);
}

void MapReader::i32(std::string_view key, int32_t& out) {
  if (auto node = get(key))
    if (auto v = read_int(ctx_, *node, path(key), INT32_MIN, INT32_MAX))
      out = static_cast<int32_t>(*v);
}

void MapReader::i32(std::string_view key, std::optional<int32_t>& out) {
  if (auto node = get(key))
    if (auto v = read_int(ctx_, *node, path(key), INT32_MIN, INT32_MAX))
      out = static_cast<int32_t>(*v);
}

void MapReader::i64(std::string_view key, std::optional<int64_t>& out) {
  if (auto node = get(key))
    if (auto v = read_int(ctx_, *node, path(key), INT64_MIN, INT64_MAX)) out = *v;
}

void MapReader::strings(std::string_view key, std::vector<std::string>& out) {
  if (auto node = get(key))
    if (auto v = read_string_list(ctx_, *node, path(key))) out = std::move(*v);
}

void MapReader::string_map(std::string_view key, std::map<std::string, std::string>& out) {
  auto node = get(key);
  if (!node) return;
  MapReader m(ctx_, *node, path(key));
  for (const auto& [k, v] : m.entries())
    if (auto s = read_string(ctx_, v, m.path(k))) out[k] = std::move(*s);
}

void MapReader::quantities(std::string_view key, ResourceList& out) {
  auto node = get(key);
  if (!node) return;
  MapReader m(ctx_, *node, path(key));
  for (const auto& [name, v] : m.entries()) {
    auto text = read_string(ctx_, v, m.path(name));
    if (!text) continue;
    if (auto q = parse_quantity(*text)) {
      out.values[name] = *q;
    } else {
      ctx_.error(m.path(name), "invalid quantity \"" + *text +
                                   "\": expected a non-negative amount such as 500m, 2 or 1Gi");
    }
  }
}

void MapReader::ignore(std::initializer_list<std::string_view> keys) {
  for (size_t i = 0; i < entries_.size(); ++i) {
    for (auto key : keys) {
      if (entries_[i].first != key || used_[i]) continue;  // read already: not ignored
      used_[i] = true;
      ctx_.warn(path(key), "Kubernetes field not used by caldera, ignored");
    }
  }
}

void MapReader::warn_unknown() {
  for (size_t i = 0; i < entries_.size(); ++i)
    if (!used_[i]) ctx_.warn(path(entries_[i].first), "unknown field, ignored");
}

std::optional<std::string> read_string(YamlContext& ctx, const YamlNode& node,
                                       const std::string& path) {
  // Any scalar is accepted: users write `value: 8` for strings and YAML has no way to say
  // otherwise.
  if (node.is_scalar()) return node.scalar();
  if (!present(node)) return std::string();
  ctx.error(path, "expected a string, got " + std::string(kind_of(node)));
  return std::nullopt;
}

std::optional<int64_t> read_int(YamlContext& ctx, const YamlNode& node, const std::string& path,
                                int64_t min, int64_t max) {
  // A quoted scalar is a string to Kubernetes too: `replicas: "3"` is rejected there as well.
  bool plain = node.plain() && (node.tag().empty() || node.tag() == "tag:yaml.org,2002:int");
  if (!node.is_scalar() || !plain) {
    ctx.error(path, "expected an integer, got " + std::string(kind_of(node)));
    return std::nullopt;
  }
  std::string_view text = node.scalar();
  if (text.starts_with('+')) text.remove_prefix(1);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range || (ec == std::errc() && (value < min || value > max))) {
    ctx.error(path, "integer " + node.scalar() + " is out of range [" + std::to_string(min) + ", " +
                        std::to_string(max) + "]");
    return std::nullopt;
  }
  if (ec != std::errc() || end != text.data() + text.size()) {
    ctx.error(path, "expected an integer, got \"" + node.scalar() + "\"");
    return std::nullopt;
  }
  return value;
}

// YAML 1.2's booleans, as Kubernetes reads them; a quoted "true" is a string there too.
std::optional<bool> read_bool(YamlContext& ctx, const YamlNode& node, const std::string& path) {
  if (node.is_scalar() && node.plain()) {
    if (node.scalar() == "true") return true;
    if (node.scalar() == "false") return false;
  }
  ctx.error(path, "expected true or false");
  return std::nullopt;
}

std::optional<std::vector<YamlNode>> read_sequence(YamlContext& ctx, const YamlNode& node,
                                                   const std::string& path) {
  std::vector<YamlNode> out;
  if (!present(node)) return out;
  if (!node.is_sequence()) {
    ctx.error(path, "expected a list, got " + std::string(kind_of(node)));
    return std::nullopt;
  }
  for (const auto& item : node.items()) {
    if (!ctx.spend()) break;
    out.push_back(item);
  }
  return out;
}

std::optional<std::vector<std::string>> read_string_list(YamlContext& ctx, const YamlNode& node,
                                                         const std::string& path) {
  auto items = read_sequence(ctx, node, path);
  if (!items) return std::nullopt;
  std::vector<std::string> out;
  bool ok = true;
  for (size_t i = 0; i < items->size(); ++i) {
    auto s = read_string(ctx, (*items)[i], index_path(path, i));
    ok = ok && s.has_value();
    if (s) out.push_back(std::move(*s));
  }
  if (!ok) return std::nullopt;
  return out;
}

}  // namespace caldera
