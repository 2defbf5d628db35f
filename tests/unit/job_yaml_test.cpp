#include <capnp/message.h>
#include <gtest/gtest.h>
#include "messages/api.capnp.h"
#include "messages/codec/codec.hpp"

#include <chrono>
#include <string>

#include "messages/yaml/job_yaml.hpp"
#include "messages/yaml/yaml_duration.hpp"
#include "tests/unit/diagnostic_matchers.hpp"

namespace caldera {
namespace {

constexpr const char* kGoodJob = R"(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: mpi-train
  namespace: team-a
  labels: {app: train}
  annotations: {owner: alice}
spec:
  minAvailable: 3
  minSuccess: 2
  maxRetry: 5
  queue: research
  priorityClassName: high
  schedulerName: volcano
  ttlSecondsAfterFinished: 60
  activeDeadlineSeconds: 3600
  plugins:
    env: []
    svc: ["--disable-network-policy"]
  policies:
    - event: PodEvicted
      action: RestartJob
    - events: [PodFailed, TaskFailed]
      action: AbortJob
      timeout: 5m
    - exitCode: 137
      action: RestartTask
  tasks:
    - name: master
      replicas: 1
      minAvailable: 1
      maxRetry: 2
      policies:
        - event: TaskCompleted
          action: CompleteJob
      template:
        metadata:
          labels: {role: master}
          annotations: {caldera.io/sim-duration-ms: "200"}
        spec:
          restartPolicy: Never
          containers:
            - name: main
              image: busybox
              command: ["sh", "-c"]
              args: ["echo hello"]
              workingDir: /tmp
              env:
                - {name: MODE, value: master}
                - name: PORT
                  value: 8080
              resources:
                requests: {cpu: 500m, memory: 1Gi}
                limits: {cpu: 1, memory: 1Gi}
    - name: worker
      replicas: 4
      dependsOn:
        name: [master]
        iteration: any
      partitionPolicy:
        partitionSize: 2
        minPartitions: 1
      template:
        spec:
          containers:
            - command: [sleep, "1"]
              resources:
                requests: {cpu: 2, nvidia.com/gpu: 1}
)";

TEST(JobYaml, GoodJobParsesWithAllFields) {
  Diagnostics diags;
  auto parsed = parse_yaml(kGoodJob, diags);
  ASSERT_TRUE(diags.errors.empty()) << dump(diags.errors);
  EXPECT_TRUE(diags.warnings.empty()) << dump(diags.warnings);
  ASSERT_EQ(parsed.jobs.size(), 1u);
  const JobSpec& job = parsed.jobs[0].value;
  EXPECT_EQ(job.name, "mpi-train");
  EXPECT_EQ(job.namespace_, "team-a");
  EXPECT_EQ(job.labels.at("app"), "train");
  EXPECT_EQ(job.annotations.at("owner"), "alice");
  EXPECT_EQ(job.min_available, 3);
  EXPECT_EQ(job.min_success, 2);
  EXPECT_EQ(job.max_retry, 5);
  EXPECT_EQ(job.queue, "research");
  EXPECT_EQ(job.priority_class_name, "high");
  EXPECT_EQ(job.scheduler_name, "volcano");
  EXPECT_EQ(job.ttl_seconds_after_finished, 60);
  EXPECT_EQ(job.active_deadline_seconds, 3600);
  ASSERT_EQ(job.plugins.size(), 2u);
  EXPECT_EQ(job.plugins[0], (Plugin{"env", {}}));
  EXPECT_EQ(job.plugins[1], (Plugin{"svc", {"--disable-network-policy"}}));

  ASSERT_EQ(job.policies.size(), 3u);
  EXPECT_EQ(job.policies[0].events, std::vector<Event>{Event::PodEvicted});
  EXPECT_EQ(job.policies[0].action, Action::RestartJob);
  EXPECT_EQ(job.policies[1].events, (std::vector<Event>{Event::PodFailed, Event::TaskFailed}));
  EXPECT_EQ(job.policies[1].timeout_ms, 300000);
  EXPECT_EQ(job.policies[2].exit_code, 137);
  EXPECT_TRUE(job.policies[2].events.empty());
  EXPECT_EQ(job.policies[2].action, Action::RestartTask);

  ASSERT_EQ(job.tasks.size(), 2u);
  const TaskSpec& master = job.tasks[0];
  EXPECT_EQ(master.name, "master");
  EXPECT_EQ(master.replicas, 1);
  EXPECT_EQ(master.min_available, 1);
  EXPECT_EQ(master.max_retry, 2);
  ASSERT_EQ(master.policies.size(), 1u);
  EXPECT_EQ(master.policies[0].action, Action::CompleteJob);
  EXPECT_EQ(master.template_.labels.at("role"), "master");
  EXPECT_EQ(master.template_.annotations.at(kSimDurationAnnotation), "200");
  EXPECT_EQ(master.template_.restart_policy, "Never");
  ASSERT_EQ(master.template_.containers.size(), 1u);
  const Container& c = master.template_.containers[0];
  EXPECT_EQ(c.name, "main");
  EXPECT_EQ(c.image, "busybox");
  EXPECT_EQ(c.command, (std::vector<std::string>{"sh", "-c"}));
  EXPECT_EQ(c.args, std::vector<std::string>{"echo hello"});
  EXPECT_EQ(c.working_dir, "/tmp");
  EXPECT_EQ(c.env, (std::vector<EnvVar>{{"MODE", "master"}, {"PORT", "8080"}}));
  EXPECT_EQ(c.requests, (ResourceList{{{"cpu", 500}, {"memory", 1073741824000LL}}}));
  EXPECT_EQ(c.limits, (ResourceList{{{"cpu", 1000}, {"memory", 1073741824000LL}}}));

  const TaskSpec& worker = job.tasks[1];
  EXPECT_EQ(worker.replicas, 4);
  ASSERT_TRUE(worker.depends_on);
  EXPECT_EQ(worker.depends_on->names, std::vector<std::string>{"master"});
  EXPECT_EQ(worker.depends_on->iteration, "any");
  ASSERT_TRUE(worker.partition_policy);
  EXPECT_EQ(*worker.partition_policy, (PartitionPolicy{2, 1}));
  ASSERT_EQ(worker.template_.containers.size(), 1u);
  EXPECT_EQ(worker.template_.containers[0].requests,
            (ResourceList{{{"cpu", 2000}, {"nvidia.com/gpu", 1000}}}));
}

TEST(JobYaml, TaskWithoutReplicasGetsOne) {
  Diagnostics diags;
  auto parsed = parse_yaml(R"(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: j}
spec:
  tasks:
    - name: t
      template: {spec: {containers: [{command: [true]}]}}
)",
                           diags);
  ASSERT_TRUE(diags.ok()) << dump(diags.errors);
  ASSERT_EQ(parsed.jobs.size(), 1u);
  EXPECT_EQ(parsed.jobs[0].value.tasks.at(0).replicas, 1);
  EXPECT_FALSE(parsed.jobs[0].value.min_available.has_value());
}

