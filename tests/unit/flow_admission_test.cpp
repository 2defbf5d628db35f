// JobFlow admission: every rule, every violation at once, cycles named, missing templates warned.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "messages/admission/flow_admission.hpp"
#include "tests/unit/diagnostic_matchers.hpp"

namespace caldera {
namespace {

Flow flow(std::string name, std::vector<std::string> targets = {}) {
  Flow f{std::move(name), std::nullopt};
  if (!targets.empty()) f.depends_on = FlowDependsOn{std::move(targets)};
  return f;
}

JobFlowSpec spec(std::vector<Flow> flows, std::string name = "pipeline") {
  JobFlowSpec s;
  s.name = std::move(name);
  s.flows = std::move(flows);
  return s;
}

// Templates that exist: every name but those listed.
TemplateExists all_but(std::set<std::string> missing) {
  return [missing](const std::string&, const std::string& name) { return !missing.count(name); };
}

Diagnostics check(JobFlowSpec s, const TemplateExists& exists = all_but({})) {
  apply_defaults(s);
  Diagnostics d;
  admit(s, exists, d);
  return d;
}

TEST(FlowAdmission, GoodFlowIsAdmittedCleanly) {
  auto d = check(spec({flow("a"), flow("b", {"a"}), flow("c", {"a", "b"}), flow("d", {"c"})}));
  EXPECT_TRUE(d.errors.empty()) << dump(d.errors);
  EXPECT_TRUE(d.warnings.empty()) << dump(d.warnings);
}

TEST(FlowAdmission, DefaultsFillNamespaceAndRetainPolicy) {
  JobFlowSpec s = spec({flow("a")});
  s.namespace_ = "";
  s.job_retain_policy = "";
  apply_defaults(s);
  EXPECT_EQ(s.namespace_, "default");
  EXPECT_EQ(s.job_retain_policy, "retain");
  JobFlowSpec kept = spec({flow("a")});
  kept.job_retain_policy = "delete";
  apply_defaults(kept);
  EXPECT_EQ(kept.job_retain_policy, "delete");
}

TEST(FlowAdmission, NamesMustBeDnsLabels) {
  auto d = check(spec({flow("Bad_Flow"), flow("")}, "Bad.Name"));
  EXPECT_TRUE(has(d.errors, "metadata.name", "jobflow name \"Bad.Name\" is not a DNS-1123 label"));
  EXPECT_TRUE(has(d.errors, "spec.flows[0].name", "flow name \"Bad_Flow\" is not a DNS-1123"));
  EXPECT_TRUE(has(d.errors, "spec.flows[1].name", "flow name is required"));
  EXPECT_EQ(d.errors.size(), 3u) << dump(d.errors);

  JobFlowSpec ns = spec({flow("a")});
  ns.namespace_ = "Team A";
  EXPECT_TRUE(has(check(ns).errors, "metadata.namespace", "not a DNS-1123 label"));
  EXPECT_TRUE(
      has(check(spec({flow("a")}, "")).errors, "metadata.name", "jobflow name is required"));
}

TEST(FlowAdmission, AtLeastOneFlowAndUniqueNames) {
  EXPECT_TRUE(has(check(spec({})).errors, "spec.flows", "at least one flow"));
  auto d = check(spec({flow("a"), flow("b"), flow("a")}));
  EXPECT_TRUE(has(d.errors, "spec.flows[2].name", "flow name \"a\" is used twice"));
  EXPECT_EQ(d.errors.size(), 1u) << dump(d.errors);
}

TEST(FlowAdmission, TargetsNameFlowsOfThisJobFlow) {
  auto d = check(spec({flow("a", {"a"}), flow("b", {"a", "nope"})}));
  EXPECT_TRUE(has(d.errors, "spec.flows[0].dependsOn.targets[0]", "cannot depend on itself"));
  EXPECT_TRUE(has(d.errors, "spec.flows[1].dependsOn.targets[1]", "no flow named \"nope\""));
  EXPECT_EQ(d.errors.size(), 2u) << dump(d.errors);
}

TEST(FlowAdmission, CyclesAreReportedOnceWithTheirPath) {
  auto d = check(spec({flow("start"), flow("a", {"c", "start"}), flow("b", {"a"}), flow("c", {"b"}),
                       flow("x", {"y"}), flow("y", {"x"})}));
  EXPECT_TRUE(has(d.errors, "spec.flows[1].dependsOn", "dependency cycle: a -> c -> b -> a"));
  EXPECT_TRUE(has(d.errors, "spec.flows[4].dependsOn", "dependency cycle: x -> y -> x"));
  EXPECT_EQ(d.errors.size(), 2u) << dump(d.errors);
}

TEST(FlowAdmission, RetainPolicyIsRetainOrDelete) {
  JobFlowSpec s = spec({flow("a")});
  s.job_retain_policy = "keep";
  EXPECT_TRUE(
      has(check(s).errors, "spec.jobRetainPolicy", "\"retain\" or \"delete\", got \"keep\""));
  s.job_retain_policy = "delete";
  EXPECT_TRUE(check(s).ok());
}

TEST(FlowAdmission, JobNamesOfFlowsMustFit) {
  const std::string flow_name(40, 'f');
  const std::string long_template(30, 't');  // "fff...-ttt..." is 71 characters
  auto d = check(spec({flow(long_template), flow("ok")}, flow_name));
  EXPECT_TRUE(has(d.errors, "spec.flows[0].name", "would be 71 characters"));
  EXPECT_EQ(d.errors.size(), 1u) << dump(d.errors);
  // A JobFlow name that is itself too long is reported once, not once per flow.
  auto own = check(spec({flow("a"), flow("b")}, std::string(70, 'x')));
  EXPECT_TRUE(has(own.errors, "metadata.name", "at most 63"));
  EXPECT_EQ(own.errors.size(), 1u) << dump(own.errors);
}

TEST(FlowAdmission, MissingTemplateIsAWarningNotAnError) {
  JobFlowSpec s = spec({flow("a"), flow("b", {"a"})});
  s.namespace_ = "ml";
  auto d = check(s, all_but({"b"}));
  EXPECT_TRUE(d.ok()) << dump(d.errors);
  EXPECT_TRUE(has(d.warnings, "spec.flows[1].name",
                  "JobTemplate b does not exist yet in namespace ml; the flow waits for it"));
  EXPECT_EQ(d.warnings.size(), 1u) << dump(d.warnings);
}

TEST(FlowAdmission, EveryViolationIsReportedAtOnce) {
  JobFlowSpec s = spec({flow("a", {"b", "ghost"}), flow("b", {"a"}), flow("B"), flow("b")}, "-x");
  s.job_retain_policy = "sometimes";
  auto d = check(s);
  const auto& e = d.errors;
  EXPECT_TRUE(has(e, "metadata.name", "not a DNS-1123 label"));
  EXPECT_TRUE(has(e, "spec.jobRetainPolicy", "sometimes"));
  EXPECT_TRUE(has(e, "spec.flows[0].dependsOn.targets[1]", "no flow named \"ghost\""));
  EXPECT_TRUE(has(e, "spec.flows[0].dependsOn", "dependency cycle: a -> b -> a"));
  EXPECT_TRUE(has(e, "spec.flows[2].name", "not a DNS-1123 label"));
  EXPECT_TRUE(has(e, "spec.flows[3].name", "used twice"));
  EXPECT_EQ(e.size(), 6u) << dump(e);
}

TEST(FlowAdmission, EndpointProbesNeedATaskAPortAndAPathThatIsOne) {
  auto client = flow("client", {"server"});
  client.depends_on->http_get = {{"", "ready", 0, "", ""},
                                 {"web", "/a b", 8080, "Bad: name", "v"},
                                 {"web", "/ok", 8080, "X-Ok", "v"}};
  client.depends_on->tcp_socket = {{"db", 70000}};
  auto d = check(spec({flow("server"), client}));
  const std::string g = "spec.flows[1].dependsOn.probe.httpGetList[";
  EXPECT_TRUE(has(d.errors, g + "0].taskName", "required"));
  EXPECT_TRUE(has(d.errors, g + "0].port", "not a port"));
  EXPECT_TRUE(has(d.errors, g + "0].path", "must start with /"));
  EXPECT_TRUE(has(d.errors, g + "1].path", "no space"));
  EXPECT_TRUE(has(d.errors, g + "1].httpHeader", "without spaces or colons"));
  EXPECT_TRUE(has(d.errors, "spec.flows[1].dependsOn.probe.tcpSocketList[0].port", "1..65535"));
  EXPECT_EQ(d.errors.size(), 6u) << dump(d.errors);
}

TEST(FlowAdmission, RetryIsBoundedAndProbesNameATaskAndAPhase) {
  auto a = flow("a");
  a.retry = -1;
  auto b = flow("b", {"a"});
  b.retry = 101;
  b.depends_on->probe = {{"", "Running"}, {"main", "Completed"}};
  auto c = flow("c");
  c.depends_on = FlowDependsOn{};
  c.depends_on->probe = {{"main", "Running"}};
  auto d = check(spec({a, b, c}));
  EXPECT_TRUE(has(d.errors, "spec.flows[0].retry", "retry must be between 0 and 100, not -1"));
  EXPECT_TRUE(has(d.errors, "spec.flows[1].retry", "not 101"));
  EXPECT_TRUE(
      has(d.errors, "spec.flows[1].dependsOn.probe.taskStatusList[0].taskName", "required"));
  EXPECT_TRUE(has(d.errors, "spec.flows[1].dependsOn.probe.taskStatusList[1].phase",
                  "phase \"Completed\" is not supported"));
  EXPECT_TRUE(has(d.errors, "spec.flows[2].dependsOn.probe", "a probe needs targets"));
  EXPECT_EQ(d.errors.size(), 5u) << dump(d.errors);

  auto ok = flow("b", {"a"});
  ok.retry = 100;
  ok.depends_on->probe = {{"main", "Succeeded"}};
  EXPECT_TRUE(check(spec({flow("a"), ok})).errors.empty());
}

}  // namespace
}  // namespace caldera
