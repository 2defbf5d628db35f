#include "node/cluster_config.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <unistd.h>

#include <charconv>
#include <variant>

#include "messages/yaml/yaml_duration.hpp"
#include "messages/yaml/yaml_tree.hpp"
#include "node/gateway.hpp"

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

const std::set<std::string> kGatewayFields{"maxConnections", "maxConnectionsPerAddress",
                                           "idleTimeout", "frameTimeout"};

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

// A label's name, or its value (which may be empty): at most 63 of [A-Za-z0-9._-].
bool label_text_ok(std::string_view text) {
  if (text.size() > 63) return false;
  for (char c : text)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-')
      return false;
  return true;
}

// A label key as Kubernetes has them, kept simple: an optional DNS prefix and a slash, then a
// name (example.com/fpga, zone); why not, or nullopt.
std::optional<std::string> check_label_key(std::string_view key) {
  auto slash = key.find('/');
  std::string_view name = key;
  if (slash != std::string_view::npos) {
    auto prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    bool prefix_ok = !prefix.empty() && prefix.size() <= 253;
    for (char c : prefix)
      if (!(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9') && c != '.' && c != '-')
        prefix_ok = false;
    if (!prefix_ok)
      return fmt::format(
          "the prefix of label key '{}' must be at most 253 of [a-z0-9.-] before the '/' "
          "(example: example.com/fpga)",
          key);
  }
  if (name.empty() || name.find('/') != std::string_view::npos || !label_text_ok(name))
    return fmt::format(
        "label key '{}' must be a name of 1 to 63 of [A-Za-z0-9._-], optionally after a prefix "
        "and a '/' (examples: zone, example.com/fpga)",
        key);
  return std::nullopt;
}

// nodes[].taints: [{key: dedicated, value: gpu, effect: NoSchedule}], as a Node's spec.taints.
void read_taints(const YamlNode& n, const std::string& path, std::vector<Taint>& out,
                 Diagnostics& diags) {
  if (!n.defined() || n.is_null()) return;
  if (!n.is_sequence()) {
    diags.error(path,
                "must be a list of taints such as [{key: dedicated, value: gpu, effect: "
                "NoSchedule}]");
    return;
  }
  for (size_t i = 0; i < n.items().size(); ++i) {
    const auto& t = n.items()[i];
    const std::string at = path + "[" + std::to_string(i) + "]";
    if (!t.is_map()) {
      diags.error(at, "must be a mapping with key, value and effect");
      continue;
    }
    Taint taint;
    for (const auto& [k, v] : t.entries()) {
      const auto key = text_of(k);
      if (key != "key" && key != "value" && key != "effect") {
        diags.warn(at + "." + key, "unknown field, ignored");
        continue;
      }
      if (!v.is_scalar()) {
        diags.error(at + "." + key, "must be a string");
        continue;
      }
      (key == "key" ? taint.key : key == "value" ? taint.value : taint.effect) = v.scalar();
    }
    if (auto problem = check_label_key(taint.key)) {
      diags.error(at + ".key",
                  taint.key.empty() ? "a taint needs a key, such as dedicated" : *problem);
      continue;
    }
    if (taint.effect != "NoSchedule" && taint.effect != "PreferNoSchedule" &&
        taint.effect != "NoExecute") {
      diags.error(at + ".effect", "\"" + taint.effect +
                                      "\" is not an effect; use NoSchedule, PreferNoSchedule or "
                                      "NoExecute");
      continue;
    }
    out.push_back(std::move(taint));
  }
}

void read_labels(const YamlNode& n, const std::string& path,
                 std::map<std::string, std::string>& out, Diagnostics& diags) {
  if (!n.defined() || n.is_null()) return;
  if (!n.is_map()) {
    diags.error(path, "must be a mapping of label keys to values, such as {zone: a, disk: ssd}");
    return;
  }
  for (const auto& [k, v] : n.entries()) {
    if (!k.is_scalar()) {
      diags.error(path, "label keys must be strings, such as zone");
      continue;
    }
    const std::string& key = k.scalar();
    std::string at = path + "." + key;
    if (auto problem = check_label_key(key)) {
      diags.error(at, *problem);
      continue;
    }
    if (!v.is_null() && !v.is_scalar()) {
      diags.error(at, "must be a string such as ssd (a label value)");
      continue;
    }
    std::string value = v.is_null() ? std::string{} : v.scalar();
    if (!label_text_ok(value)) {
      diags.error(at, fmt::format("label value '{}' must be at most 63 of [A-Za-z0-9._-], or empty "
                                  "(examples: ssd, eu-west-1a)",
                                  value));
      continue;
    }
    if (!out.emplace(key, value).second) diags.error(at, "label given twice");
  }
}

// 2000ms as "2s", 90000ms as "90s", 120000ms as "2m": as a Go duration, shortly.
std::string duration_text(std::chrono::milliseconds d) {
  auto ms = d.count();
  if (ms % 60'000 == 0) return fmt::format("{}m", ms / 60'000);
  if (ms % 1000 == 0) return fmt::format("{}s", ms / 1000);
  return fmt::format("{}ms", ms);
}

// A heartbeat duration; nullopt (and an error) when it is not a positive duration up to `max`.
std::optional<std::chrono::milliseconds> read_heartbeat(const YamlNode& n, const std::string& path,
                                                        std::chrono::milliseconds max,
                                                        std::string_view max_text,
                                                        std::string_view example,
                                                        Diagnostics& diags) {
  if (!n.is_scalar()) {
    diags.error(path, fmt::format("must be a duration (example: {})", example));
    return std::nullopt;
  }
  const std::string& text = n.scalar();
  auto ms = parse_go_duration_ms(text);
  if (!ms) {
    diags.error(path,
                fmt::format("'{}' is not a duration (examples: {}, 1s, 1m30s)", text, example));
    return std::nullopt;
  }
  if (*ms <= 0) {
    diags.error(path, fmt::format("'{}' must be more than 0 (example: {})", text, example));
    return std::nullopt;
  }
  if (std::chrono::milliseconds(*ms) > max) {
    diags.error(path, fmt::format("'{}' is more than the maximum, {} (example: {})", text, max_text,
                                  example));
    return std::nullopt;
  }
  return std::chrono::milliseconds(*ms);
}

// cluster.history: {maxFinishedJobs: 1000000, maxAge: 30d}; 0 keeps all of that kind.
void read_history(const YamlNode& h, RetentionPolicy& policy, Diagnostics& diags) {
  if (!h.defined() || h.is_null()) return;
  if (!h.is_map()) {
    diags.error("cluster.history",
                "must be a mapping such as {maxFinishedJobs: 1000000, maxAge: 30d}");
    return;
  }
  static const std::set<std::string> known{"maxFinishedJobs", "maxAge"};
  for (const auto& kv : h.entries()) {
    auto key = text_of(kv.first);
    if (!known.count(key)) diags.warn("cluster.history." + key, "unknown field, ignored");
  }
  if (auto n = get(h, "maxFinishedJobs"); n.defined()) {
    auto text = scalar(n, "cluster.history.maxFinishedJobs", diags);
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0 || v < 0 || v > 1'000'000'000'000LL)
      diags.error("cluster.history.maxFinishedJobs",
                  fmt::format("\"{}\" is not a count of jobs (0..10^12; 0 keeps them all)", text));
    else
      policy.max_finished_jobs = v;
  }
  if (auto a = get(h, "maxAge"); a.defined()) {
    auto text = scalar(a, "cluster.history.maxAge", diags);
    if (auto ms = parse_history_age_ms(text))
      policy.max_age_ms = *ms;
    else
      diags.error("cluster.history.maxAge",
                  fmt::format("\"{}\" is not a duration (examples: 30d, 720h, 90m; 0 keeps them "
                              "whatever their age)",
                              text));
  }
}

// cluster.scheduler: the conf itself, or the name of its file. Given with cluster.scoring, which
// it replaces, it is an error; scoring alone is reflected in the default conf.
void read_scheduler(const YamlNode& c, const std::string& base_dir, ClusterConfig& cfg,
                    Diagnostics& diags) {
  auto s = get(c, "scheduler");
  const bool given = s.defined() && !s.is_null();
  if (given && get(c, "scoring").defined())
    diags.error("cluster.scoring",
                "give cluster.scoring or cluster.scheduler, not both: with a scheduler conf, its "
                "nodeorder plugin (least-allocated) or binpack plugin ranks the nodes");
  if (!given) {
    if (cfg.scoring == sched::Scoring::Binpack)
      for (auto& tier : cfg.scheduler.tiers)
        for (auto& p : tier.plugins)
          if (p.name == "nodeorder") p.name = "binpack";
    return;
  }
  Result<sched::SchedulerConf> conf = Failure{""};
  if (s.is_map()) {
    conf = sched::read_scheduler_conf(s, "cluster.scheduler", diags);
  } else if (s.is_scalar() && !s.scalar().empty()) {
    std::filesystem::path file = s.scalar();
    if (file.is_relative() && !base_dir.empty()) file = std::filesystem::path(base_dir) / file;
    conf = load_scheduler_conf(file.lexically_normal().string(), "cluster.scheduler", diags);
  } else {
    diags.error("cluster.scheduler",
                "must be Volcano's scheduler conf (a mapping with actions and tiers) or the name "
                "of its file, relative to this config's directory");
  }
  if (conf) cfg.scheduler = std::move(*conf);
}

void read_cluster(const YamlNode& c, const std::string& base_dir, ClusterConfig& cfg,
                  Diagnostics& diags) {
  if (!c.defined() || c.is_null()) return;
  if (!c.is_map()) {
    diags.error("cluster", "must be a mapping such as {name: local-3, coordinator: node-1}");
    return;
  }
  static const std::set<std::string> known{
      "name",         "coordinator", "token",   "heartbeatInterval", "heartbeatTimeout",
      "leaseTimeout", "scoring",     "history", "scheduler"};
  for (const auto& kv : c.entries()) {
    auto key = text_of(kv.first);
    if (!known.count(key)) diags.warn("cluster." + key, "unknown field, ignored");
  }
  cfg.name = scalar(get(c, "name"), "cluster.name", diags);
  cfg.coordinator = scalar(get(c, "coordinator"), "cluster.coordinator", diags);
  cfg.token = scalar(get(c, "token"), "cluster.token", diags);
  if (auto scoring = get(c, "scoring"); scoring.defined()) {
    auto text = scalar(scoring, "cluster.scoring", diags);
    if (auto parsed = sched::parse_scoring(text))
      cfg.scoring = *parsed;
    else
      diags.error("cluster.scoring",
                  fmt::format("\"{}\" is not a scoring; use binpack or least-allocated", text));
  }

  read_scheduler(c, base_dir, cfg, diags);
  read_history(get(c, "history"), cfg.history, diags);

  using std::chrono::milliseconds, std::chrono::seconds, std::chrono::minutes;
  auto interval_node = get(c, "heartbeatInterval");
  auto timeout_node = get(c, "heartbeatTimeout");
  std::optional<milliseconds> interval = cfg.heartbeat_interval, timeout = cfg.heartbeat_timeout;
  if (interval_node.defined())
    interval = read_heartbeat(interval_node, "cluster.heartbeatInterval", seconds(60), "60s",
                              "500ms", diags);
  if (timeout_node.defined())
    timeout =
        read_heartbeat(timeout_node, "cluster.heartbeatTimeout", minutes(10), "10m", "2s", diags);
  if (!interval || !timeout) return;
  if (*timeout <= *interval) {
    // Blame the one written out: the defaults are in order.
    if (timeout_node.defined())
      diags.error("cluster.heartbeatTimeout",
                  fmt::format("{} must be more than heartbeatInterval, {}, so that one late "
                              "heartbeat is not a lost node (example: heartbeatInterval: 500ms, "
                              "heartbeatTimeout: 2s)",
                              duration_text(*timeout), duration_text(*interval)));
    else
      diags.error("cluster.heartbeatInterval",
                  fmt::format("{} must be less than heartbeatTimeout, {} by default; set "
                              "heartbeatTimeout too (example: heartbeatInterval: 5s, "
                              "heartbeatTimeout: 20s)",
                              duration_text(*interval), duration_text(*timeout)));
    return;
  }
  cfg.heartbeat_interval = *interval;
  cfg.heartbeat_timeout = *timeout;
  cfg.lease_timeout = std::max(cfg.lease_timeout, *timeout);
  auto lease_node = get(c, "leaseTimeout");
  if (!lease_node.defined()) return;
  auto lease = read_heartbeat(lease_node, "cluster.leaseTimeout", minutes(10), "10m", "5s", diags);
  if (!lease) return;
  if (*lease < *timeout) {
    diags.error("cluster.leaseTimeout",
                fmt::format("{} must be at least heartbeatTimeout, {}: a worker would stop its "
                            "pods before the coordinator even misses it (example: "
                            "heartbeatTimeout: 2s, leaseTimeout: 5s)",
                            duration_text(*lease), duration_text(*timeout)));
    return;
  }
  cfg.lease_timeout = *lease;
}

// Where a node of the config came from, for the checks across nodes.
struct NodeSource {
  std::string path;            // "nodes[2]"
  bool client_port_ok = true;  // read without error (or the default)
  bool cluster_port_ok = true;
  bool metrics_port_ok = true;
  bool data_dir_defaulted = false;  // not written: derived from the name
};

void read_node(const YamlNode& n, const std::string& path, ClusterConfig& cfg,
               std::vector<NodeSource>& sources, Diagnostics& diags) {
  NodeConfig node;
  NodeSource source{path};
  if (!n.is_map()) {
    diags.error(path, "must be a mapping with name, host, clusterPort, clientPort, dataDir");
    return;
  }
  static const std::set<std::string> known{"name",    "host",      "clusterPort", "clientPort",
                                           "dataDir", "resources", "labels",      "metricsPort",
                                           "count",   "taints"};
  for (const auto& kv : n.entries()) {
    auto key = text_of(kv.first);
    if (!known.count(key) && !kGatewayFields.count(key) && !kContainerLogFields.count(key))
      diags.warn(path + "." + key, "unknown field, ignored");
  }
  node.name = scalar(get(n, "name"), path + ".name", diags);
  if (node.name.empty()) diags.error(path + ".name", "every node needs a name");
  if (auto host = get(n, "host"); host.defined()) node.host = scalar(host, path + ".host", diags);
  source.cluster_port_ok =
      read_port(get(n, "clusterPort"), path + ".clusterPort", node.cluster_port, diags);
  source.client_port_ok =
      read_port(get(n, "clientPort"), path + ".clientPort", node.client_port, diags);
  // 0 (or none) turns the metrics endpoint off.
  if (auto m = get(n, "metricsPort"); m.defined() && text_of(m) != "0")
    source.metrics_port_ok = read_port(m, path + ".metricsPort", node.metrics_port, diags);
  node.data_dir = scalar(get(n, "dataDir"), path + ".dataDir", diags);
  if (node.data_dir.empty()) {
    node.data_dir = "./caldera-data/" + node.name;
    source.data_dir_defaulted = true;
  }
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
  read_count(get(n, "maxConnectionsPerAddress"), path + ".maxConnectionsPerAddress",
             node.max_connections_per_address, diags);
  if (node.max_connections_per_address) {
    const size_t total = node.max_connections.value_or(GatewayLimits{}.max_connections);
    if (*node.max_connections_per_address > total) {
      diags.error(path + ".maxConnectionsPerAddress",
                  fmt::format("{} is more than maxConnections, {}{}: the limit per client "
                              "address is a share of the node's connections",
                              *node.max_connections_per_address, total,
                              node.max_connections ? "" : " (the default)"));
      node.max_connections_per_address.reset();
    }
  }
  read_timeout(get(n, "idleTimeout"), path + ".idleTimeout", node.idle_timeout, diags);
  read_timeout(get(n, "frameTimeout"), path + ".frameTimeout", node.frame_timeout, diags);
  read_labels(get(n, "labels"), path + ".labels", node.labels, diags);
  read_taints(get(n, "taints"), path + ".taints", node.taints, diags);
  read_container_log(n, path, node, diags);
  read_count(get(n, "count"), path + ".count", node.count, diags);
  if (node.count && *node.count > kMaxHollowNodes) {
    diags.error(path + ".count", fmt::format("{} hollow nodes in one entry; at most {}",
                                             *node.count, kMaxHollowNodes));
    node.count.reset();
  }
  cfg.nodes.push_back(std::move(node));
  sources.push_back(std::move(source));
}

// Whether sockets listening on these two hosts can clash: the same host, or one listening on
// every address. Hosts are compared as written (localhost and 127.0.0.1 are different).
bool same_interface(const std::string& a, const std::string& b) {
  return a == b || a == "0.0.0.0" || b == "0.0.0.0";
}

// Every listening socket once: a node's clientPort and clusterPort must differ, and nodes on the
// same host may not share a port. Uses are taken in order, node by node and clientPort before
// clusterPort; the second use of a port is the one in error.
void check_ports(const ClusterConfig& cfg, const std::vector<NodeSource>& sources,
                 Diagnostics& diags) {
  struct Use {
    const std::string* host;
    uint16_t port;
    std::string field;
  };
  std::vector<Use> uses;
  for (size_t i = 0; i < cfg.nodes.size(); ++i) {
    const auto& node = cfg.nodes[i];
    const auto& src = sources[i];
    std::vector<Use> mine;
    if (src.client_port_ok)
      mine.push_back({&node.host, node.client_port, src.path + ".clientPort"});
    if (src.cluster_port_ok)
      mine.push_back({&node.host, node.cluster_port, src.path + ".clusterPort"});
    if (src.metrics_port_ok && node.metrics_port != 0)
      mine.push_back({&node.host, node.metrics_port, src.path + ".metricsPort"});
    for (auto& use : mine) {
      auto clash = std::find_if(uses.begin(), uses.end(), [&](const Use& u) {
        return u.port == use.port && same_interface(*u.host, *use.host);
      });
      if (clash != uses.end()) {
        std::string message =
            fmt::format("port {} on {} is already {}", use.port, *use.host, clash->field);
        if (*clash->host != *use.host) message += fmt::format(" (on {})", *clash->host);
        diags.error(use.field, std::move(message));
      } else {
        uses.push_back(std::move(use));
      }
    }
  }
}

// No two nodes may keep their data in one directory; paths are compared lexically normalised
// ("./data/a/" is "data/a"), not resolved.
void check_data_dirs(const ClusterConfig& cfg, const std::vector<NodeSource>& sources,
                     Diagnostics& diags) {
  std::vector<std::filesystem::path> seen;
  for (size_t i = 0; i < cfg.nodes.size(); ++i) {
    auto dir = std::filesystem::path(cfg.nodes[i].data_dir).lexically_normal();
    if (dir.has_relative_path() && !dir.has_filename()) dir = dir.parent_path();  // "a/b/"
    for (size_t j = 0; j < seen.size(); ++j) {
      // Two default directories are the same only when the names are, reported already.
      if (seen[j] != dir || (sources[i].data_dir_defaulted && sources[j].data_dir_defaulted))
        continue;
      diags.error(sources[i].path + ".dataDir",
                  fmt::format("data directory {} is already {}.dataDir; every node needs its own",
                              dir.string(), sources[j].path));
      break;
    }
    seen.push_back(std::move(dir));
  }
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

std::vector<std::string> NodeConfig::node_names() const {
  if (!count) return {name};
  std::vector<std::string> out;
  out.reserve(*count);
  for (uint32_t i = 0; i < *count; ++i) out.push_back(name + "-" + std::to_string(i));
  return out;
}

const NodeConfig* ClusterConfig::find(const std::string& node) const {
  for (const auto& n : nodes)
    if (n.name == node) return &n;
  return nullptr;
}

Result<ClusterConfig> parse_cluster_config(const std::string& text, Diagnostics& diags,
                                           const std::string& base_dir) {
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
  read_cluster(get(root, "cluster"), base_dir, cfg, diags);
  auto nodes = get(root, "nodes");
  std::vector<NodeSource> sources;  // one per cfg.nodes
  if (!nodes.is_sequence() || nodes.items().empty()) {
    diags.error("nodes", "must list at least one node");
  } else {
    for (size_t i = 0; i < nodes.items().size(); ++i)
      read_node(nodes.items()[i], fmt::format("nodes[{}]", i), cfg, sources, diags);
  }
  std::set<std::string> names;
  for (size_t i = 0; i < cfg.nodes.size(); ++i)
    if (!names.insert(cfg.nodes[i].name).second)
      diags.error(sources[i].path + ".name",
                  fmt::format("node name '{}' is used twice", cfg.nodes[i].name));
  // The nodes themselves (an entry's, or its hollow ones) must have names of their own.
  std::map<std::string, size_t> node_entry;  // node name -> the entry it comes from
  for (size_t i = 0; i < cfg.nodes.size(); ++i)
    for (const auto& name : cfg.nodes[i].node_names()) {
      auto [at, fresh] = node_entry.emplace(name, i);
      if (fresh || at->second == i || !(cfg.nodes[i].count || cfg.nodes[at->second].count))
        continue;  // an entry's own name twice is said above
      diags.error(sources[i].path + (cfg.nodes[i].count ? ".count" : ".name"),
                  fmt::format("node '{}' is also a node of {}", name, sources[at->second].path));
      break;
    }
  check_ports(cfg, sources, diags);
  check_data_dirs(cfg, sources, diags);
  if (cfg.coordinator.empty() && !cfg.nodes.empty()) cfg.coordinator = cfg.nodes.front().name;
  if (!cfg.coordinator.empty() && !names.count(cfg.coordinator))
    diags.error("cluster.coordinator",
                fmt::format("'{}' is not one of the nodes listed", cfg.coordinator));
  if (const auto* c = cfg.find(cfg.coordinator); c && c->count)
    diags.error("cluster.coordinator",
                fmt::format("'{}' has a count: hollow nodes need an entry of their own, not the "
                            "coordinator's",
                            cfg.coordinator));
  if (!diags.ok()) return Failure{"invalid cluster config"};
  return cfg;
}

Result<ClusterConfig> load_cluster_config(const std::string& path, Diagnostics& diags) {
  std::ifstream in(path);
  if (!in) return Failure{fmt::format("cannot read cluster config '{}'", path)};
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_cluster_config(ss.str(), diags, std::filesystem::path(path).parent_path().string());
}

Result<sched::SchedulerConf> load_scheduler_conf(const std::string& file, const std::string& path,
                                                 Diagnostics& diags) {
  const Failure invalid{"invalid scheduler conf"};
  auto cannot = [&](int error) {
    diags.error(path,
                fmt::format("cannot read the scheduler conf {}: {}", file, std::strerror(error)));
    return invalid;
  };
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return cannot(errno);
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return cannot(EISDIR);
  }
  // One byte past the limit tells a file that is too long, without reading all of it (it may be
  // a pipe that never ends).
  std::string text(sched::kMaxSchedulerConfBytes + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int error = errno;
      ::close(fd);
      return cannot(error);
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  if (got > sched::kMaxSchedulerConfBytes) {
    diags.error(path, fmt::format("the scheduler conf {} is more than {} bytes (1 MiB): a real "
                                  "one is a few hundred",
                                  file, sched::kMaxSchedulerConfBytes));
    return invalid;
  }
  text.resize(got);
  return sched::parse_scheduler_conf(text, path, diags);
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
  offer_ephemeral_storage(node.resources, data_dir);
  cfg.nodes.push_back(std::move(node));
  return cfg;
}

void offer_ephemeral_storage(ResourceList& resources, const std::string& data_dir) {
  if (resources.values.count(kEphemeralStorage)) return;
  // The nearest directory that exists, for a data dir not made yet.
  std::error_code ec;
  auto dir = std::filesystem::absolute(data_dir, ec);
  while (!dir.empty() && !std::filesystem::exists(dir, ec) && dir.has_parent_path() &&
         dir.parent_path() != dir)
    dir = dir.parent_path();
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) == 0 && fs.f_blocks > 0)
    resources.values[kEphemeralStorage] =
        static_cast<MilliValue>(fs.f_blocks) * static_cast<MilliValue>(fs.f_frsize) * 1000;
}

}  // namespace caldera