TEST(JobYaml, NodeSelectorIsReadAndTravelsWithTheSpec) {
  Diagnostics diags;
  auto parsed = parse_yaml(R"(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: j}
spec:
  tasks:
    - name: t
      template: {spec: {nodeSelector: {zone: a, disk: ssd}, containers: [{command: [true]}]}}
)",
                           diags);
  ASSERT_TRUE(diags.ok()) << dump(diags.errors);
  ASSERT_TRUE(diags.warnings.empty()) << dump(diags.warnings);
  const auto& spec = parsed.jobs.at(0).value;
  const std::map<std::string, std::string> want{{"disk", "ssd"}, {"zone", "a"}};
  EXPECT_EQ(spec.tasks.at(0).template_.node_selector, want);
  capnp::MallocMessageBuilder b;
  encode(spec, b.initRoot<api::JobSpec>());
  Diagnostics ignored;
  EXPECT_EQ(
      decode(b.getRoot<api::JobSpec>().asReader(), ignored).tasks.at(0).template_.node_selector,
      want);

  Diagnostics bad;
  parse_yaml(R"(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: j}
spec:
  tasks:
    - name: t
      template: {spec: {nodeSelector: [zone], containers: [{command: [true]}]}}
)",
             bad);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.errors[0].path, "spec.tasks[0].template.spec.nodeSelector");
}

