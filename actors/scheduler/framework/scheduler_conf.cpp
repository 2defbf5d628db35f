#include "actors/scheduler/framework/scheduler_conf.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <set>
#include <variant>

#include <fmt/format.h>

namespace caldera::sched {
namespace {

// A conf is a handful of levels deep; the cluster config allows as much.
constexpr int kMaxConfDepth = 32;
// Values walked at most (tiers, plugins, their fields, arguments, action names): a real conf
// has under a hundred, and aliases let a short text name one long list many times over.
constexpr size_t kMaxConfValues = 10'000;

constexpr std::string_view kConfigMapKey = "volcano-scheduler.conf";
constexpr std::string_view kActionsExample = "actions: \"enqueue, allocate, backfill\"";

// The value under `key` of a mapping; undefined when absent (or `map` is no mapping).
YamlNode get(const YamlNode& map, std::string_view key) {
  for (const auto& [k, v] : map.entries())
    if (k.is_scalar() && k.scalar() == key) return v;
  return YamlNode();
}

std::string text_of(const YamlNode& n) {
  return n.is_scalar() ? n.scalar() : std::string{};
}

std::string at(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string item(const std::string& path, size_t index) {
  return fmt::format("{}[{}]", path, index);
}

std::string_view kind_of(const YamlNode& n) {
  if (n.is_map()) return "a mapping";
  if (n.is_sequence()) return "a list";
  return "a single value";
}

template <size_t N>
std::string join(const std::array<std::string_view, N>& names) {
  std::string out;
  for (auto name : names) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

template <size_t N>
bool known(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Volcano trims names with Go's strings.TrimSpace.
std::string_view trim(std::string_view s) {
  constexpr std::string_view blanks = " \t\r\n\v\f";
  auto first = s.find_first_not_of(blanks);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(blanks) - first + 1);
}

// A finite decimal number ("10", "1.5", "+2", "1e3"); nullopt for anything else.
std::optional<double> parse_number(std::string_view text) {
  if (text.starts_with('+')) {
    text.remove_prefix(1);
    if (text.starts_with('-')) return std::nullopt;
  }
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

// The booleans of YAML 1.1, which Volcano's reader (go-yaml v2) takes: a switch that Volcano
// reads must read here too. Quoted or tagged otherwise, it is text.
std::optional<bool> yaml_bool(const YamlNode& n) {
  if (!n.is_scalar() || !n.plain()) return std::nullopt;
  if (!n.tag().empty() && n.tag() != "tag:yaml.org,2002:bool") return std::nullopt;
  static const std::set<std::string, std::less<>> yes{"true", "True", "TRUE", "yes", "Yes", "YES",
                                                      "on",   "On",   "ON",   "y",   "Y"};
  static const std::set<std::string, std::less<>> no{"false", "False", "FALSE", "no", "No", "NO",
                                                     "off",   "Off",   "OFF",   "n",  "N"};
  if (yes.count(n.scalar())) return true;
  if (no.count(n.scalar())) return false;
  return std::nullopt;
}

// A Kubernetes resource name: a name of [A-Za-z0-9._-], optionally after a DNS prefix and a '/'
// (cpu, nvidia.com/gpu).
bool resource_name_ok(std::string_view name) {
  if (name.empty() || name.size() > 253 || std::count(name.begin(), name.end(), '/') > 1)
    return false;
  if (name.front() == '/' || name.back() == '/') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ||
           c == '/';
  });
}

// One read of a conf: where problems go, and what is left of the walk's budget.
class Reader {
 public:
  Reader(Diagnostics& diags, std::string root) : diags_(diags), root_(std::move(root)) {}

  void error(const std::string& path, std::string message) {
    diags_.error(path, std::move(message));
  }
  void warn(const std::string& path, std::string message) { diags_.warn(path, std::move(message)); }
  // Accounts for one more value; false (with a single error) once the budget is spent.
  bool spend() {
    if (left_ > 0) {
      --left_;
      return true;
    }
    if (!exhausted_) {
      exhausted_ = true;
      diags_.error(root_, fmt::format("more than {} values (aliases counted each time they are "
                                      "used): far more than a scheduler conf holds",
                                      kMaxConfValues));
    }
    return false;
  }

 private:
  Diagnostics& diags_;
  std::string root_;
  size_t left_ = kMaxConfValues;
  bool exhausted_ = false;
};

void read_actions(Reader& r, const YamlNode& n, const std::string& path,
                  std::vector<std::string>& out) {
  if (n.defined() && !n.is_null() && !n.is_scalar()) {
    r.error(path, fmt::format("must be one string of action names separated by commas, not {} "
                              "(example: {})",
                              kind_of(n), kActionsExample));
    return;
  }
  const std::string text = n.is_scalar() && !n.is_null() ? n.scalar() : std::string{};
  if (trim(text).empty()) {
    r.error(path, fmt::format("{}: a scheduler without actions would do nothing (example: {})",
                              n.defined() ? "empty" : "missing", kActionsExample));
    return;
  }
  std::string_view rest = text;
  while (r.spend()) {
    auto comma = rest.find(',');
    auto name = trim(rest.substr(0, comma));
    if (name.empty())
      r.error(path, fmt::format("\"{}\" has an empty action name between commas (example: {})",
                                text, kActionsExample));
    else if (!known(kKnownActions, name))
      r.error(path, fmt::format("\"{}\" is not an action caldera's scheduler has; known: {}", name,
                                join(kKnownActions)));
    else if (std::find(out.begin(), out.end(), name) != out.end())
      r.error(path, fmt::format("\"{}\" is named twice: a session runs each action once", name));
    else
      out.emplace_back(name);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
}

// A mapping of names to single values, kept as their text.
void read_arguments(Reader& r, const YamlNode& n, const std::string& path,
                    std::map<std::string, std::string>& out) {
  if (!n.defined() || n.is_null()) return;
  if (!n.is_map()) {
    r.error(path, fmt::format("must be a mapping of argument names to values, not {} (example: "
                              "{{binpack.weight: 10}})",
                              kind_of(n)));
    return;
  }
  for (const auto& [k, v] : n.entries()) {
    if (!r.spend()) return;
    if (!k.is_scalar()) {
      r.error(path, "argument names must be text, such as binpack.weight");
      continue;
    }
    const std::string& key = k.scalar();
    const std::string p = at(path, key);
    if (v.is_map() || v.is_sequence()) {
      r.error(p, fmt::format("must be a single value (a number or text), not {}", kind_of(v)));
      continue;
    }
    if (!out.emplace(key, v.is_null() ? std::string{} : v.scalar()).second)
      r.error(p, "argument given twice");
  }
}

// A number argument of a plugin, at least `min`; why not in `why_min`.
void check_number(Reader& r, const std::string& path, const std::string& value, double min,
                  std::string_view why_min, std::string_view example) {
  auto v = parse_number(value);
  if (!v)
    r.error(path, fmt::format("\"{}\" is not a number (example: {})", value, example));
  else if (*v < min)
    r.error(path, fmt::format("{} is less than {}: {}", value, min, why_min));
}

constexpr std::string_view kWeightTooLow =
    "a weight is 0 (this score counts for nothing) or more (it counts for more)";
constexpr std::string_view kBinpackResources = "binpack.resources";

// What Volcano's overcommit, nodeorder and binpack plugins read as numbers must be numbers here,
// so that the scheduler never meets one that is not.
void check_arguments(Reader& r, const PluginOption& p, const std::string& path) {
  const bool binpack = p.name == "binpack";
  std::set<std::string, std::less<>> listed;  // binpack.resources
  if (auto it = p.arguments.find(std::string(kBinpackResources));
      binpack && it != p.arguments.end()) {
    std::string_view rest = it->second;
    while (r.spend()) {
      auto comma = rest.find(',');
      auto name = trim(rest.substr(0, comma));
      // Volcano skips empty names too ("a,,b", a trailing comma).
      if (!name.empty() && !resource_name_ok(name))
        r.error(at(path, kBinpackResources),
                fmt::format("\"{}\" is not a resource name (example: binpack.resources: "
                            "nvidia.com/gpu, example.com/foo)",
                            name));
      else if (!name.empty())
        listed.emplace(name);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  for (const auto& [key, value] : p.arguments) {
    const std::string ap = at(path, key);
    if (p.name == "overcommit" && key == "overcommit-factor") {
      check_number(r, ap, value, 1.0,
                   "enqueue would admit less than the cluster holds (Volcano's default is 1.2)",
                   "overcommit-factor: 1.2");
    } else if ((p.name == "nodeorder" || binpack) && key.ends_with(".weight")) {
      check_number(r, ap, value, 0, kWeightTooLow, key + ": 1");
    } else if (binpack && (key == "binpack.cpu" || key == "binpack.memory")) {
      check_number(r, ap, value, 0, kWeightTooLow, key + ": 1");
    } else if (binpack && key.starts_with(std::string(kBinpackResources) + ".")) {
      auto name = std::string_view(key).substr(kBinpackResources.size() + 1);
      check_number(r, ap, value, 0, kWeightTooLow, "binpack.resources.nvidia.com/gpu: 2");
      if (!listed.count(name))
        r.warn(ap, fmt::format("{} is not listed in binpack.resources, so this weight is not used",
                               name.empty() ? "no resource" : std::string(name)));
    }
  }
}

using Seen = std::map<std::string, std::string, std::less<>>;  // name -> path of its first use

void read_plugin(Reader& r, const YamlNode& n, const std::string& path, Seen& seen, Tier& tier) {
  if (!n.is_map()) {
    r.error(path, fmt::format("must be a mapping with a name, not {} (example: {{name: gang}})",
                              kind_of(n)));
    return;
  }
  PluginOption p;
  for (const auto& [k, v] : n.entries()) {
    if (!r.spend()) return;
    const std::string key = text_of(k);
    if (key == "name" || key == "arguments") continue;
    if (!known(kPluginSwitches, key)) {
      r.warn(at(path, key), "unknown field, ignored");
      continue;
    }
    if (auto on = yaml_bool(v))
      p.switches[key] = *on;
    else
      r.error(at(path, key), fmt::format("must be true or false, not {}",
                                         !v.is_scalar() ? std::string(kind_of(v))
                                         : v.plain()    ? "\"" + v.scalar() + "\""
                                                     : "the quoted text \"" + v.scalar() + "\""));
  }
  auto name = get(n, "name");
  const std::string name_path = at(path, "name");
  if (!name.defined() || name.is_null() || (name.is_scalar() && name.scalar().empty())) {
    r.error(name_path, fmt::format("every plugin needs a name; known: {}", join(kKnownPlugins)));
  } else if (!name.is_scalar()) {
    r.error(name_path, fmt::format("must be a plugin's name, not {}; known: {}", kind_of(name),
                                   join(kKnownPlugins)));
  } else if (!known(kKnownPlugins, name.scalar())) {
    r.error(name_path, fmt::format("\"{}\" is not a plugin caldera's scheduler has; known: {}",
                                   name.scalar(), join(kKnownPlugins)));
  } else if (auto first = seen.find(name.scalar()); first != seen.end()) {
    r.error(name_path, fmt::format("plugin \"{}\" is already {}: each plugin is named once",
                                   name.scalar(), first->second));
  } else {
    seen.emplace(name.scalar(), path);
  }
  p.name = text_of(name);
  read_arguments(r, get(n, "arguments"), at(path, "arguments"), p.arguments);
  check_arguments(r, p, at(path, "arguments"));
  tier.plugins.push_back(std::move(p));
}

void read_tiers(Reader& r, const YamlNode& n, const std::string& path, std::vector<Tier>& out) {
  if (!n.defined() || n.is_null()) {
    r.warn(path, "no tiers: a scheduler without plugins has no gang, priority or predicates");
    return;
  }
  if (!n.is_sequence()) {
    r.error(path, fmt::format("must be a list of tiers, not {} (example: [{{plugins: [{{name: "
                              "priority}}, {{name: gang}}]}}])",
                              kind_of(n)));
    return;
  }
  Seen seen;
  for (size_t i = 0; i < n.items().size() && r.spend(); ++i) {
    const auto& t = n.items()[i];
    const std::string tp = item(path, i);
    if (!t.is_map()) {
      r.error(tp, fmt::format("must be a mapping with plugins, not {} (example: {{plugins: "
                              "[{{name: gang}}]}})",
                              kind_of(t)));
      continue;
    }
    for (const auto& [k, v] : t.entries())
      if (text_of(k) != "plugins") r.warn(at(tp, text_of(k)), "unknown field, ignored");
    Tier tier;
    auto plugins = get(t, "plugins");
    const std::string pp = at(tp, "plugins");
    if (!plugins.defined() || plugins.is_null()) {
      r.error(pp, "missing: a tier lists its plugins (example: plugins: [{name: gang}])");
    } else if (!plugins.is_sequence()) {
      r.error(pp, fmt::format("must be a list of plugins, not {} (example: [{{name: gang}}])",
                              kind_of(plugins)));
    } else {
      if (plugins.items().empty()) r.warn(pp, "an empty tier does nothing");
      std::string hierarchy;  // drf's enableHierarchy: true, where
      bool proportion = false;
      for (size_t j = 0; j < plugins.items().size() && r.spend(); ++j) {
        const size_t before = tier.plugins.size();
        read_plugin(r, plugins.items()[j], item(pp, j), seen, tier);
        if (tier.plugins.size() == before) continue;
        const auto& p = tier.plugins.back();
        if (p.name == "proportion") proportion = true;
        if (auto h = p.switches.find("enableHierarchy");
            p.name == "drf" && h != p.switches.end() && h->second)
          hierarchy = at(item(pp, j), "enableHierarchy");
      }
      // Both would divide the cluster among the queues, each its own way.
      if (proportion && !hierarchy.empty())
        r.error(hierarchy,
                "drf's hierarchy and proportion in one tier both share the cluster among queues: "
                "keep one (Volcano refuses this too)");
    }
    out.push_back(std::move(tier));
  }
}

void read_configurations(Reader& r, const YamlNode& n, const std::string& path,
                         const std::vector<std::string>& actions,
                         std::vector<ActionConfiguration>& out) {
  if (!n.defined() || n.is_null()) return;
  if (!n.is_sequence()) {
    r.error(path, fmt::format("must be a list of actions' arguments, not {} (example: [{{name: "
                              "enqueue, arguments: {{overcommit-factor: 1.2}}}}])",
                              kind_of(n)));
    return;
  }
  Seen seen;
  for (size_t i = 0; i < n.items().size() && r.spend(); ++i) {
    const auto& c = n.items()[i];
    const std::string cp = item(path, i);
    if (!c.is_map()) {
      r.error(cp, fmt::format("must be a mapping with a name and arguments, not {}", kind_of(c)));
      continue;
    }
    for (const auto& [k, v] : c.entries())
      if (text_of(k) != "name" && text_of(k) != "arguments")
        r.warn(at(cp, text_of(k)), "unknown field, ignored");
    ActionConfiguration conf;
    auto name = get(c, "name");
    const std::string np = at(cp, "name");
    conf.name = text_of(name);
    if (conf.name.empty())
      r.error(np,
              fmt::format("every configuration names its action; known: {}", join(kKnownActions)));
    else if (!known(kKnownActions, conf.name))
      r.error(np, fmt::format("\"{}\" is not an action caldera's scheduler has; known: {}",
                              conf.name, join(kKnownActions)));
    else if (auto first = seen.find(conf.name); first != seen.end())
      r.error(np, fmt::format("action \"{}\" is already configured at {}: each action once",
                              conf.name, first->second));
    else if (std::find(actions.begin(), actions.end(), conf.name) == actions.end())
      r.warn(np, fmt::format("\"{}\" is not among the actions, so these arguments are not used",
                             conf.name));
    if (!conf.name.empty()) seen.emplace(conf.name, cp);
    read_arguments(r, get(c, "arguments"), at(cp, "arguments"), conf.arguments);
    out.push_back(std::move(conf));
  }
}

Result<SchedulerConf> read_text(std::string_view text, const std::string& path, Diagnostics& diags,
                                bool in_config_map);

// The conf itself, or (unless it is already inside one) a ConfigMap holding it.
Result<SchedulerConf> read_conf(const YamlNode& node, const std::string& path, Diagnostics& diags,
                                bool in_config_map) {
  const size_t errors_before = diags.errors.size();
  const Failure invalid{"invalid scheduler conf"};
  if (!node.is_map()) {
    diags.error(path, fmt::format("a scheduler conf must be a mapping with actions and tiers, not "
                                  "{} (example: {})",
                                  node.defined() && !node.is_null() ? kind_of(node) : "nothing",
                                  kActionsExample));
    return invalid;
  }
  if (auto kind = get(node, "kind"); kind.defined()) {
    if (in_config_map) {
      diags.error(at(path, "kind"), fmt::format("a ConfigMap's data.{} holds the conf itself, not "
                                                "another ConfigMap",
                                                kConfigMapKey));
      return invalid;
    }
    if (text_of(kind) != "ConfigMap") {
      diags.error(at(path, "kind"),
                  fmt::format("\"{}\" is not a scheduler conf: give the conf itself (actions, "
                              "tiers) or a ConfigMap holding it under data.{}",
                              text_of(kind), kConfigMapKey));
      return invalid;
    }
    // Volcano's users keep the conf as the scheduler's ConfigMap; only its data is ours.
    auto data = get(node, "data");
    const std::string dp = at(path, "data");
    auto conf = get(data, kConfigMapKey);
    if (!data.is_map() || !conf.defined()) {
      diags.error(dp, fmt::format("a ConfigMap holds the scheduler conf as text under data.{}, "
                                  "which it does not have",
                                  kConfigMapKey));
      return invalid;
    }
    if (!conf.is_scalar() || conf.is_null()) {
      diags.error(at(dp, kConfigMapKey),
                  fmt::format("must be the conf as text (a block: `{}: |`), not {}", kConfigMapKey,
                              conf.is_null() ? "nothing" : kind_of(conf)));
      return invalid;
    }
    return read_text(conf.scalar(), at(dp, kConfigMapKey), diags, true);
  }
  Reader r(diags, path);
  for (const auto& [k, v] : node.entries()) {
    const std::string key = text_of(k);
    if (key == "metrics")
      r.warn(at(path, key), "ignored: caldera serves metrics on each node's metricsPort");
    else if (key != "actions" && key != "tiers" && key != "configurations")
      r.warn(at(path, key), "unknown field, ignored");
  }
  SchedulerConf conf;
  read_actions(r, get(node, "actions"), at(path, "actions"), conf.actions);
  read_tiers(r, get(node, "tiers"), at(path, "tiers"), conf.tiers);
  read_configurations(r, get(node, "configurations"), at(path, "configurations"), conf.actions,
                      conf.configurations);
  if (diags.errors.size() > errors_before) return invalid;
  return conf;
}

Result<SchedulerConf> read_text(std::string_view text, const std::string& path, Diagnostics& diags,
                                bool in_config_map) {
  const Failure invalid{"invalid scheduler conf"};
  if (text.size() > kMaxSchedulerConfBytes) {
    diags.error(path, fmt::format("the scheduler conf is {} bytes, more than the {} (1 MiB) read: "
                                  "a real one is a few hundred",
                                  text.size(), kMaxSchedulerConfBytes));
    return invalid;
  }
  if (text.find('\0') != std::string_view::npos) {
    diags.error(path, "the scheduler conf contains a NUL byte: it is not YAML text");
    return invalid;
  }
  auto loaded = load_yaml(text, kMaxConfDepth);
  if (auto* e = std::get_if<YamlLoadError>(&loaded)) {
    std::string where = path;
    if (e->line > 0)
      where = path.empty() ? fmt::format("line {}", e->line)
                           : fmt::format("{} (line {})", path, e->line);
    diags.error(where, e->too_deep ? "nested deeper than a scheduler conf needs"
                                   : "not valid YAML: " + e->message);
    return invalid;
  }
  const auto& docs = std::get<std::vector<YamlNode>>(loaded);
  if (docs.size() > 1) diags.warn(path, "only the first YAML document is read, as Volcano does");
  return read_conf(docs.empty() ? YamlNode() : docs.front(), path, diags, in_config_map);
}

// YAML's plain scalars that read back as the same text; anything else is double-quoted.
bool plain_ok(std::string_view s) {
  if (s.empty() || s == "-" || s == "~" || s == "null" || s == "Null" || s == "NULL") return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ||
           c == '/' || c == '+';
  });
}

std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\')
      out += std::string("\\") + c;
    else if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (u < 0x20 || u == 0x7f)
      out += fmt::format("\\x{:02x}", u);
    else
      out += c;
  }
  return out + "\"";
}

std::string scalar(std::string_view s) {
  return plain_ok(s) ? std::string(s) : quoted(s);
}

void write_arguments(std::string& out, const std::map<std::string, std::string>& args,
                     std::string_view indent) {
  if (args.empty()) return;
  out += fmt::format("{}arguments:\n", indent);
  for (const auto& [k, v] : args) out += fmt::format("{}  {}: {}\n", indent, scalar(k), scalar(v));
}

}  // namespace

bool PluginOption::enabled(std::string_view switch_name) const {
  auto it = switches.find(std::string(switch_name));
  return it == switches.end() || it->second;
}

double PluginOption::number(std::string_view key, double fallback) const {
  auto it = arguments.find(std::string(key));
  if (it == arguments.end()) return fallback;
  return parse_number(it->second).value_or(fallback);
}

bool SchedulerConf::has_action(std::string_view name) const {
  return std::find(actions.begin(), actions.end(), name) != actions.end();
}

const PluginOption* SchedulerConf::plugin(std::string_view name) const {
  for (const auto& tier : tiers)
    for (const auto& p : tier.plugins)
      if (p.name == name) return &p;
  return nullptr;
}

SchedulerConf default_scheduler_conf() {
  SchedulerConf conf;
  conf.actions = {"enqueue", "allocate", "preempt", "reclaim", "backfill"};
  auto tier = [](std::initializer_list<const char*> names) {
    Tier t;
    for (const char* name : names) t.plugins.push_back(PluginOption{name, {}, {}});
    return t;
  };
  conf.tiers = {tier({"priority", "gang", "conformance"}),
                tier({"overcommit", "drf", "predicates", "proportion", "nodeorder"})};
  return conf;
}

Result<SchedulerConf> parse_scheduler_conf(std::string_view yaml_text, const std::string& path,
                                           Diagnostics& diags) {
  return read_text(yaml_text, path, diags, false);
}

Result<SchedulerConf> read_scheduler_conf(const YamlNode& node, const std::string& path,
                                          Diagnostics& diags) {
  return read_conf(node, path, diags, false);
}

std::string scheduler_conf_yaml(const SchedulerConf& conf) {
  std::string actions;
  for (const auto& a : conf.actions) actions += (actions.empty() ? "" : ", ") + a;
  std::string out = fmt::format("actions: {}\n", quoted(actions));
  out += conf.tiers.empty() ? "tiers: []\n" : "tiers:\n";
  for (const auto& tier : conf.tiers) {
    if (tier.plugins.empty())
      out += "- plugins: []\n";
    else
      out += "- plugins:\n";
    for (const auto& p : tier.plugins) {
      out += fmt::format("  - name: {}\n", scalar(p.name));
      for (const auto& [k, on] : p.switches)
        out += fmt::format("    {}: {}\n", scalar(k), on ? "true" : "false");
      write_arguments(out, p.arguments, "    ");
    }
  }
  if (!conf.configurations.empty()) out += "configurations:\n";
  for (const auto& c : conf.configurations) {
    out += fmt::format("- name: {}\n", scalar(c.name));
    write_arguments(out, c.arguments, "  ");
  }
  return out;
}

}  // namespace caldera::sched
