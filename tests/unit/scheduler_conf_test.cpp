// Volcano's scheduler conf: what it reads, what it refuses (at which field, and why), and the
// YAML it is shown as.
#include <gtest/gtest.h>

#include <string>

#include "actors/scheduler/framework/scheduler_conf.hpp"
#include "diagnostic_matchers.hpp"

namespace caldera::sched {
namespace {

// Volcano's installer/helm/chart/volcano/config/volcano-scheduler.conf, as shipped.
constexpr const char* kVolcanoHelmDefault = R"(actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
)";

// Every part of the format: switches, arguments of each checked kind, configurations.
constexpr const char* kFull = R"(actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: overcommit
    arguments:
      overcommit-factor: 1.5
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: proportion
  - name: nodeorder
    arguments:
      leastrequested.weight: 1
      balancedresource.weight: 1
  - name: binpack
    arguments:
      binpack.weight: 10
      binpack.cpu: 2
      binpack.resources: nvidia.com/gpu, example.com/foo
      binpack.resources.nvidia.com/gpu: 3
configurations:
- name: enqueue
  arguments:
    foo: bar
)";

Result<SchedulerConf> parse(const std::string& text, Diagnostics& diags) {
  return parse_scheduler_conf(text, "", diags);
}

// A conf of one tier holding `plugins` (YAML flow mappings), running allocate.
std::string with_plugins(const std::string& plugins) {
  return "actions: allocate\ntiers:\n- plugins: [" + plugins + "]\n";
}

TEST(SchedulerConf, TheDefaultRoundTripsThroughItsYaml) {
  const auto conf = default_scheduler_conf();
  const auto yaml = scheduler_conf_yaml(conf);
  EXPECT_EQ(yaml, R"(actions: "enqueue, allocate, preempt, reclaim, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
)");
  Diagnostics diags;
  auto back = parse(yaml, diags);
  ASSERT_TRUE(back) << dump(diags.errors);
  EXPECT_EQ(*back, conf);
  EXPECT_TRUE(diags.warnings.empty()) << dump(diags.warnings);
}

TEST(SchedulerConf, VolcanosHelmDefaultParses) {
  Diagnostics diags;
  auto conf = parse(kVolcanoHelmDefault, diags);
  ASSERT_TRUE(conf) << dump(diags.errors);
  EXPECT_TRUE(diags.warnings.empty()) << dump(diags.warnings);
  EXPECT_EQ(conf->actions, (std::vector<std::string>{"enqueue", "allocate", "backfill"}));
  ASSERT_EQ(conf->tiers.size(), 2u);
  EXPECT_EQ(conf->tiers[0].plugins.size(), 3u);
  EXPECT_EQ(conf->tiers[1].plugins.size(), 6u);
  EXPECT_TRUE(conf->has_action("backfill"));
  EXPECT_FALSE(conf->has_action("preempt"));
  ASSERT_NE(conf->plugin("gang"), nullptr);
  EXPECT_FALSE(conf->plugin("gang")->enabled("enablePreemptable"));
  EXPECT_TRUE(conf->plugin("gang")->enabled("enableJobReady"));  // unset: on, as in Volcano
  EXPECT_EQ(conf->plugin("binpack"), &conf->tiers[1].plugins[5]);
  EXPECT_EQ(conf->plugin("shuffle"), nullptr);
}