TEST(JobYaml, TerminationGracePeriodSecondsIsReadAndTravelsWithTheSpec) {
  Diagnostics diags;
  auto parsed = parse_yaml(R"(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: j}
spec:
  tasks:
    - name: slow
      template: {spec: {terminationGracePeriodSeconds: 45, containers: [{command: [true]}]}}
    - name: plain
      template: {spec: {containers: [{command: [true]}]}}
)",
                           diags);
  ASSERT_TRUE(diags.ok()) << dump(diags.errors);
  EXPECT_TRUE(diags.warnings.empty()) << dump(diags.warnings);
  const auto& spec = parsed.jobs.at(0).value;
  EXPECT_EQ(spec.tasks.at(0).template_.termination_grace_seconds, 45);
  EXPECT_FALSE(spec.tasks.at(1).template_.termination_grace_seconds);
  capnp::MallocMessageBuilder b;
  encode(spec, b.initRoot<api::JobSpec>());
  Diagnostics ignored;
  auto back = decode(b.getRoot<api::JobSpec>().asReader(), ignored);
  EXPECT_EQ(back.tasks.at(0).template_.termination_grace_seconds, 45);
  EXPECT_FALSE(back.tasks.at(1).template_.termination_grace_seconds);

  Diagnostics bad;
  parse_yaml(R"(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: j}
spec:
  tasks:
    - name: t
      template: {spec: {terminationGracePeriodSeconds: soon, containers: [{command: [true]}]}}
)",
             bad);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.errors[0].path, "spec.tasks[0].template.spec.terminationGracePeriodSeconds");
}

TEST(JobYaml, SeveralDocumentsPrefixPathsAndSkipEmptyOnes) {
  Diagnostics diags;
  auto parsed = parse_yaml(R"(
---
# an empty document, skipped
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: first}
spec: {tasks: [{name: a, replicas: 1}]}
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: second, color: blue}
spec:
  tasks:
    - name: a
      replicas: many
---
)",
                           diags);
  ASSERT_EQ(parsed.jobs.size(), 2u);
  EXPECT_EQ(parsed.jobs[0].value.name, "first");
  EXPECT_EQ(parsed.jobs[1].value.name, "second");
  EXPECT_TRUE(has(diags.errors, "documents[1].spec.tasks[0].replicas", "expected an integer"));
  EXPECT_TRUE(has(diags.warnings, "documents[1].metadata.color", "unknown field"));
  EXPECT_EQ(diags.errors.size(), 1u) << dump(diags.errors);
}

TEST(JobYaml, SingleDocumentPathsHaveNoPrefix) {
  Diagnostics diags;
  parse_yaml("---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nspec: {maxRetry: x}\n---\n",
             diags);
  EXPECT_TRUE(has(diags.errors, "spec.maxRetry", "expected an integer"));
}

TEST(JobYaml, EmptyTextHasNoJobsAndNoErrors) {
  Diagnostics diags;
  EXPECT_TRUE(parse_yaml("", diags).jobs.empty());
  EXPECT_TRUE(parse_yaml("---\n# nothing\n---\n", diags).jobs.empty());
  EXPECT_TRUE(diags.errors.empty()) << dump(diags.errors);
}

TEST(JobYaml, InvalidYamlReportsItsLine) {
  Diagnostics diags;
  auto parsed =
      parse_yaml("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nspec: [1, 2\n", diags);
  EXPECT_TRUE(parsed.jobs.empty());
  ASSERT_EQ(diags.errors.size(), 1u) << dump(diags.errors);
  EXPECT_EQ(diags.errors[0].path, "line 4");
  EXPECT_NE(diags.errors[0].message.find("sequence"), std::string::npos) << diags.errors[0].message;

  // "1" would go on as a multi-line plain scalar that is a key: the error is where it starts.
  Diagnostics second;
  parse_yaml("a: 1\n  b: 2\n", second);
  ASSERT_EQ(second.errors.size(), 1u) << dump(second.errors);
  EXPECT_EQ(second.errors[0].path, "line 1");
  EXPECT_NE(second.errors[0].message.find("multiline plain key"), std::string::npos)
      << second.errors[0].message;
}

