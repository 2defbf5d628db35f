#include "node/cluster_config.hpp"

#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <unistd.h>

#include <charconv>
#include <variant>

#include "messages/yaml_duration.hpp"
#include "messages/yaml_tree.hpp"

namespace caldera {
namespace {

constexpr int kMaxConfigDepth = 32;

// The value under `key` of a mapping; undefined when absent (or `map` is no mapping).
YamlNode get(const YamlNode& map, std::string_view key) {
  for (const auto& [k, v] : map.entries())
    if (k.is_scalar() && k.scalar() == key) return v;
  return YamlNode();
}

// A plain scalar that is a whole number, like YAML's own ints (a leading + allowed).
std::optional<int64_t> whole_number(const YamlNode& n) {
  if (!n.is_scalar() || !n.plain()) return std::nullopt;
  std::string_view text = n.scalar();
  if (text.starts_with('+')) text.remove_prefix(1);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

std::string text_of(const YamlNode& n) {
  return n.is_scalar() ? n.scalar() : std::string{};
}

bool read_port(const YamlNode& n, const std::string& path, uint16_t& out, Diagnostics& diags) {
  if (!n.defined()) return true;
  auto v = whole_number(n);
  if (!v) {
    diags.error(path, "must be a port number");
    return false;
  }
  if (*v < 1 || *v > 65535) {
    diags.error(path, fmt::format("port {} is outside 1..65535", *v));
    return false;
  }
  out = static_cast<uint16_t>(*v);
  return true;
}

const std::set<std::string> kGatewayFields{"maxConnections", "idleTimeout", "frameTimeout"};

void read_count(const YamlNode& n, const std::string& path, std::optional<uint32_t>& out,
                Diagnostics& diags) {
  if (!n.defined()) return;
  auto v = whole_number(n);
  if (!v) {
    diags.error(path, "must be a whole number");
    return;
  }
  if (*v < 1 || *v > 1'000'000) {
    diags.error(path, fmt::format("{} is outside 1..1000000", *v));
    return;
  }
  out = static_cast<uint32_t>(*v);
}

void read_timeout(const YamlNode& n, const std::string& path,
                  std::optional<std::chrono::milliseconds>& out, Diagnostics& diags) {
  if (!n.defined()) return;
  std::string text = text_of(n);
  out = parse_timeout(text);
  if (!out)
    diags.error(path,
                fmt::format("'{}' is not a duration (examples: 10s, 5m, 1h30m; 0: never)", text));
}

std::string scalar(const YamlNode& n, const std::string& path, Diagnostics& diags) {
  if (!n.defined() || n.is_null()) return {};
  if (!n.is_scalar()) {
    diags.error(path, "must be a string");
    return {};
  }
  return n.scalar();
}

const std::set<std::string> kContainerLogFields{"containerLogMaxSize", "containerLogMaxFiles"};

void read_container_log(const YamlNode& n, const std::string& path, NodeConfig& node,
                        Diagnostics& diags) {
  if (auto v = get(n, "containerLogMaxSize"); v.defined()) {
    auto bytes = parse_container_log_max_size(text_of(v));
    if (bytes)
      node.container_log_max_size = *bytes;
    else
      diags.error(path + ".containerLogMaxSize", bytes.error());
  }
  if (auto v = get(n, "containerLogMaxFiles"); v.defined()) {
    std::optional<std::string> problem;
    if (auto files = whole_number(v)) {
      problem = check_container_log_max_files(*files);
      if (!problem) node.container_log_max_files = static_cast<int32_t>(*files);
    } else {
      problem = "must be a whole number such as 5";
    }
    if (problem) diags.error(path + ".containerLogMaxFiles", *problem);
  }
}

void read_node(const YamlNode& n, const std::string& path, ClusterConfig& cfg, Diagnostics& diags) {
  NodeConfig node;
  if (!n.is_map()) {
    diags.error(path, "must be a mapping with name, host, clusterPort, clientPort, dataDir");
    return;
  }
  static const std::set<std::string> known{"name",       "host",    "clusterPort",
                                           "clientPort", "dataDir", "resources"};
  for (const auto& kv : n.entries()) {
    auto key = text_of(kv.first);
    if (!known.count(key) && !kGatewayFields.count(key) && !kContainerLogFields.count(key))
      diags.warn(path + "." + key, "unknown field, ignored");
  }
  node.name = scalar(get(n, "name"), path + ".name", diags);
  if (node.name.empty()) diags.error(path + ".name", "every node needs a name");
  if (auto host = get(n, "host"); host.defined()) node.host = scalar(host, path + ".host", diags);
  read_port(get(n, "clusterPort"), path + ".clusterPort", node.cluster_port, diags);
  read_port(get(n, "clientPort"), path + ".clientPort", node.client_port, diags);
  node.data_dir = scalar(get(n, "dataDir"), path + ".dataDir", diags);
  if (node.data_dir.empty()) node.data_dir = "./caldera-data/" + node.name;
  if (auto r = get(n, "resources"); r.defined()) {
    if (!r.is_map()) {
      diags.error(path + ".resources", "must be a mapping such as {cpu: 8, memory: 16Gi}");
    } else {
      for (const auto& kv : r.entries()) {
        auto name = text_of(kv.first);
        auto text = text_of(kv.second);
        auto q = parse_quantity(text);
        if (!q)
          diags.error(path + ".resources." + name,
                      fmt::format("'{}' is not a quantity (examples: 2, 500m, 16Gi)", text));
        else
          node.resources.values[name] = *q;
      }
    }
  }
  read_count(get(n, "maxConnections"), path + ".maxConnections", node.max_connections, diags);
  read_timeout(get(n, "idleTimeout"), path + ".idleTimeout", node.idle_timeout, diags);
  read_timeout(get(n, "frameTimeout"), path + ".frameTimeout", node.frame_timeout, diags);
  read_container_log(n, path, node, diags);
  cfg.nodes.push_back(std::move(node));
}

}  // namespace

std::optional<std::chrono::milliseconds> parse_timeout(const std::string& text) {
  auto ms = parse_go_duration_ms(text);
  if (!ms || *ms < 0) return std::nullopt;
  return std::chrono::milliseconds(*ms);
}

Result<int64_t> parse_container_log_max_size(const std::string& text) {
  auto q = parse_quantity(text);
  if (!q) return Failure{fmt::format("'{}' is not a quantity (examples: 10Mi, 512Ki)", text)};
  if (*q % 1000 != 0) return Failure{fmt::format("'{}' is not a whole number of bytes", text)};
  // Smaller files would be renamed over and over for every few lines of output.
  if (*q / 1000 < 1024) return Failure{fmt::format("'{}' is less than the minimum, 1Ki", text)};
  return *q / 1000;
}

std::optional<std::string> check_container_log_max_files(int64_t files) {
  if (files < 2 || files > 1000)
    return fmt::format("{} is outside 2..1000 (the current file and at least one rotated)", files);
  return std::nullopt;
}

const NodeConfig* ClusterConfig::find(const std::string& node) const {
  for (const auto& n : nodes)
    if (n.name == node) return &n;
  return nullptr;
}

Result<ClusterConfig> parse_cluster_config(const std::string& text, Diagnostics& diags) {
  ClusterConfig cfg;
  if (text.find('\0') != std::string::npos) {
    diags.error("", "the cluster config contains a NUL byte");
    return Failure{"the cluster config is not valid YAML"};
  }
  auto loaded = load_yaml(text, kMaxConfigDepth);
  if (auto* e = std::get_if<YamlLoadError>(&loaded)) {
    diags.error(e->line > 0 ? fmt::format("line {}", e->line) : "",
                e->too_deep ? "nested deeper than a cluster config needs" : e->message);
    return Failure{"the cluster config is not valid YAML"};
  }
  const auto& docs = std::get<std::vector<YamlNode>>(loaded);
  YamlNode root = docs.empty() ? YamlNode() : docs.front();
  if (!root.is_map()) {
    diags.error("", "the cluster config must be a mapping with `cluster` and `nodes`");
    return Failure{"invalid cluster config"};
  }
  if (auto c = get(root, "cluster"); c.defined()) {
    cfg.name = scalar(get(c, "name"), "cluster.name", diags);
    cfg.coordinator = scalar(get(c, "coordinator"), "cluster.coordinator", diags);
    cfg.token = scalar(get(c, "token"), "cluster.token", diags);
  }
  auto nodes = get(root, "nodes");
  if (!nodes.is_sequence() || nodes.items().empty()) {
    diags.error("nodes", "must list at least one node");
  } else {
    for (size_t i = 0; i < nodes.items().size(); ++i)
      read_node(nodes.items()[i], fmt::format("nodes[{}]", i), cfg, diags);
  }
  std::set<std::string> names;
  for (size_t i = 0; i < cfg.nodes.size(); ++i)
    if (!names.insert(cfg.nodes[i].name).second)
      diags.error(fmt::format("nodes[{}].name", i),
                  fmt::format("node name '{}' is used twice", cfg.nodes[i].name));
  if (cfg.coordinator.empty() && !cfg.nodes.empty()) cfg.coordinator = cfg.nodes.front().name;
  if (!cfg.coordinator.empty() && !names.count(cfg.coordinator))
    diags.error("cluster.coordinator",
                fmt::format("'{}' is not one of the nodes listed", cfg.coordinator));
  if (!diags.ok()) return Failure{"invalid cluster config"};
  return cfg;
}

Result<ClusterConfig> load_cluster_config(const std::string& path, Diagnostics& diags) {
  std::ifstream in(path);
  if (!in) return Failure{fmt::format("cannot read cluster config '{}'", path)};
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_cluster_config(ss.str(), diags);
}

ClusterConfig embedded_cluster_config(const std::string& data_dir, uint16_t client_port,
                                      uint16_t cluster_port) {
  ClusterConfig cfg;
  cfg.name = "embedded";
  cfg.coordinator = "local";
  NodeConfig node;
  node.name = "local";
  node.client_port = client_port;
  node.cluster_port = cluster_port;
  node.data_dir = data_dir;
  auto cores = std::max(1u, std::thread::hardware_concurrency());
  node.resources.values["cpu"] = static_cast<MilliValue>(cores) * 1000;
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0)
    node.resources.values["memory"] = static_cast<MilliValue>(pages) * page * 1000;
  node.resources.values["pods"] = 110 * 1000;
  cfg.nodes.push_back(std::move(node));
  return cfg;
}

}  // namespace caldera