TEST(SchedulerConf, ArgumentsAreKeptAsTextAndReadAsNumbers) {
  Diagnostics diags;
  auto conf = parse(kFull, diags);
  ASSERT_TRUE(conf) << dump(diags.errors);
  EXPECT_TRUE(diags.warnings.empty()) << dump(diags.warnings);
  const auto* binpack = conf->plugin("binpack");
  ASSERT_NE(binpack, nullptr);
  EXPECT_EQ(binpack->arguments.at("binpack.weight"), "10");
  EXPECT_EQ(binpack->number("binpack.weight", 1), 10);
  EXPECT_EQ(binpack->number("binpack.memory", 1), 1);  // absent: the fallback
  EXPECT_EQ(conf->plugin("overcommit")->number("overcommit-factor", 1.2), 1.5);
  ASSERT_EQ(conf->configurations.size(), 1u);
  EXPECT_EQ(conf->configurations[0].name, "enqueue");
  EXPECT_EQ(conf->configurations[0].arguments.at("foo"), "bar");

  Diagnostics again;
  auto back = parse(scheduler_conf_yaml(*conf), again);
  ASSERT_TRUE(back) << dump(again.errors) << "\n" << scheduler_conf_yaml(*conf);
  EXPECT_EQ(*back, *conf);
}

TEST(SchedulerConf, AwkwardTextRoundTrips) {
  SchedulerConf conf;
  conf.actions = {"allocate", "enqueue"};
  PluginOption p{"predicates", {{"enablePredicate", false}, {"enableBestNode", true}}, {}};
  for (std::string v : {"", "null", "~", "-", "true", "a: b", "x\"y\\z", "line\nbreak", "#hash",
                        "  padded ", "é", "\x01", "[1, 2]", "*alias", "- item"})
    p.arguments["k" + std::to_string(p.arguments.size())] = v;
  p.arguments["a key: with {odd} chars"] = "1";
  conf.tiers = {Tier{{p}}, Tier{}};
  conf.configurations = {ActionConfiguration{"enqueue", {{"x", "y z"}}}};
  Diagnostics diags;
  auto back = parse(scheduler_conf_yaml(conf), diags);
  ASSERT_TRUE(back) << dump(diags.errors) << "\n" << scheduler_conf_yaml(conf);
  EXPECT_EQ(*back, conf) << scheduler_conf_yaml(conf);
}

TEST(SchedulerConf, AnUnknownActionIsRefusedWithTheKnownOnes) {
  Diagnostics diags;
  EXPECT_FALSE(parse("actions: \"enqueue, shuffle\"\ntiers: [{plugins: [{name: gang}]}]", diags));
  ASSERT_EQ(diags.errors.size(), 1u) << dump(diags.errors);
  EXPECT_EQ(diags.errors[0].path, "actions");
  EXPECT_EQ(diags.errors[0].message,
            "\"shuffle\" is not an action caldera's scheduler has; known: enqueue, allocate, "
            "preempt, reclaim, backfill");
}

TEST(SchedulerConf, AnUnknownPluginIsRefusedWithTheKnownOnes) {
  Diagnostics diags;
  EXPECT_FALSE(parse_scheduler_conf(
      "actions: allocate\ntiers:\n- plugins: [{name: gang}]\n- plugins: [{name: tdm}]\n",
      "cluster.scheduler", diags));
  ASSERT_EQ(diags.errors.size(), 1u) << dump(diags.errors);
  EXPECT_EQ(diags.errors[0].path, "cluster.scheduler.tiers[1].plugins[0].name");
  EXPECT_EQ(diags.errors[0].message,
            "\"tdm\" is not a plugin caldera's scheduler has; known: priority, gang, conformance, "
            "overcommit, drf, proportion, predicates, nodeorder, binpack");
}

TEST(SchedulerConf, AnActionOrPluginNamedTwiceIsRefused) {
  Diagnostics actions;
  EXPECT_FALSE(parse("actions: enqueue,allocate , enqueue\ntiers: []", actions));
  EXPECT_TRUE(has(actions.errors, "actions", "\"enqueue\" is named twice"));
  Diagnostics plugins;
  EXPECT_FALSE(
      parse("actions: allocate\ntiers:\n- plugins: [{name: gang}]\n- plugins: [{name: drf}, {name: "
            "gang}]\n",
            plugins));
  EXPECT_TRUE(has(plugins.errors, "tiers[1].plugins[1].name",
                  "plugin \"gang\" is already tiers[0].plugins[0]"));
}

