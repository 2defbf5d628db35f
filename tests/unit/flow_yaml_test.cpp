// Reading JobTemplate and JobFlow documents (flow.volcano.sh/v1alpha1), alone and mixed with Jobs.
#include <gtest/gtest.h>

#include <string>

#include "messages/yaml/job_yaml.hpp"
#include "tests/unit/diagnostic_matchers.hpp"

namespace caldera {
namespace {

constexpr const char* kTemplate = R"(
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata:
  name: train
  namespace: ml
  labels: {stage: train}
  annotations: {owner: bob}
spec:
  minAvailable: 2
  maxRetry: 4
  queue: gpu
  tasks:
    - name: worker
      replicas: 2
      template: {spec: {containers: [{name: main, command: [echo, hi]}]}}
)";

constexpr const char* kFlow = R"(
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata:
  name: pipeline
  namespace: ml
  labels: {app: demo}
  annotations: {note: first}
spec:
  jobRetainPolicy: delete
  flows:
    - name: prepare
    - name: train
      dependsOn:
        targets: [prepare]
    - name: evaluate
      dependsOn: {targets: [train, prepare]}
)";

TEST(FlowYaml, JobTemplateReadsMetadataAndTheJobSpec) {
  Diagnostics diags;
  auto parsed = parse_yaml(kTemplate, diags);
  EXPECT_TRUE(diags.errors.empty()) << dump(diags.errors);
  EXPECT_TRUE(diags.warnings.empty()) << dump(diags.warnings);
  EXPECT_TRUE(parsed.jobs.empty());
  EXPECT_TRUE(parsed.flows.empty());
  ASSERT_EQ(parsed.templates.size(), 1u);
  const JobSpec& t = parsed.templates[0].value;
  EXPECT_EQ(parsed.templates[0].prefix, "");
  EXPECT_EQ(t.name, "train");
  EXPECT_EQ(t.namespace_, "ml");
  EXPECT_EQ(t.labels.at("stage"), "train");
  EXPECT_EQ(t.annotations.at("owner"), "bob");
  EXPECT_EQ(t.min_available, 2);
  EXPECT_EQ(t.max_retry, 4);
  EXPECT_EQ(t.queue, "gpu");
  ASSERT_EQ(t.tasks.size(), 1u);
  EXPECT_EQ(t.tasks[0].replicas, 2);
  EXPECT_EQ(t.tasks[0].template_.containers.at(0).command,
            (std::vector<std::string>{"echo", "hi"}));
}

TEST(FlowYaml, JobFlowReadsEveryField) {
  Diagnostics diags;
  auto parsed = parse_yaml(kFlow, diags);
  EXPECT_TRUE(diags.errors.empty()) << dump(diags.errors);
  EXPECT_TRUE(diags.warnings.empty()) << dump(diags.warnings);
  ASSERT_EQ(parsed.flows.size(), 1u);
  const JobFlowSpec& f = parsed.flows[0].value;
  EXPECT_EQ(f.name, "pipeline");
  EXPECT_EQ(f.namespace_, "ml");
  EXPECT_EQ(f.labels, (std::map<std::string, std::string>{{"app", "demo"}}));
  EXPECT_EQ(f.annotations, (std::map<std::string, std::string>{{"note", "first"}}));
  EXPECT_EQ(f.job_retain_policy, "delete");
  ASSERT_EQ(f.flows.size(), 3u);
  EXPECT_EQ(f.flows[0], (Flow{"prepare", std::nullopt}));
  EXPECT_EQ(f.flows[1], (Flow{"train", FlowDependsOn{{"prepare"}}}));
  EXPECT_EQ(f.flows[2], (Flow{"evaluate", FlowDependsOn{{"train", "prepare"}}}));
}

TEST(FlowYaml, DefaultsWhenFieldsAreMissing) {
  Diagnostics diags;
  auto parsed = parse_yaml(
      "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: f}\n"
      "spec: {flows: [{name: a}]}\n",
      diags);
  ASSERT_TRUE(diags.ok()) << dump(diags.errors);
  ASSERT_EQ(parsed.flows.size(), 1u);
  EXPECT_EQ(parsed.flows[0].value.namespace_, "default");
  EXPECT_EQ(parsed.flows[0].value.job_retain_policy, "retain");
}