TEST(JobYaml, WrongTypesAreErrorsAtTheirPaths) {
  Diagnostics diags;
  parse_yaml(R"(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: [not, a, string]
  labels: [a, b]
spec:
  minAvailable: "2"
  maxRetry: 1.5
  ttlSecondsAfterFinished: 99999999999999999999999
  plugins: {env: yes-please}
  policies: {event: PodFailed}
  tasks:
    - name: t
      replicas: 3000000000
      dependsOn: {name: other}
      template:
        spec:
          containers:
            - command: "echo hi"
              env: {A: b}
              resources: {requests: [cpu]}
    - just-a-string
)",
             diags);
  const auto& e = diags.errors;
  EXPECT_TRUE(has(e, "metadata.name", "expected a string, got a list"));
  EXPECT_TRUE(has(e, "metadata.labels", "expected a mapping, got a list"));
  EXPECT_TRUE(has(e, "spec.minAvailable", "expected an integer, got a string"));
  EXPECT_TRUE(has(e, "spec.maxRetry", "expected an integer"));
  EXPECT_TRUE(has(e, "spec.ttlSecondsAfterFinished", "out of range"));
  EXPECT_TRUE(has(e, "spec.plugins.env", "expected a list"));
  EXPECT_TRUE(has(e, "spec.policies", "expected a list, got a mapping"));
  EXPECT_TRUE(has(e, "spec.tasks[0].replicas", "out of range"));
  EXPECT_TRUE(has(e, "spec.tasks[0].dependsOn.name", "expected a list"));
  const std::string c0 = "spec.tasks[0].template.spec.containers[0]";
  EXPECT_TRUE(has(e, c0 + ".command", "expected a list"));
  EXPECT_TRUE(has(e, c0 + ".env", "expected a list"));
  EXPECT_TRUE(has(e, c0 + ".resources.requests", "expected a mapping"));
  EXPECT_TRUE(has(e, "spec.tasks[1]", "expected a mapping"));
  EXPECT_EQ(e.size(), 13u) << dump(e);
}

TEST(JobYaml, DocumentMustBeAMappingWithAKind) {
  Diagnostics diags;
  parse_yaml("- a\n- b\n---\napiVersion: v1\nmetadata: {name: x}\n", diags);
  EXPECT_TRUE(has(diags.errors, "documents[0]", "expected a mapping"));
  EXPECT_TRUE(has(diags.errors, "documents[1].kind", "kind is required"));
}

TEST(JobYaml, DuplicateFieldIsAnError) {
  Diagnostics diags;
  auto parsed = parse_yaml(
      "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\n"
      "metadata:\n  name: a\n  name: b\n",
      diags);
  EXPECT_TRUE(has(diags.errors, "metadata.name", "duplicate"));
  ASSERT_EQ(parsed.jobs.size(), 1u);
  EXPECT_EQ(parsed.jobs[0].value.name, "a");
}

TEST(JobYaml, OtherKindsAreRejectedAndForeignApiVersionWarns) {
  Diagnostics diags;
  auto parsed = parse_yaml(R"(
apiVersion: v1
kind: Pod
metadata: {name: pod}
---
apiVersion: batch.volcano.sh/v1beta1
kind: Job
metadata: {name: vc-job}
---
apiVersion: batch/v1
kind: Job
metadata: {name: k8s-job}
spec: {completions: 3}
)",
                           diags);
  EXPECT_TRUE(has(diags.errors, "documents[0].kind", "supported kinds: Job"));
  EXPECT_TRUE(has(diags.errors, "documents[0].kind", "batch/v1 for a Kubernetes Job"));
  EXPECT_TRUE(has(diags.errors, "documents[0].kind", "JobTemplate and JobFlow"));
  EXPECT_TRUE(has(diags.warnings, "documents[1].apiVersion", "batch.volcano.sh/v1alpha1"));
  EXPECT_EQ(diags.errors.size(), 1u) << dump(diags.errors);
  ASSERT_EQ(parsed.jobs.size(), 1u);
  EXPECT_EQ(parsed.jobs[0].value.name, "vc-job");
  EXPECT_EQ(parsed.jobs[0].prefix, "documents[1].");
  EXPECT_EQ(parsed.jobs[0].document, 1u);
  // A Kubernetes Job is a kind of its own, with no warning about its apiVersion.
  ASSERT_EQ(parsed.batch_jobs.size(), 1u);
  EXPECT_EQ(parsed.batch_jobs[0].value.name, "k8s-job");
  EXPECT_EQ(parsed.batch_jobs[0].value.namespace_, "default");
  EXPECT_EQ(parsed.batch_jobs[0].value.completions, 3);
  EXPECT_EQ(parsed.batch_jobs[0].prefix, "documents[2].");
  EXPECT_FALSE(has(diags.warnings, "documents[2].apiVersion", ""));
}