TEST(SchedulerConf, ActionsMustBeGiven) {
  for (const std::string text :
       {"tiers: []", "actions:\ntiers: []", "actions: \" , \"\ntiers: []", "actions: [allocate]"}) {
    Diagnostics diags;
    EXPECT_FALSE(parse(text, diags)) << text;
    EXPECT_TRUE(has(diags.errors, "actions", "actions: \"enqueue, allocate, backfill\"")) << text;
  }
  Diagnostics empty_name;
  EXPECT_FALSE(parse("actions: \"allocate,,backfill\"", empty_name));
  EXPECT_TRUE(has(empty_name.errors, "actions", "empty action name"));
}

TEST(SchedulerConf, NumericArgumentsMustBeNumbersAndNotNegative) {
  struct Case {
    std::string plugin;
    std::string key;
    std::string words;
  };
  for (const auto& c : std::vector<Case>{
           {"{name: binpack, arguments: {binpack.weight: ten}}", "binpack.weight",
            "\"ten\" is not a number"},
           {"{name: binpack, arguments: {binpack.cpu: -1}}", "binpack.cpu", "-1 is less than 0"},
           {"{name: binpack, arguments: {binpack.memory: .inf}}", "binpack.memory",
            "is not a number"},
           {"{name: binpack, arguments: {binpack.resources: gpu, binpack.resources.gpu: x}}",
            "binpack.resources.gpu", "is not a number"},
           {"{name: binpack, arguments: {binpack.resources: \"nvidia.com/gpu, a b\"}}",
            "binpack.resources", "\"a b\" is not a resource name"},
           {"{name: nodeorder, arguments: {leastrequested.weight: -2}}", "leastrequested.weight",
            "-2 is less than 0"},
           {"{name: overcommit, arguments: {overcommit-factor: 0.5}}", "overcommit-factor",
            "0.5 is less than 1"},
           {"{name: overcommit, arguments: {overcommit-factor: lots}}", "overcommit-factor",
            "is not a number"},
       }) {
    Diagnostics diags;
    EXPECT_FALSE(parse(with_plugins(c.plugin), diags)) << c.plugin;
    EXPECT_TRUE(has(diags.errors, "tiers[0].plugins[0].arguments." + c.key, c.words));
  }
  // Other plugins' arguments are theirs to read; a weight of 0 turns a score off.
  Diagnostics fine;
  EXPECT_TRUE(parse(with_plugins("{name: predicates, arguments: {predicate.weight: x}}, {name: "
                                 "nodeorder, arguments: {nodeaffinity.weight: 0, other: x}}"),
                    fine))
      << dump(fine.errors);
}

TEST(SchedulerConf, ABinpackResourceWeightForAResourceNotListedIsWarned) {
  Diagnostics diags;
  auto conf = parse(with_plugins("{name: binpack, arguments: {binpack.resources: nvidia.com/gpu, "
                                 "binpack.resources.example.com/foo: 2}}"),
                    diags);
  ASSERT_TRUE(conf) << dump(diags.errors);
  EXPECT_TRUE(has(diags.warnings, "tiers[0].plugins[0].arguments.binpack.resources.example.com/foo",
                  "example.com/foo is not listed in binpack.resources"));
}

TEST(SchedulerConf, ANestedArgumentIsRefusedAtItsPath) {
  Diagnostics diags;
  EXPECT_FALSE(parse(with_plugins("{name: predicates, arguments: {predicate.resources: {gpu: 1}, "
                                  "list: [1, 2], fine: 3}}"),
                     diags));
  EXPECT_TRUE(has(diags.errors, "tiers[0].plugins[0].arguments.predicate.resources",
                  "must be a single value (a number or text), not a mapping"));
  EXPECT_TRUE(has(diags.errors, "tiers[0].plugins[0].arguments.list", "not a list"));
  EXPECT_EQ(diags.errors.size(), 2u) << dump(diags.errors);
  Diagnostics not_a_map;
  EXPECT_FALSE(parse(with_plugins("{name: gang, arguments: [a]}"), not_a_map));
  EXPECT_TRUE(has(not_a_map.errors, "tiers[0].plugins[0].arguments", "must be a mapping"));
}