TEST(FlowYaml, ProbePatchAndUnknownFieldsAreWarnings) {
  Diagnostics diags;
  auto parsed = parse_yaml(R"(
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: f, uid: abc, colour: red}
spec:
  paused: true
  flows:
    - name: a
      patch: {spec: {queue: other}}
    - name: b
      extra: 1
      dependsOn:
        targets: [a]
        probe: {httpGetList: [{taskName: server, path: /ready, port: 8080, stray: 1}]}
        strict: yes
status: {state: {phase: Running}}
)",
                           diags);
  EXPECT_TRUE(diags.errors.empty()) << dump(diags.errors);
  const auto& w = diags.warnings;
  EXPECT_TRUE(has(w, "metadata.uid", "ignored"));
  EXPECT_TRUE(has(w, "metadata.colour", "unknown field"));
  EXPECT_TRUE(has(w, "spec.paused", "unknown field"));
  EXPECT_TRUE(has(w, "spec.flows[1].extra", "unknown field"));
  EXPECT_TRUE(has(w, "spec.flows[1].dependsOn.probe.httpGetList[0].stray", "unknown field"));
  EXPECT_TRUE(has(w, "spec.flows[1].dependsOn.strict", "unknown field"));
  EXPECT_TRUE(has(w, "status", "ignored"));
  EXPECT_EQ(w.size(), 7u) << dump(w);
  ASSERT_EQ(parsed.flows.size(), 1u);
  EXPECT_EQ(parsed.flows[0].value.flows.at(1).depends_on->targets, std::vector<std::string>{"a"});
  ASSERT_TRUE(parsed.flows[0].value.flows.at(0).patch.has_value());
  EXPECT_EQ(parsed.flows[0].value.flows.at(0).patch->queue, "other");
}

TEST(FlowYaml, PatchRetryAndProbeAreRead) {
  Diagnostics diags;
  auto parsed = parse_yaml(R"(
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: f}
spec:
  flows:
    - name: a
      retry: 2
      patch:
        jobSpec:
          tasks:
            - name: worker
              replicas: 3
              template: {spec: {containers: [{name: main, env: [{name: X, value: "1"}]}]}}
    - name: b
      dependsOn:
        targets: [a]
        probe: {taskStatusList: [{taskName: worker, phase: Running}]}
)",
                           diags);
  EXPECT_TRUE(diags.errors.empty()) << dump(diags.errors);
  EXPECT_TRUE(diags.warnings.empty()) << dump(diags.warnings);
  ASSERT_EQ(parsed.flows.size(), 1u);
  const auto& a = parsed.flows[0].value.flows.at(0);
  EXPECT_EQ(a.retry, 2);
  ASSERT_TRUE(a.patch.has_value());
  EXPECT_TRUE(a.patch->queue.empty());
  ASSERT_EQ(a.patch->tasks.size(), 1u);
  EXPECT_EQ(a.patch->tasks[0].replicas, 3);
  EXPECT_EQ(a.patch->tasks[0].template_.containers.at(0).env.at(0).value, "1");
  const auto& b = parsed.flows[0].value.flows.at(1);
  EXPECT_EQ(b.depends_on->probe, (std::vector<TaskProbe>{{"worker", "Running"}}));
}

TEST(FlowYaml, HttpGetAndTcpSocketProbesAreReadAsVolcanoSpellsThem) {
  Diagnostics diags;
  auto parsed = parse_yaml(R"(
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: f}
spec:
  flows:
    - name: server
    - name: client
      dependsOn:
        targets: [server]
        probe:
          httpGetList:
            - {taskName: web, path: /healthz, port: 8080, httpHeader: {name: X-Probe, value: flow}}
            - {taskName: web, port: 8081}
          tcpSocketList:
            - {taskName: db, port: 5432}
)",
                           diags);
  EXPECT_TRUE(diags.errors.empty()) << dump(diags.errors);
  EXPECT_TRUE(diags.warnings.empty()) << dump(diags.warnings);
  ASSERT_EQ(parsed.flows.size(), 1u);
  const auto& dep = *parsed.flows[0].value.flows.at(1).depends_on;
  EXPECT_EQ(dep.http_get, (std::vector<HttpGetProbe>{{"web", "/healthz", 8080, "X-Probe", "flow"},
                                                     {"web", "/", 8081, "", ""}}));
  EXPECT_EQ(dep.tcp_socket, (std::vector<TcpSocketProbe>{{"db", 5432}}));
  EXPECT_TRUE(dep.probes_endpoints());
}