TEST(JobYaml, UnknownAndKubernetesOnlyFieldsAreWarnings) {
  Diagnostics diags;
  auto parsed = parse_yaml(R"(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: j, uid: abc}
spec:
  volumes: []
  colour: red
  tasks:
    - name: t
      topologyPolicy: none
      flavour: vanilla
      template:
        spec:
          restartPolicy: OnFailure
          nodeSelector: {disk: ssd}
          tolerations: [{key: k}]
          schedulerName: volcano
          containers:
            - name: c
              command: [env]
              imagePullPolicy: Always
              sidecar: true
              env:
                - {name: A, value: "1"}
                - name: B
                  valueFrom: {configMapKeyRef: {name: m, key: k}}
status: {}
)",
                           diags);
  EXPECT_TRUE(diags.errors.empty()) << dump(diags.errors);
  const auto& w = diags.warnings;
  const std::string pod = "spec.tasks[0].template.spec";
  EXPECT_TRUE(has(w, "metadata.uid", "ignored"));
  EXPECT_TRUE(has(w, "spec.volumes", "ignored"));
  EXPECT_TRUE(has(w, "spec.colour", "unknown field, ignored"));
  EXPECT_TRUE(has(w, "spec.tasks[0].topologyPolicy", "ignored"));
  EXPECT_TRUE(has(w, "spec.tasks[0].flavour", "unknown field, ignored"));
  EXPECT_TRUE(has(w, pod + ".restartPolicy", "Never"));
  EXPECT_FALSE(has(w, pod + ".nodeSelector", "ignored"));  // read: the scheduler honours it
  EXPECT_TRUE(has(w, pod + ".schedulerName", "ignored"));
  EXPECT_TRUE(has(w, pod + ".containers[0].imagePullPolicy", "ignored"));
  EXPECT_TRUE(has(w, pod + ".containers[0].sidecar", "unknown field, ignored"));
  EXPECT_TRUE(has(w, pod + ".containers[0].env[1].valueFrom", "skipped"));
  EXPECT_TRUE(has(w, "status", "ignored"));
  EXPECT_EQ(w.size(), 11u) << dump(w);
  ASSERT_EQ(parsed.jobs.size(), 1u);
  const auto& c = parsed.jobs[0].value.tasks[0].template_.containers.at(0);
  EXPECT_EQ(c.env, (std::vector<EnvVar>{{"A", "1"}}));
  EXPECT_EQ(parsed.jobs[0].value.tasks[0].template_.restart_policy, "OnFailure");
}

TEST(JobYaml, GoDurations) {
  EXPECT_EQ(parse_go_duration_ms("300s"), 300000);
  EXPECT_EQ(parse_go_duration_ms("5m"), 300000);
  EXPECT_EQ(parse_go_duration_ms("1h30m"), 5400000);
  EXPECT_EQ(parse_go_duration_ms("500ms"), 500);
  EXPECT_EQ(parse_go_duration_ms("2s"), 2000);
  EXPECT_EQ(parse_go_duration_ms("1.5s"), 1500);
  EXPECT_EQ(parse_go_duration_ms("1m0.25s"), 60250);
  EXPECT_EQ(parse_go_duration_ms("0"), 0);
  EXPECT_EQ(parse_go_duration_ms("-2s"), -2000);
  EXPECT_EQ(parse_go_duration_ms("250us"), 1);  // positive stays positive
  EXPECT_EQ(parse_go_duration_ms("2000000ns"), 2);
  for (const char* bad :
       {"", "5", "5x", "abc", "1h30", "s", ".s", "1..5s", "--1s", "1 s", "9999999999h"})
    EXPECT_FALSE(parse_go_duration_ms(bad).has_value()) << bad;
}

