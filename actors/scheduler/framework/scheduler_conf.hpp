// The scheduler's configuration as Volcano writes it (volcano-scheduler.conf): which actions a
// session runs, in order, and which plugins in which tiers, with their switches and arguments.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "messages/model/diagnostic.hpp"
#include "messages/model/result.hpp"
#include "messages/yaml/yaml_tree.hpp"

namespace caldera::sched {

struct PluginOption {
  std::string name;
  std::map<std::string, bool> switches;          // "enablePreemptable" -> false, as written
  std::map<std::string, std::string> arguments;  // "binpack.weight" -> "10", scalars as text
  // Whether an enable* switch is on; one not written is on, as Volcano defaults them.
  bool enabled(std::string_view switch_name) const;
  // A numeric argument, or `fallback` when absent. (Parsing already checked that numbers are
  // numbers.)
  double number(std::string_view key, double fallback) const;
  bool operator==(const PluginOption&) const = default;
};

struct Tier {
  std::vector<PluginOption> plugins;
  bool operator==(const Tier&) const = default;
};

// Volcano's `configurations`: arguments of one action.
struct ActionConfiguration {
  std::string name;
  std::map<std::string, std::string> arguments;
  bool operator==(const ActionConfiguration&) const = default;
};

struct SchedulerConf {
  std::vector<std::string> actions;  // in order
  std::vector<Tier> tiers;
  std::vector<ActionConfiguration> configurations;
  bool has_action(std::string_view name) const;
  const PluginOption* plugin(std::string_view name) const;  // first in tier order, or null
  bool operator==(const SchedulerConf&) const = default;
};

// The actions and plugins caldera's scheduler has (edited as plugins land).
inline constexpr std::array<std::string_view, 5> kKnownActions{"enqueue", "allocate", "preempt",
                                                               "reclaim", "backfill"};
inline constexpr std::array<std::string_view, 9> kKnownPlugins{
    "priority",   "gang",       "conformance", "overcommit", "drf",
    "proportion", "predicates", "nodeorder",   "binpack"};

// A plugin option's switches, spelt as Volcano's YAML spells them ("enable" and "enabled" both
// occur there).
inline constexpr std::array<std::string_view, 25> kPluginSwitches{
    "enableJobOrder",          "enableHierarchy",        "enableJobReady",
    "enableJobPipelined",      "enableTaskOrder",        "enablePreemptable",
    "enableReclaimable",       "enablePreemptive",       "enableQueueOrder",
    "enabledClusterOrder",     "enablePredicate",        "enableBestNode",
    "enableNodeOrder",         "enableTargetJob",        "enableReservedNodes",
    "enableJobEnqueued",       "enabledVictim",          "enableJobStarving",
    "enabledOverused",         "enabledAllocatable",     "enabledHyperNodeOrder",
    "enabledSubJobReady",      "enabledSubJobPipelined", "enabledSubJobOrder",
    "enabledHyperNodeGradient"};

// The longest conf text read: a real one is a few hundred bytes.
inline constexpr size_t kMaxSchedulerConfBytes = size_t{1} << 20;

// actions "enqueue, allocate, preempt, reclaim, backfill"; tiers [priority, gang, conformance],
// [overcommit, drf, predicates, proportion, nodeorder].
SchedulerConf default_scheduler_conf();

// Reads a conf from YAML text (the conf itself, or a Kubernetes ConfigMap holding it under
// data."volcano-scheduler.conf"); errors and warnings go to diags under `path` (e.g.
// "cluster.scheduler.tiers[1].plugins[0].name"; "" for a file of its own).
Result<SchedulerConf> parse_scheduler_conf(std::string_view yaml_text, const std::string& path,
                                           Diagnostics& diags);
// The same from a YamlNode already read (for the inline mapping in the cluster config).
Result<SchedulerConf> read_scheduler_conf(const YamlNode& node, const std::string& path,
                                          Diagnostics& diags);

// Volcano's form, readable back by parse_scheduler_conf (round trip), for `caldera get
// schedulerconfig`.
std::string scheduler_conf_yaml(const SchedulerConf& conf);

}  // namespace caldera::sched