TEST(SchedulerConf, AKubernetesConfigMapIsReadFromItsData) {
  std::string config_map =
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: volcano-scheduler-configmap, namespace: "
      "volcano-system}\ndata:\n  volcano-scheduler.conf: |\n";
  std::string indented;
  for (std::string_view rest = kVolcanoHelmDefault; !rest.empty();) {
    auto nl = rest.find('\n');
    indented += "    " + std::string(rest.substr(0, nl)) + "\n";
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
  }
  Diagnostics diags;
  auto conf = parse(config_map + indented, diags);
  ASSERT_TRUE(conf) << dump(diags.errors);
  EXPECT_TRUE(diags.warnings.empty()) << dump(diags.warnings);
  Diagnostics plain;
  EXPECT_EQ(*conf, *parse(kVolcanoHelmDefault, plain));

  Diagnostics inner;
  EXPECT_FALSE(parse_scheduler_conf(
      "kind: ConfigMap\ndata:\n  volcano-scheduler.conf: |\n    actions: allocate\n    tiers: "
      "[{plugins: [{name: tdm}]}]\n",
      "cluster.scheduler", inner));
  EXPECT_TRUE(has(inner.errors,
                  "cluster.scheduler.data.volcano-scheduler.conf.tiers[0].plugins[0].name",
                  "\"tdm\" is not a plugin"));

  Diagnostics missing;
  EXPECT_FALSE(parse("kind: ConfigMap\ndata: {other.conf: x}\n", missing));
  EXPECT_TRUE(has(missing.errors, "data", "under data.volcano-scheduler.conf"));
  Diagnostics other_kind;
  EXPECT_FALSE(parse("kind: Job\n", other_kind));
  EXPECT_TRUE(has(other_kind.errors, "kind", "\"Job\" is not a scheduler conf"));
}

TEST(SchedulerConf, AnUnknownPluginFieldIsWarnedAndIgnored) {
  Diagnostics diags;
  auto conf = parse(with_plugins("{name: gang, enablePreemptible: false, weight: 2}"), diags);
  ASSERT_TRUE(conf) << dump(diags.errors);
  EXPECT_TRUE(
      has(diags.warnings, "tiers[0].plugins[0].enablePreemptible", "unknown field, ignored"));
  EXPECT_TRUE(has(diags.warnings, "tiers[0].plugins[0].weight", "unknown field, ignored"));
  EXPECT_TRUE(conf->tiers[0].plugins[0].switches.empty());
}

TEST(SchedulerConf, SwitchesAreBooleansAsVolcanoReadsThem) {
  Diagnostics diags;
  auto conf = parse(with_plugins("{name: gang, enableJobReady: no, enabledVictim: True, "
                                 "enablePreemptable: false}"),
                    diags);
  ASSERT_TRUE(conf) << dump(diags.errors);
  const auto& gang = conf->tiers[0].plugins[0];
  EXPECT_FALSE(gang.enabled("enableJobReady"));
  EXPECT_TRUE(gang.enabled("enabledVictim"));
  EXPECT_FALSE(gang.enabled("enablePreemptable"));
  EXPECT_EQ(gang.switches.size(), 3u);
  for (const std::string bad : {"\"true\"", "1", "maybe", "{a: b}"}) {
    Diagnostics d;
    EXPECT_FALSE(parse(with_plugins("{name: gang, enableJobOrder: " + bad + "}"), d)) << bad;
    EXPECT_TRUE(has(d.errors, "tiers[0].plugins[0].enableJobOrder", "must be true or false"));
  }
}