TEST(JobYaml, PolicyWordsAndTimeouts) {
  Diagnostics diags;
  auto parsed = parse_yaml(R"(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: j}
spec:
  policies:
    - {event: PodFailed, events: [PodEvicted, "*"], action: RestartJob, timeout: 1h30m}
    - {event: PodExploded, action: RestartJob}
    - {exitCode: 3, action: Reboot}
    - {event: TaskFailed}
    - {event: PodPending, action: AbortJob, timeout: 10}
    - {event: Unknown, action: SyncJob, timeout: soon}
  tasks: [{name: t}]
)",
                           diags);
  ASSERT_EQ(parsed.jobs.size(), 1u);
  const auto& p = parsed.jobs[0].value.policies;
  ASSERT_EQ(p.size(), 6u);
  EXPECT_EQ(p[0].events, (std::vector<Event>{Event::PodFailed, Event::PodEvicted, Event::Any}));
  EXPECT_EQ(p[0].timeout_ms, 5400000);
  EXPECT_EQ(p[5].events, std::vector<Event>{Event::JobUnknown});
  const auto& e = diags.errors;
  EXPECT_TRUE(has(e, "spec.policies[1].event", "unknown event \"PodExploded\""));
  EXPECT_TRUE(has(e, "spec.policies[1].event", "PodFailed"));  // lists the valid words
  EXPECT_TRUE(has(e, "spec.policies[2].action", "unknown action \"Reboot\""));
  EXPECT_TRUE(has(e, "spec.policies[2].action", "RestartTask"));
  EXPECT_TRUE(has(e, "spec.policies[3].action", "action is required"));
  EXPECT_TRUE(has(e, "spec.policies[4].timeout", "invalid duration \"10\""));
  EXPECT_TRUE(has(e, "spec.policies[5].timeout", "invalid duration \"soon\""));
  EXPECT_EQ(e.size(), 5u) << dump(e);
}

TEST(JobYaml, QuantitiesAsNumbersOrStringsAndMalformedOnes) {
  Diagnostics diags;
  auto parsed = parse_yaml(R"(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: j}
spec:
  tasks:
    - template:
        spec:
          containers:
            - command: [x]
              resources:
                requests: {cpu: 2, memory: "512Mi", pods: 1, ephemeral-storage: 1.5}
                limits: {cpu: lots, memory: -1Gi}
)",
                           diags);
  ASSERT_EQ(parsed.jobs.size(), 1u);
  const auto& c = parsed.jobs[0].value.tasks.at(0).template_.containers.at(0);
  EXPECT_EQ(c.requests, (ResourceList{{{"cpu", 2000},
                                       {"memory", 536870912000LL},
                                       {"pods", 1000},
                                       {"ephemeral-storage", 1500}}}));
  const std::string limits = "spec.tasks[0].template.spec.containers[0].resources.limits";
  EXPECT_TRUE(has(diags.errors, limits + ".cpu", "invalid quantity \"lots\""));
  EXPECT_TRUE(has(diags.errors, limits + ".memory", "invalid quantity \"-1Gi\""));
  EXPECT_EQ(diags.errors.size(), 2u) << dump(diags.errors);
}

TEST(JobYaml, AliasExpansionIsBounded) {
  // 1000 tasks x 1000 containers x 1000 command words from a ~12 KB text.
  std::string words, containers, tasks;
  for (int i = 0; i < 1000; ++i) {
    words += i ? ", *w" : "*w";
    containers += i ? ", *c" : "*c";
    tasks += i ? ", *t" : "*t";
  }
  const std::string text =
      "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nx: &w word\n"
      "y: &c {command: [" +
      words +
      "]}\n"
      "z: &t {template: {spec: {containers: [" +
      containers +
      "]}}}\n"
      "spec: {tasks: [" +
      tasks + "]}\n";
  Diagnostics diags;
  auto start = std::chrono::steady_clock::now();
  parse_yaml(text, diags);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(has(diags.errors, "", "too many nodes"));
}

