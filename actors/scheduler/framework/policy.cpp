#include "actors/scheduler/framework/policy.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include <fmt/format.h>

namespace caldera::sched {

namespace {

std::string trim(std::string s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// The switches and arguments each plugin here applies; any other is warned about.
struct Applied {
  std::set<std::string> switches;
  std::set<std::string> arguments;
  std::string argument_prefix;  // e.g. "binpack.resources." (per-resource weights)
};

Applied applied(const std::string& plugin) {
  if (plugin == "priority" || plugin == "gang" || plugin == "conformance")
    return {{"enablePreemptable"}, {}, ""};
  if (plugin == "drf") return {{"enableJobOrder"}, {}, ""};
  if (plugin == "overcommit") return {{}, {"overcommit-factor"}, ""};
  if (plugin == "nodeorder")
    return {{}, {"leastrequested.weight", "mostrequested.weight", "balancedresource.weight"}, ""};
  if (plugin == "binpack")
    return {{},
            {"binpack.weight", "binpack.cpu", "binpack.memory", "binpack.resources"},
            "binpack.resources."};
  return {};
}

}  // namespace

bool Policy::has(std::string_view action) const {
  return std::find(actions.begin(), actions.end(), action) != actions.end();
}

bool is_critical(const std::string& job_key, const std::string& priority_class) {
  return priority_class == "system-cluster-critical" || priority_class == "system-node-critical" ||
         job_key.starts_with("kube-system/");
}

Policy policy_from(const SchedulerConf& conf, const std::string& path, Diagnostics& diags) {
  Policy p;
  p.actions = conf.actions;
  const auto* priority = conf.plugin("priority");
  const auto* gang = conf.plugin("gang");
  const auto* conformance = conf.plugin("conformance");
  const auto* overcommit = conf.plugin("overcommit");
  const auto* nodeorder = conf.plugin("nodeorder");
  const auto* binpack = conf.plugin("binpack");
  p.priority = priority != nullptr;
  p.priority_preempts = priority && priority->enabled("enablePreemptable");
  p.options.gang = gang != nullptr;
  p.options.gang_protects_victims = gang && gang->enabled("enablePreemptable");
  p.conformance = conformance && conformance->enabled("enablePreemptable");
  p.overcommit = overcommit != nullptr;
  if (overcommit) p.options.overcommit_factor = overcommit->number("overcommit-factor", 1.2);
  p.proportion = conf.plugin("proportion") != nullptr;
  p.predicates = conf.plugin("predicates") != nullptr;
  const auto* drf = conf.plugin("drf");
  p.drf = drf && drf->enabled("enableJobOrder");
  p.options.scoring = NodeScoring{std::nullopt, std::nullopt};  // only the plugins named
  if (nodeorder)
    p.options.scoring.nodeorder = NodeOrderWeights{nodeorder->number("leastrequested.weight", 1),
                                                   nodeorder->number("mostrequested.weight", 0),
                                                   nodeorder->number("balancedresource.weight", 1)};
  if (binpack) {
    BinpackWeights w;
    w.weight = binpack->number("binpack.weight", 1);
    w.resources["cpu"] = binpack->number("binpack.cpu", 1);
    w.resources["memory"] = binpack->number("binpack.memory", 1);
    if (auto listed = binpack->arguments.find("binpack.resources");
        listed != binpack->arguments.end()) {
      std::stringstream names(listed->second);
      for (std::string name; std::getline(names, name, ',');)
        if (auto n = trim(name); !n.empty())
          w.resources[n] = binpack->number("binpack.resources." + n, 1);
    }
    p.options.scoring.binpack = std::move(w);
  }
  for (size_t t = 0; t < conf.tiers.size(); ++t)
    for (size_t i = 0; i < conf.tiers[t].plugins.size(); ++i) {
      const auto& option = conf.tiers[t].plugins[i];
      const auto at = fmt::format("{}.tiers[{}].plugins[{}]", path, t, i);
      const auto known = applied(option.name);
      // A switch turned off that the plugin here has no use for changes nothing: no word.
      for (const auto& [name, on] : option.switches)
        if (on && !known.switches.count(name))
          diags.warn(
              at + "." + name,
              fmt::format("the {} plugin here does not apply this switch; ignored", option.name));
      for (const auto& [name, value] : option.arguments)
        if (!known.arguments.count(name) &&
            (known.argument_prefix.empty() || !name.starts_with(known.argument_prefix)))
          diags.warn(
              at + ".arguments." + name,
              fmt::format("the {} plugin here does not use this argument; ignored", option.name));
    }
  return p;
}

}  // namespace caldera::sched