TEST(SchedulerConf, HierarchicalDrfAndProportionInOneTierAreRefused) {
  Diagnostics diags;
  EXPECT_FALSE(
      parse(with_plugins("{name: drf, enableHierarchy: true}, {name: proportion}"), diags));
  EXPECT_TRUE(has(diags.errors, "tiers[0].plugins[0].enableHierarchy", "keep one"));
  Diagnostics apart;
  EXPECT_TRUE(
      parse("actions: allocate\ntiers:\n- plugins: [{name: drf, enableHierarchy: true}]\n"
            "- plugins: [{name: proportion}]\n",
            apart))
      << dump(apart.errors);
}

TEST(SchedulerConf, UnknownTopLevelFieldsAndMetricsAreWarned) {
  Diagnostics diags;
  auto conf =
      parse(std::string(kVolcanoHelmDefault) + "metrics: {type: prometheus}\nextra: 1\n", diags);
  ASSERT_TRUE(conf) << dump(diags.errors);
  EXPECT_TRUE(has(diags.warnings, "metrics", "ignored"));
  EXPECT_TRUE(has(diags.warnings, "extra", "unknown field, ignored"));
}

TEST(SchedulerConf, ConfigurationsNameKnownActions) {
  Diagnostics diags;
  EXPECT_FALSE(
      parse("actions: allocate\ntiers: []\nconfigurations:\n- {name: shuffle}\n- {name: "
            "enqueue, arguments: {a: 1}}\n- {name: allocate, arguments: {b: {c: d}}}\n",
            diags));
  EXPECT_TRUE(has(diags.errors, "configurations[0].name", "\"shuffle\" is not an action"));
  EXPECT_TRUE(has(diags.warnings, "configurations[1].name", "not among the actions"));
  EXPECT_TRUE(has(diags.errors, "configurations[2].arguments.b", "must be a single value"));
}

TEST(SchedulerConf, OversizedTextIsRefused) {
  std::string text =
      std::string(kVolcanoHelmDefault) + "# " + std::string(kMaxSchedulerConfBytes, 'x') + "\n";
  Diagnostics diags;
  EXPECT_FALSE(parse_scheduler_conf(text, "cluster.scheduler", diags));
  EXPECT_TRUE(has(diags.errors, "cluster.scheduler", "(1 MiB)"));
}

TEST(SchedulerConf, BadYamlIsAnErrorWithItsLine) {
  Diagnostics diags;
  EXPECT_FALSE(parse("actions: allocate\ntiers: [\n", diags));
  ASSERT_FALSE(diags.errors.empty());
  EXPECT_EQ(diags.errors[0].path.rfind("line ", 0), 0u) << dump(diags.errors);
  Diagnostics empty;
  EXPECT_FALSE(parse("", empty));
  EXPECT_TRUE(has(empty.errors, "", "must be a mapping with actions and tiers"));
  Diagnostics shapes;
  EXPECT_FALSE(parse("actions: allocate\ntiers: [gang, {plugins: gang}, {}]\n", shapes));
  EXPECT_TRUE(has(shapes.errors, "tiers[0]", "must be a mapping with plugins"));
  EXPECT_TRUE(has(shapes.errors, "tiers[1].plugins", "must be a list of plugins"));
  EXPECT_TRUE(has(shapes.errors, "tiers[2].plugins", "missing"));
}

// Aliases make a short text name the same long list many times: the walk stops at its budget.
TEST(SchedulerConf, AliasesCannotMakeTheWalkEndless) {
  std::string text = "p: &p {name: gang, arguments: {";
  for (int i = 0; i < 100; ++i) text += "a" + std::to_string(i) + ": 1, ";
  text += "z: 1}}\nl: &l [";
  for (int i = 0; i < 100; ++i) text += "*p, ";
  text += "*p]\nactions: allocate\ntiers: [";
  for (int i = 0; i < 100; ++i) text += "{plugins: *l}, ";
  text += "{plugins: *l}]\n";
  Diagnostics diags;
  EXPECT_FALSE(parse(text, diags));
  EXPECT_TRUE(has(diags.errors, "", "more than 10000 values"));
  EXPECT_LT(diags.errors.size(), 10'001u);
}

}  // namespace
}  // namespace caldera::sched