TEST(JobYaml, NulByteRejectsTheWholeTextWithItsOffset) {
  const std::string first =
      "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: a}\n";
  const std::string text = first + std::string(1, '\0') + "\n---\n" + first;
  Diagnostics diags;
  auto parsed = parse_yaml(text, diags);
  EXPECT_TRUE(parsed.empty());
  EXPECT_TRUE(has(diags.errors, "", "NUL byte at byte offset " + std::to_string(first.size())));
}

TEST(JobYaml, NestingDeeperThanTheLimitIsRefusedWithoutLoading) {
  const std::string head = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nx: ";
  for (const auto& [open, close] : {std::pair{"[", "]"}, std::pair{"{a: ", "}"}}) {
    std::string deep = head;
    for (int i = 0; i < 10000; ++i) deep += open;
    for (int i = 0; i < 10000; ++i) deep += close;
    Diagnostics diags;
    EXPECT_TRUE(parse_yaml(deep + "\n", diags).empty());
    EXPECT_TRUE(has(diags.errors, "line 3", "deeper than the limit of 100 levels"));
  }
  std::string block = head + "\n";
  for (int i = 1; i <= 150; ++i) block += std::string(i, ' ') + "a:\n";
  Diagnostics diags;
  parse_yaml(block, diags);
  // The document's own mapping is level 1, x's value level 2: level 101 is a: number 100.
  EXPECT_TRUE(has(diags.errors, "line 103", "deeper than the limit of 100 levels"));

  // Compact nesting too: a list in a mapping at the same indentation, a mapping in a list item.
  std::string compact = head + "\n a:\n";
  for (int i = 0; i < 60; ++i) compact += " " + std::string(2 * i, ' ') + "- b:\n";
  Diagnostics compact_diags;
  parse_yaml(compact, compact_diags);
  // x's value is level 2, and each "- b:" (from line 5) a list and a mapping: 101 is on line 54.
  EXPECT_TRUE(has(compact_diags.errors, "line 54", "deeper than the limit of 100 levels"))
      << dump(compact_diags.errors);

  // The limit itself is fine.
  std::string at_limit = head;
  for (int i = 0; i < kMaxYamlDepth - 1; ++i) at_limit += "[";
  for (int i = 0; i < kMaxYamlDepth - 1; ++i) at_limit += "]";
  Diagnostics fine;
  parse_yaml(at_limit + "\nmetadata: {name: a}\n", fine);
  EXPECT_FALSE(has(fine.errors, "line 3", "deeper"));
}

TEST(JobYaml, DefaultNamespaceFillsDocumentsThatNameNone) {
  const std::string text = R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: a}
---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: t, namespace: team-a}
---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: f}
spec: {flows: [{name: t}]}
)";
  Diagnostics diags;
  auto parsed = parse_yaml(text, diags, "team-a");
  ASSERT_TRUE(diags.ok()) << dump(diags.errors);
  EXPECT_EQ(parsed.jobs.at(0).value.namespace_, "team-a");
  EXPECT_EQ(parsed.templates.at(0).value.namespace_, "team-a");
  EXPECT_EQ(parsed.flows.at(0).value.namespace_, "team-a");

  Diagnostics none;
  auto plain = parse_yaml(text, none);
  EXPECT_EQ(plain.jobs.at(0).value.namespace_, "default");
  EXPECT_EQ(plain.templates.at(0).value.namespace_, "team-a");
}

TEST(JobYaml, DefaultNamespaceRefusesADocumentNamingAnother) {
  Diagnostics diags;
  parse_yaml(R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: a, namespace: b}
---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: f, namespace: c}
)",
             diags, "a");
  EXPECT_TRUE(has(diags.errors, "documents[0].metadata.namespace",
                  "the namespace from the provided object \"b\" does not match the namespace "
                  "\"a\". You must pass '--namespace=b' to perform this operation."));
  EXPECT_TRUE(has(diags.errors, "documents[1].metadata.namespace", "'--namespace=c'"));
}

}  // namespace
}  // namespace caldera