TEST(FlowYaml, APatchIsReadAsVolcanoSpellsItAndAsCalderaDidBefore) {
  auto flow = [](const std::string& patch) {
    return "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: f}\nspec:\n"
           "  flows:\n    - name: a\n      patch: " +
           patch + "\n";
  };
  for (const char* field : {"jobSpec", "spec"}) {
    Diagnostics diags;
    auto parsed = parse_yaml(flow(std::string("{") + field + ": {queue: other}}"), diags);
    EXPECT_TRUE(diags.ok() && diags.warnings.empty()) << field << dump(diags.errors);
    ASSERT_EQ(parsed.flows.size(), 1u);
    ASSERT_TRUE(parsed.flows[0].value.flows.at(0).patch.has_value()) << field;
    EXPECT_EQ(parsed.flows[0].value.flows.at(0).patch->queue, "other") << field;
  }
  Diagnostics both;
  parse_yaml(flow("{jobSpec: {queue: a}, spec: {queue: b}}"), both);
  EXPECT_TRUE(has(both.errors, "spec.flows[0].patch.spec", "both jobSpec and spec"))
      << dump(both.errors);
}

TEST(FlowYaml, WrongTypesAreErrorsAtTheirPaths) {
  Diagnostics diags;
  parse_yaml(R"(
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: f}
spec:
  jobRetainPolicy: [retain]
  flows:
    - name: {a: b}
    - dependsOn: {targets: a}
    - just-a-string
)",
             diags);
  const auto& e = diags.errors;
  EXPECT_TRUE(has(e, "spec.jobRetainPolicy", "expected a string"));
  EXPECT_TRUE(has(e, "spec.flows[0].name", "expected a string"));
  EXPECT_TRUE(has(e, "spec.flows[1].dependsOn.targets", "expected a list"));
  EXPECT_TRUE(has(e, "spec.flows[2]", "expected a mapping"));
  EXPECT_EQ(e.size(), 4u) << dump(e);

  Diagnostics flows_not_a_list;
  parse_yaml("apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nspec: {flows: {a: 1}}\n",
             flows_not_a_list);
  EXPECT_TRUE(has(flows_not_a_list.errors, "spec.flows", "expected a list"));
}

TEST(FlowYaml, ApiVersionIsRequiredAndAnotherOneWarns) {
  Diagnostics diags;
  auto parsed = parse_yaml(R"(
kind: JobTemplate
metadata: {name: t}
---
apiVersion: batch.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: f}
---
apiVersion: flow.volcano.sh/v1alpha1
kind: Job
metadata: {name: j}
)",
                           diags);
  EXPECT_TRUE(has(diags.errors, "documents[0].apiVersion", "required (flow.volcano.sh/v1alpha1)"));
  EXPECT_TRUE(has(diags.warnings, "documents[1].apiVersion", "read as flow.volcano.sh/v1alpha1"));
  EXPECT_TRUE(has(diags.warnings, "documents[2].apiVersion", "read as batch.volcano.sh/v1alpha1"));
  EXPECT_EQ(diags.errors.size(), 1u) << dump(diags.errors);
  EXPECT_EQ(parsed.templates.size(), 1u);
  EXPECT_EQ(parsed.flows.size(), 1u);
  EXPECT_EQ(parsed.jobs.size(), 1u);
}

TEST(FlowYaml, MixedKindsRememberTheirDocuments) {
  const std::string text = std::string(kTemplate) + "---\n" + kFlow + R"(
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: j}
spec: {tasks: [{name: t, replicas: x}]}
---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: second}
)";
  Diagnostics diags;
  auto parsed = parse_yaml(text, diags);
  ASSERT_EQ(parsed.templates.size(), 2u);
  ASSERT_EQ(parsed.flows.size(), 1u);
  ASSERT_EQ(parsed.jobs.size(), 1u);
  EXPECT_EQ(parsed.templates[0].prefix, "documents[0].");
  EXPECT_EQ(parsed.templates[1].prefix, "documents[3].");
  EXPECT_EQ(parsed.templates[1].document, 3u);
  EXPECT_EQ(parsed.flows[0].prefix, "documents[1].");
  EXPECT_EQ(parsed.jobs[0].prefix, "documents[2].");
  EXPECT_EQ(parsed.jobs[0].document, 2u);
  EXPECT_TRUE(has(diags.errors, "documents[2].spec.tasks[0].replicas", "expected an integer"));
  EXPECT_FALSE(parsed.empty());
  EXPECT_TRUE(ParsedDocuments{}.empty());
}

TEST(FlowYaml, PrefixedPaths) {
  EXPECT_EQ(prefixed("documents[2].", "spec.flows"), "documents[2].spec.flows");
  EXPECT_EQ(prefixed("documents[2].", ""), "documents[2]");
  EXPECT_EQ(prefixed("", "metadata.name"), "metadata.name");
  EXPECT_EQ(prefixed("", ""), "");
}

}  // namespace
}  // namespace caldera
