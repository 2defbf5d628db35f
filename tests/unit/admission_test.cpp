#include <gtest/gtest.h>

#include <set>
#include <string>

#include "messages/admission/admission.hpp"
#include "messages/yaml/job_yaml.hpp"
#include "tests/unit/diagnostic_matchers.hpp"

namespace caldera {
namespace {

const AdmissionContext kNode8{ResourceList{{{"cpu", 8000}, {"memory", 16LL << 40}}}};

// The job's header, then `body` (spec fields, indented two spaces) appended under `spec:`.
std::string job(const std::string& body, const std::string& name = "job") {
  return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: " + name +
         "}\nspec:\n" + body;
}

// One task named t with `replicas` and one runnable container; `extra` is more task fields.
std::string task(const std::string& name, int replicas, const std::string& extra = "") {
  return "    - name: " + name + "\n      replicas: " + std::to_string(replicas) + "\n" + extra +
         "      template: {spec: {containers: [{name: c, command: [\"true\"]}]}}\n";
}

// Parses (which must succeed), defaults and admits.
Diagnostics admit_yaml(const std::string& text, const AdmissionContext& ctx = kNode8) {
  Diagnostics parse;
  auto parsed = parse_yaml(text, parse);
  EXPECT_TRUE(parse.ok()) << dump(parse.errors);
  EXPECT_EQ(parsed.jobs.size(), 1u);
  Diagnostics diags;
  if (parsed.jobs.size() != 1) return diags;
  apply_defaults(parsed.jobs[0].value);
  admit(parsed.jobs[0].value, ctx, diags);
  return diags;
}

TEST(Admission, GoodJobIsAdmittedCleanly) {
  auto d = admit_yaml(job(R"(  minAvailable: 3
  minSuccess: 1
  policies: [{event: PodEvicted, action: RestartJob}, {exitCode: 1, action: AbortJob}]
  plugins: {env: [], svc: []}
  tasks:
    - name: ps
      replicas: 1
      template: {spec: {containers: [{name: ps, command: [sleep, "1"], resources: {requests: {cpu: 1}}}]}}
    - name: worker
      replicas: 4
      policies: [{event: PodRunning, action: SyncJob}, {event: PodPending, action: AbortJob, timeout: 1m}]
      dependsOn: {name: [ps]}
      partitionPolicy: {partitionSize: 2, minPartitions: 1}
      template:
        metadata: {annotations: {caldera.io/sim-duration-ms: "50", caldera.io/sim-exit-code: "0"}}
        spec: {containers: [{command: [sleep, "1"], resources: {requests: {cpu: 8, memory: 1Gi}}}]}
)"));
  EXPECT_TRUE(d.errors.empty()) << dump(d.errors);
  EXPECT_TRUE(d.warnings.empty()) << dump(d.warnings);
}

TEST(Admission, DefaultsFillWhatVolcanosWebhookFills) {
  JobSpec spec;
  spec.name = "j";
  spec.namespace_ = "";
  spec.queue = "";
  TaskSpec one;
  one.template_.containers.push_back(Container{});
  one.template_.containers[0].limits.values = {{"cpu", 2000}, {"memory", 1000}};
  one.template_.containers[0].requests.values = {{"cpu", 500}};
  TaskSpec two;
  two.name = "named";
  two.template_.restart_policy = "OnFailure";
  two.template_.containers.resize(3);
  two.template_.containers[0].name = "c1";
  spec.tasks = {one, two};
  apply_defaults(spec);
  EXPECT_EQ(spec.namespace_, "default");
  EXPECT_EQ(spec.queue, "default");
  EXPECT_FALSE(spec.max_retry.has_value());
  EXPECT_EQ(spec.effective_max_retry(), 3);
  EXPECT_EQ(spec.tasks[0].name, "default0");
  EXPECT_EQ(spec.tasks[1].name, "named");
  EXPECT_EQ(spec.tasks[0].template_.restart_policy, "Never");
  EXPECT_EQ(spec.tasks[1].template_.restart_policy, "OnFailure");
  EXPECT_EQ(spec.tasks[0].template_.containers[0].name, "main");
  const auto& cs = spec.tasks[1].template_.containers;
  EXPECT_EQ(cs[0].name, "c1");
  EXPECT_NE(cs[1].name, "c1");  // never collides with a name the user chose
  EXPECT_EQ(cs[2].name, "c2");
  // Kubernetes defaulting: a limit without a request becomes the request; a request stays.
  EXPECT_EQ(spec.tasks[0].template_.containers[0].requests,
            (ResourceList{{{"cpu", 500}, {"memory", 1000}}}));
}

TEST(Admission, JobNameAndNamespaceMustBeDns1123Labels) {
  auto d = admit_yaml(
      "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\n"
      "metadata: {name: My_Job, namespace: -team}\nspec:\n  tasks:\n" +
      task("t", 1));
  EXPECT_TRUE(has(d.errors, "metadata.name", "not a DNS-1123 label"));
  EXPECT_TRUE(has(d.errors, "metadata.namespace", "start and end with a letter or digit"));
  auto missing = admit_yaml("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nspec:\n  tasks:\n" +
                            task("t", 1));
  EXPECT_TRUE(has(missing.errors, "metadata.name", "required"));
  auto long_name = admit_yaml(job("  tasks:\n" + task("t", 1), std::string(64, 'a')));
  EXPECT_TRUE(has(long_name.errors, "metadata.name", "at most 63 characters"));
}

TEST(Admission, TaskNamesMustBeLabelsAndPodNamesShortEnough) {
  auto d = admit_yaml(job("  tasks:\n" + task("Worker", 1) + task(std::string(200, 'w'), 10),
                          std::string(63, 'j')));
  EXPECT_TRUE(has(d.errors, "spec.tasks[0].name", "not a DNS-1123 label"));
  EXPECT_TRUE(has(d.errors, "spec.tasks[1].name", "at most 63 characters"));
  // 63 + 1 + 200 + 1 + 1 ("9", the largest index) = 266 characters.
  EXPECT_TRUE(has(d.errors, "spec.tasks[1].name", "would be 266 characters; at most 253"));
}

TEST(Admission, AGracePeriodIsWithinZeroToAnHour) {
  auto grace = [](const std::string& seconds) {
    return job(
        "  tasks:\n    - name: t\n      replicas: 1\n      template: {spec: "
        "{terminationGracePeriodSeconds: " +
        seconds + ", containers: [{name: c, command: [\"true\"]}]}}\n");
  };
  const std::string path = "spec.tasks[0].template.spec.terminationGracePeriodSeconds";
  EXPECT_TRUE(admit_yaml(grace("0")).ok());
  EXPECT_TRUE(admit_yaml(grace("3600")).ok());
  EXPECT_TRUE(has(admit_yaml(grace("3601")).errors, path, "must be within 0..3600"));
  EXPECT_TRUE(has(admit_yaml(grace("-1")).errors, path, "must be within 0..3600"));
}

TEST(Admission, NeedsTasksWithUniqueNamesAndReplicas) {
  EXPECT_TRUE(has(admit_yaml(job("  tasks: []\n")).errors, "spec.tasks", "at least one task"));
  EXPECT_TRUE(
      has(admit_yaml(job("  minAvailable: 0\n  tasks:\n" + task("a", 0) + task("b", 0))).errors,
          "spec.tasks", "job has no replicas"));
  auto dup = admit_yaml(job("  tasks:\n" + task("a", 1) + task("b", 1) + task("a", 1)));
  EXPECT_TRUE(has(dup.errors, "spec.tasks[2].name", "used twice"));
  EXPECT_EQ(dup.errors.size(), 1u) << dump(dup.errors);
  auto negative = admit_yaml(job("  tasks:\n" + task("a", 2) + task("b", -1)));
  EXPECT_TRUE(has(negative.errors, "spec.tasks[1].replicas", "replicas must be >= 0"));
  auto huge = admit_yaml(job("  tasks:\n" + task("a", 2000000000) + task("b", 2000000000)));
  EXPECT_TRUE(has(huge.errors, "spec.tasks", "at most 10000"));
}

TEST(Admission, AJobMayHaveTheReplicaLimitAndNotOneMore) {
  EXPECT_TRUE(admit_yaml(job("  tasks:\n" + task("a", kMaxJobReplicas - 1) + task("b", 1))).ok());
  auto over = admit_yaml(job("  tasks:\n" + task("a", kMaxJobReplicas) + task("b", 1)));
  EXPECT_TRUE(has(over.errors, "spec.tasks", "job has 10001 replicas; at most 10000"));
}

TEST(Admission, MinAvailableMinSuccessAndMaxRetryRanges) {
  const std::string tasks = "  tasks:\n" +
                            task("a", 2, "      minAvailable: 3\n      maxRetry: -1\n") +
                            task("b", 2, "      minAvailable: -1\n");
  auto over = admit_yaml(job("  minAvailable: 5\n  minSuccess: 5\n  maxRetry: -2\n" + tasks));
  EXPECT_TRUE(has(over.errors, "spec.minAvailable", "within 0..total replicas (4)"));
  EXPECT_TRUE(has(over.errors, "spec.minSuccess", "within 1..total replicas (4)"));
  EXPECT_TRUE(has(over.errors, "spec.maxRetry", "maxRetry must be >= 0"));
  EXPECT_TRUE(has(over.errors, "spec.tasks[0].minAvailable", "within 0..replicas (2)"));
  EXPECT_TRUE(has(over.errors, "spec.tasks[1].minAvailable", "within 0..replicas (2)"));
  EXPECT_TRUE(has(over.errors, "spec.tasks[0].maxRetry", "maxRetry must be >= 0"));
  EXPECT_EQ(over.errors.size(), 6u) << dump(over.errors);
  auto under = admit_yaml(job("  minAvailable: -1\n  minSuccess: 0\n  tasks:\n" + task("a", 1)));
  EXPECT_TRUE(has(under.errors, "spec.minAvailable", "within 0.."));
  EXPECT_TRUE(has(under.errors, "spec.minSuccess", "within 1.."));
}

TEST(Admission, PolicyDuplicatesAreReportedAtTheSecondOccurrence) {
  auto d = admit_yaml(job(R"(  policies:
    - {event: PodFailed, action: RestartJob}
    - {events: [PodEvicted, PodFailed], action: AbortJob}
    - {exitCode: 2, action: AbortJob}
    - {exitCode: 2, action: RestartJob}
  tasks:
)" + task("t", 1)));
  EXPECT_TRUE(has(d.errors, "spec.policies[1].events", "event PodFailed already has a policy"));
  EXPECT_TRUE(has(d.errors, "spec.policies[3].exitCode", "exitCode 2 already has a policy"));
  EXPECT_EQ(d.errors.size(), 2u) << dump(d.errors);
}

TEST(Admission, PolicyShapeRules) {
  auto d = admit_yaml(job(R"(  policies:
    - {event: PodFailed, exitCode: 3, action: AbortJob}
    - {action: AbortJob}
    - {exitCode: 0, action: AbortJob}
    - {event: PodPending, action: AbortJob}
    - {event: TaskFailed, action: ResumeJob}
    - {event: PodEvicted, action: RestartJob, timeout: 0s}
    - {event: OutOfSync, action: SyncJob}
    - {event: CommandIssued, action: SyncJob}
    - {event: PodRunning, action: SyncJob}
    - {exitCode: 300, action: AbortJob}
  tasks:
)" + task("t", 1)));
  EXPECT_TRUE(has(d.errors, "spec.policies[0]", "not both"));
  EXPECT_TRUE(has(d.errors, "spec.policies[1]", "needs an event, events or an exitCode"));
  EXPECT_TRUE(has(d.errors, "spec.policies[2].exitCode", "exitCode 0 means success"));
  EXPECT_TRUE(has(d.errors, "spec.policies[3].timeout", "PodPending policies need a timeout"));
  EXPECT_TRUE(has(d.errors, "spec.policies[4].action", "only a command resumes"));
  EXPECT_TRUE(has(d.errors, "spec.policies[5].timeout", "timeout must be > 0"));
  EXPECT_TRUE(has(d.errors, "spec.policies[6].events", "OutOfSync is internal"));
  EXPECT_TRUE(has(d.errors, "spec.policies[7].events", "CommandIssued is internal"));
  EXPECT_TRUE(has(d.errors, "spec.policies[9].exitCode", "outside 1..255"));
  EXPECT_EQ(d.errors.size(), 9u) << dump(d.errors);  // PodRunning (policies[8]) is allowed
}

TEST(Admission, AnyEventPolicyMustStandAlone) {
  auto d = admit_yaml(job(R"(  tasks:
    - name: t
      policies: [{event: "*", action: RestartJob}, {event: PodFailed, action: AbortJob}]
      template: {spec: {containers: [{command: ["true"]}]}}
)"));
  EXPECT_TRUE(has(d.errors, "spec.tasks[0].policies", "\"*\" must be the only event policy"));
  EXPECT_EQ(d.errors.size(), 1u) << dump(d.errors);
}

TEST(Admission, TaskPoliciesAreCheckedInTheirOwnList) {
  auto d = admit_yaml(job(R"(  policies: [{event: PodFailed, action: RestartJob}]
  tasks:
    - name: t
      policies:
        - {event: PodFailed, action: RestartTask}
        - {event: PodFailed, action: AbortJob}
      template: {spec: {containers: [{command: ["true"]}]}}
)"));
  EXPECT_TRUE(has(d.errors, "spec.tasks[0].policies[1].events", "already has a policy"));
  EXPECT_EQ(d.errors.size(), 1u) << dump(d.errors);
}

TEST(Admission, DependsOnNamesMustExist) {
  auto d = admit_yaml(job("  tasks:\n" + task("a", 1, "      dependsOn: {name: [a, ghost]}\n") +
                          task("b", 1, "      dependsOn: {name: [a], iteration: some}\n")));
  EXPECT_TRUE(has(d.errors, "spec.tasks[0].dependsOn.name[0]", "cannot depend on itself"));
  EXPECT_TRUE(has(d.errors, "spec.tasks[0].dependsOn.name[1]", "no task named \"ghost\""));
  EXPECT_TRUE(has(d.errors, "spec.tasks[1].dependsOn.iteration", "\"any\" or \"all\""));
  EXPECT_EQ(d.errors.size(), 3u) << dump(d.errors);
}

TEST(Admission, DependencyCyclesAreReportedOnce) {
  auto d = admit_yaml(job("  tasks:\n" + task("a", 1, "      dependsOn: {name: [b]}\n") +
                          task("b", 1, "      dependsOn: {name: [c]}\n") +
                          task("c", 1, "      dependsOn: {name: [a]}\n") +
                          task("d", 1, "      dependsOn: {name: [e]}\n") +
                          task("e", 1, "      dependsOn: {name: [d, a]}\n")));
  EXPECT_TRUE(has(d.errors, "spec.tasks[0].dependsOn", "a -> b -> c -> a"));
  EXPECT_TRUE(has(d.errors, "spec.tasks[3].dependsOn", "d -> e -> d"));
  EXPECT_EQ(d.errors.size(), 2u) << dump(d.errors);
  auto chain =
      admit_yaml(job("  tasks:\n" + task("a", 1) + task("b", 1, "      dependsOn: {name: [a]}\n") +
                     task("c", 1, "      dependsOn: {name: [a, b]}\n")));
  EXPECT_TRUE(chain.errors.empty()) << dump(chain.errors);
}

TEST(Admission, PartitionPolicyRules) {
  auto d = admit_yaml(
      job("  tasks:\n" + task("a", 4, "      partitionPolicy: {partitionSize: 0}\n") +
          task("b", 5, "      partitionPolicy: {partitionSize: 2}\n") +
          task("c", 4, "      partitionPolicy: {partitionSize: 2, minPartitions: -1}\n") +
          task("d", 4, "      partitionPolicy: {partitionSize: 2, minPartitions: 3}\n")));
  EXPECT_TRUE(has(d.errors, "spec.tasks[0].partitionPolicy.partitionSize", "must be >= 1"));
  EXPECT_TRUE(has(d.errors, "spec.tasks[1].partitionPolicy.partitionSize",
                  "replicas (5) must be a multiple of partitionSize (2)"));
  EXPECT_TRUE(has(d.errors, "spec.tasks[2].partitionPolicy.minPartitions", "must be >= 0"));
  EXPECT_TRUE(has(d.errors, "spec.tasks[3].partitionPolicy.minPartitions",
                  "minPartitions * partitionSize (6) exceeds replicas (4)"));
  EXPECT_EQ(d.errors.size(), 4u) << dump(d.errors);
}

TEST(Admission, EnvNamesWithEqualsAndNulBytesCannotReachAProcess) {
  auto d = admit_yaml(job(R"(  tasks:
    - name: t
      template:
        spec:
          containers:
            - {name: a, command: [sh], env: [{name: "A=B", value: x}]}
            - {name: b, command: ["sh\0x"]}
)"));
  const std::string c = "spec.tasks[0].template.spec.containers";
  EXPECT_TRUE(has(d.errors, c + "[0].env[0].name", "may not contain '='")) << dump(d.errors);
  EXPECT_TRUE(has(d.errors, c + "[1]", "a NUL byte")) << dump(d.errors);
  EXPECT_EQ(d.errors.size(), 2u) << dump(d.errors);
}

TEST(Admission, ContainerRules) {
  auto d = admit_yaml(job(R"(  tasks:
    - name: empty
      template: {spec: {containers: []}}
    - name: t
      template:
        spec:
          containers:
            - {name: app, image: busybox, command: [sh], env: [{value: x}]}
            - {name: app, command: [sh]}
            - {name: Side_Car, image: busybox}
)"));
  const std::string c = "spec.tasks[1].template.spec.containers";
  EXPECT_TRUE(has(d.errors, "spec.tasks[0].template.spec.containers", "at least one container"));
  EXPECT_TRUE(has(d.errors, c + "[0].env[0].name", "env name is required"));
  EXPECT_TRUE(has(d.errors, c + "[1].name", "used twice"));
  EXPECT_TRUE(has(d.errors, c + "[2].name", "not a DNS-1123 label"));
  EXPECT_TRUE(has(d.errors, c + "[2].command",
                  "caldera runs processes: set command (image alone is not runnable)"));
  EXPECT_EQ(d.errors.size(), 5u) << dump(d.errors);
  EXPECT_TRUE(has(d.warnings, c + "[0].image", "image is ignored"));
  EXPECT_TRUE(has(d.warnings, c + "[2].image", "image is ignored"));
  EXPECT_EQ(d.warnings.size(), 2u) << dump(d.warnings);
}

TEST(Admission, PodMustFitTheLargestNode) {
  const std::string text = job(R"(  tasks:
    - name: big
      template:
        spec:
          containers:
            - {command: [a], resources: {requests: {cpu: 6, memory: 1Gi}}}
            - {command: [b], resources: {requests: {cpu: 3, nvidia.com/gpu: 1, pods: 0}}}
    - name: small
      template: {spec: {containers: [{command: [a], resources: {requests: {cpu: 8}}}]}}
)");
  auto d = admit_yaml(text);
  const std::string path = "spec.tasks[0].template.spec.containers";
  EXPECT_TRUE(has(d.errors, path, "requests cpu 9 but the largest node has 8"));
  EXPECT_TRUE(has(d.errors, path, "requests nvidia.com/gpu 1 but no node has nvidia.com/gpu"));
  EXPECT_TRUE(has(d.errors, path, "once its entry in the cluster config lists it under resources"));
  EXPECT_EQ(d.errors.size(), 2u) << dump(d.errors);
  // Without knowledge of the nodes there is nothing to compare with.
  EXPECT_TRUE(admit_yaml(text, AdmissionContext{}).errors.empty());
}

TEST(Admission, RequestsAreSummedAndMustNotExceedLimits) {
  TaskSpec t;
  t.template_.containers.resize(2);
  t.template_.containers[0].requests.values = {{"cpu", 500}, {"memory", 10}};
  t.template_.containers[1].requests.values = {{"cpu", 250}, {"example.com/fpga", 1000}};
  EXPECT_EQ(pod_requests(t),
            (ResourceList{{{"cpu", 750}, {"memory", 10}, {"example.com/fpga", 1000}}}));

  auto d = admit_yaml(job(R"(  tasks:
    - template: {spec: {containers: [{command: [a], resources: {requests: {cpu: 2}, limits: {cpu: 1}}}]}}
)"));
  EXPECT_TRUE(has(d.errors, "spec.tasks[0].template.spec.containers[0].resources.requests.cpu",
                  "request 2 exceeds the limit 1"));
}

TEST(Admission, UnknownPluginsAreErrors) {
  auto d =
      admit_yaml(job("  plugins: {env: [], magic: [--on], mpi: []}\n  tasks:\n" + task("t", 1)));
  EXPECT_TRUE(has(d.errors, "spec.plugins.magic", "unknown plugin \"magic\""));
  EXPECT_EQ(d.errors.size(), 1u) << dump(d.errors);
}

TEST(Admission, TheSshPluginIsAcceptedWithVolcanosArguments) {
  auto d =
      admit_yaml(job("  plugins: {ssh: [\"--ssh-key-file-path=/home/ann/.ssh\", "
                     "\"--ssh-port=2222\"], svc: []}\n  tasks:\n" +
                     task("t", 1)));
  EXPECT_TRUE(d.errors.empty()) << dump(d.errors);
  EXPECT_TRUE(d.warnings.empty()) << dump(d.warnings);
}

TEST(Admission, TheSshPluginsBadArgumentsAreRefusedAtThePlugin) {
  for (const char* arg :
       {"--ssh-key-file-path=.ssh", "--ssh-key-file-path=/ssh", "--ssh-key-file-path=/a/../b",
        "--ssh-key-file-path=//x", "--ssh-key-file-path=/./x", "--ssh-key-file-path=/etc/volcano",
        "--ssh-key-file-path=/a/b,c", "--ssh-port=0", "--ssh-port=ssh",
        "--ssh-private-key=-----BEGIN RSA PRIVATE KEY-----", "--ssh-user=ann"}) {
    auto d = admit_yaml(
        job(std::string("  plugins: {ssh: [\"") + arg + "\"]}\n  tasks:\n" + task("t", 1)));
    EXPECT_EQ(d.errors.size(), 1u) << arg << dump(d.errors);
    EXPECT_TRUE(has(d.errors, "spec.plugins.ssh", "")) << arg << dump(d.errors);
  }
  auto d =
      admit_yaml(job("  plugins: {ssh: [\"--ssh-private-key=key\", "
                     "\"--ssh-public-key=ssh-rsa AAAA\"]}\n  tasks:\n" +
                     task("t", 1)));
  EXPECT_TRUE(has(d.errors, "spec.plugins.ssh", "not a PEM private key")) << dump(d.errors);
}

TEST(Admission, MinPartitionsMakeTheTasksMinimumAndAnotherMinimumIsRefused) {
  Diagnostics parse;
  auto parsed =
      parse_yaml(job("  tasks:\n" +
                     task("w", 6, "      partitionPolicy: {partitionSize: 2, minPartitions: 2}\n")),
                 parse);
  apply_defaults(parsed.jobs.at(0).value);
  EXPECT_EQ(parsed.jobs[0].value.tasks[0].min_available, 4) << "Volcano's webhook: 2 x 2";
  auto d = admit_yaml(job("  tasks:\n" + task("w", 6,
                                              "      minAvailable: 3\n"
                                              "      partitionPolicy: {partitionSize: 2, "
                                              "minPartitions: 2}\n")));
  EXPECT_TRUE(
      has(d.errors, "spec.tasks[0].minAvailable", "must be minPartitions * partitionSize (4)"));
}

TEST(Admission, AJobWithoutMinAvailableNeedsWhatItsTasksMinimumsAddUpTo) {
  auto defaulted = [](const std::string& tasks) {
    Diagnostics parse;
    auto parsed = parse_yaml(job("  tasks:\n" + tasks), parse);
    apply_job_defaults(parsed.jobs.at(0).value);
    return parsed.jobs[0].value.min_available;
  };
  // Volcano's webhook: ps's replicas (1) and worker's minAvailable (2).
  EXPECT_EQ(defaulted(task("ps", 1) + task("worker", 4, "      minAvailable: 2\n")), 3);
  // No task names one: every replica, left unset so that it follows the job as it scales.
  EXPECT_EQ(defaulted(task("ps", 1) + task("worker", 4)), std::nullopt);
  // Partitions alone: their minimum is the task's, not the job's (as Volcano computes it).
  EXPECT_EQ(
      defaulted(task("w", 6, "      partitionPolicy: {partitionSize: 2, minPartitions: 1}\n")),
      std::nullopt);
  // A JobTemplate keeps none: its job is defaulted when a flow makes it, from the patched tasks.
  Diagnostics parse;
  auto tmpl = parse_yaml(job("  tasks:\n" + task("w", 4, "      minAvailable: 2\n")), parse);
  apply_defaults(tmpl.jobs.at(0).value);
  EXPECT_EQ(tmpl.jobs[0].value.min_available, std::nullopt);
}

TEST(Admission, ATasksPriorityClassIsReadWithoutAWarning) {
  Diagnostics parse;
  auto parsed = parse_yaml(job("  tasks:\n    - name: t\n      replicas: 1\n      template: "
                               "{spec: {priorityClassName: high, containers: [{name: c, command: "
                               "[\"true\"]}]}}\n"),
                           parse);
  EXPECT_TRUE(parse.warnings.empty()) << dump(parse.warnings);
  EXPECT_EQ(parsed.jobs.at(0).value.tasks.at(0).template_.priority_class_name, "high");
}

TEST(Admission, MpiBringsSvcAndSshAndTheFrameworksBringSvcAsVolcanosWebhookDoes) {
  auto plugins_of = [](const std::string& plugins) {
    Diagnostics parse;
    auto parsed = parse_yaml(job("  plugins: " + plugins + "\n  tasks:\n" + task("t", 1)), parse);
    apply_defaults(parsed.jobs.at(0).value);
    std::set<std::string> names;
    for (const auto& p : parsed.jobs[0].value.plugins) names.insert(p.name);
    return names;
  };
  using names = std::set<std::string>;
  EXPECT_EQ(plugins_of("{mpi: []}"), (names{"mpi", "svc", "ssh"}));
  EXPECT_EQ(plugins_of("{pytorch: []}"), (names{"pytorch", "svc"}));
  EXPECT_EQ(plugins_of("{tensorflow: []}"), (names{"tensorflow", "svc"}));
  EXPECT_EQ(plugins_of("{ray: []}"), (names{"ray", "svc"}));
  EXPECT_EQ(plugins_of("{env: []}"), (names{"env"}));
  EXPECT_EQ(plugins_of("{mpi: [], ssh: [\"--ssh-port=2222\"]}"), (names{"mpi", "ssh", "svc"}));
  // The ssh config names the port mpirun's ssh uses: mpi's --port.
  Diagnostics parse;
  auto parsed =
      parse_yaml(job("  plugins: {mpi: [\"--port=2222\"]}\n  tasks:\n" + task("t", 1)), parse);
  apply_defaults(parsed.jobs.at(0).value);
  EXPECT_EQ(parsed.jobs[0].value.plugins.back(), (Plugin{"ssh", {"--ssh-port=2222"}}));
}

TEST(Admission, SimulationAnnotationsMustBeWellFormed) {
  auto template_with = [](const std::string& annotations) {
    return "      template:\n        metadata: {annotations: {" + annotations +
           "}}\n        spec: {containers: [{command: [x]}]}\n";
  };
  auto d = admit_yaml(job("  tasks:\n    - name: a\n" +
                          template_with("caldera.io/sim-duration-ms: soon, "
                                        "caldera.io/sim-exit-code: \"300\"") +
                          "    - name: b\n" +
                          template_with("caldera.io/sim-duration-ms: \"-5\", "
                                        "caldera.io/sim-exit-code: one")));
  const std::string a = "spec.tasks[0].template.metadata.annotations.caldera.io/";
  const std::string b = "spec.tasks[1].template.metadata.annotations.caldera.io/";
  EXPECT_TRUE(has(d.errors, a + "sim-duration-ms", "milliseconds in 0..2592000000"));
  EXPECT_TRUE(has(d.errors, a + "sim-exit-code", "0..255"));
  EXPECT_TRUE(has(d.errors, b + "sim-duration-ms", "milliseconds in 0..2592000000"));
  EXPECT_TRUE(has(d.errors, b + "sim-exit-code", "0..255"));
  EXPECT_EQ(d.errors.size(), 4u) << dump(d.errors);
  // A timer beyond 30 days is refused: it could overflow the clock it is added to.
  auto far = admit_yaml(job("  tasks:\n    - name: a\n" +
                            template_with("caldera.io/sim-duration-ms: \"9223372036854775807\"")));
  EXPECT_TRUE(has(far.errors, a + "sim-duration-ms", "30 days"));
}

TEST(Admission, TtlAndActiveDeadline) {
  auto d = admit_yaml(
      job("  ttlSecondsAfterFinished: -1\n  activeDeadlineSeconds: 0\n  tasks:\n" + task("t", 1)));
  EXPECT_TRUE(has(d.errors, "spec.ttlSecondsAfterFinished", ">= 0"));
  EXPECT_TRUE(has(d.errors, "spec.activeDeadlineSeconds", ">= 1"));
  EXPECT_EQ(d.errors.size(), 2u) << dump(d.errors);
  auto zero = admit_yaml(
      job("  ttlSecondsAfterFinished: 0\n  activeDeadlineSeconds: 1\n  tasks:\n" + task("t", 1)));
  EXPECT_TRUE(zero.errors.empty()) << dump(zero.errors);
}

TEST(Admission, EveryViolationIsReported) {
  auto d = admit_yaml(job(R"(  minAvailable: 10
  plugins: {telepathy: []}
  policies: [{exitCode: 0, action: AbortJob}]
  tasks:
    - name: Bad_Name
      replicas: 2
      minAvailable: 3
      dependsOn: {name: [nobody]}
      template: {spec: {containers: [{name: main, resources: {requests: {cpu: 64}}}]}}
    - name: Bad_Name
      replicas: 1
      template: {spec: {containers: [{command: [x]}]}}
)",
                          "UPPER"));
  const auto& e = d.errors;
  EXPECT_TRUE(has(e, "metadata.name", "DNS-1123"));
  EXPECT_TRUE(has(e, "spec.minAvailable", "total replicas (3)"));
  EXPECT_TRUE(has(e, "spec.plugins.telepathy", "unknown plugin"));
  EXPECT_TRUE(has(e, "spec.policies[0].exitCode", "exitCode 0"));
  EXPECT_TRUE(has(e, "spec.tasks[0].name", "DNS-1123"));
  EXPECT_TRUE(has(e, "spec.tasks[0].minAvailable", "replicas (2)"));
  EXPECT_TRUE(has(e, "spec.tasks[0].dependsOn.name[0]", "nobody"));
  EXPECT_TRUE(has(e, "spec.tasks[0].template.spec.containers[0].command", "set command"));
  EXPECT_TRUE(has(e, "spec.tasks[0].template.spec.containers", "cpu 64"));
  EXPECT_TRUE(has(e, "spec.tasks[1].name", "used twice"));
  EXPECT_TRUE(has(e, "spec.tasks[1].name", "DNS-1123"));
  EXPECT_EQ(e.size(), 11u) << dump(e);
}

}  // namespace
}  // namespace caldera

namespace caldera {
namespace {

std::string ray_job(const std::string& plugin_args, const std::string& head_task = "head") {
  return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: r}\nspec:\n"
         "  plugins: {ray: [" +
         plugin_args + "]}\n  tasks:\n    - name: " + head_task +
         "\n      replicas: 1\n      template: {spec: {containers: [{name: head, image: ray}]}}\n"
         "    - name: worker\n      replicas: 2\n      template: {spec: {containers: [{name: "
         "worker, image: ray}]}}\n";
}

Diagnostics admit_text(const std::string& text) {
  Diagnostics parse;
  auto parsed = parse_yaml(text, parse);
  EXPECT_TRUE(parse.ok()) << dump(parse.errors);
  Diagnostics diags;
  if (parsed.jobs.size() != 1) return diags;
  apply_defaults(parsed.jobs[0].value);
  admit(parsed.jobs[0].value, AdmissionContext{}, diags);
  return diags;
}

TEST(Admission, RaysHeadAndWorkerContainersNeedNoCommandTheRestDo) {
  auto ok = admit_text(ray_job(""));
  EXPECT_TRUE(ok.ok()) << dump(ok.errors);
  auto no_head = admit_text(ray_job("", "boss"));
  EXPECT_TRUE(has(no_head.errors, "spec.plugins.ray", "no task \"head\""));
  EXPECT_TRUE(
      has(no_head.errors, "spec.tasks[0].template.spec.containers[0].command", "set command"))
      << "not the head task: the plugin gives it nothing";
  auto named = admit_text(ray_job("\"--head=boss\"", "boss"));
  EXPECT_TRUE(named.ok()) << dump(named.errors);
  auto port = admit_text(ray_job("\"--port=99999\""));
  EXPECT_TRUE(has(port.errors, "spec.plugins.ray", "--port=99999 is not a port"));
}

TEST(Admission, TensorflowRayAndHcclrankAreKnownPlugins) {
  for (const char* plugin : {"tensorflow", "hcclrank"}) {
    auto d = admit_text(std::string("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\n"
                                    "metadata: {name: j}\nspec:\n  plugins: {") +
                        plugin +
                        ": []}\n  tasks: [{name: worker, replicas: 2, template: {spec: "
                        "{containers: [{name: c, command: [\"true\"]}]}}}]\n");
    EXPECT_TRUE(d.ok()) << plugin << ": " << dump(d.errors);
  }
}

TEST(JobYamlEnv, FieldRefIsReadAndAnUnknownPathIsRefusedAtIt) {
  Diagnostics d;
  auto docs = parse_yaml(
      "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j}\nspec:\n"
      "  tasks: [{name: w, replicas: 1, template: {spec: {containers: [{name: c, command: "
      "[\"true\"], env: [{name: A, valueFrom: {fieldRef: {fieldPath: "
      "\"metadata.annotations['hccl/rankIndex']\"}}}, {name: B, valueFrom: {fieldRef: "
      "{apiVersion: v1, fieldPath: status.hostIP}}}, {name: C, valueFrom: {secretKeyRef: "
      "{name: s, key: k}}}, {name: D, valueFrom: {fieldRef: {fieldPath: spec.hostname}}}]}]}}}]\n",
      d);
  ASSERT_EQ(docs.jobs.size(), 1u);
  const auto& env = docs.jobs[0].value.tasks[0].template_.containers[0].env;
  ASSERT_EQ(env.size(), 2u) << "C is skipped with a warning, D refused";
  EXPECT_EQ(env[0].field_path, "metadata.annotations['hccl/rankIndex']");
  EXPECT_EQ(env[1].field_path, "status.hostIP");
  EXPECT_TRUE(has(d.warnings, "spec.tasks[0].template.spec.containers[0].env[2].valueFrom",
                  "only valueFrom.fieldRef is read"));
  EXPECT_TRUE(has(d.errors,
                  "spec.tasks[0].template.spec.containers[0].env[3].valueFrom.fieldRef.fieldPath",
                  "\"spec.hostname\" is not one caldera gives"));
  EXPECT_EQ(d.errors.size(), 1u) << dump(d.errors);
  // apiVersion v1 is what caldera gives: nothing ignored, nothing to warn about.
  for (const auto& w : d.warnings)
    EXPECT_EQ(w.path.find("apiVersion"), std::string::npos) << w.path;
  Diagnostics other;
  parse_yaml(
      "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j}\nspec:\n"
      "  tasks: [{name: w, replicas: 1, template: {spec: {containers: [{name: c, command: "
      "[\"true\"], env: [{name: B, valueFrom: {fieldRef: {apiVersion: v2, fieldPath: "
      "status.hostIP}}}]}]}}}]\n",
      other);
  EXPECT_TRUE(has(other.errors,
                  "spec.tasks[0].template.spec.containers[0].env[0].valueFrom.fieldRef.apiVersion",
                  "not v1"));
}

}  // namespace
}  // namespace caldera

namespace caldera {
namespace {

TEST(Admission, VolcanoAnnotationsCalderaDoesNotHonourAreWarnedAboutAtTheirPath) {
  Diagnostics parse;
  auto docs = parse_yaml(
      "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: j\n  annotations:\n"
      "    volcano.sh/preemptable: \"false\"\n    team: ml\nspec:\n  tasks:\n    - name: w\n"
      "      replicas: 1\n      template:\n        metadata:\n          annotations:\n"
      "            volcano.sh/task-topology-affinity: w\n        spec:\n"
      "          containers: [{name: c, command: [\"true\"]}]\n",
      parse);
  ASSERT_TRUE(parse.ok()) << dump(parse.errors);
  ASSERT_EQ(docs.jobs.size(), 1u);
  Diagnostics d;
  apply_defaults(docs.jobs[0].value);
  admit(docs.jobs[0].value, AdmissionContext{}, d);
  EXPECT_TRUE(d.ok()) << dump(d.errors);
  EXPECT_TRUE(has(d.warnings, "metadata.annotations.volcano.sh/preemptable",
                  "caldera does not honour it yet"));
  EXPECT_TRUE(has(d.warnings,
                  "spec.tasks[0].template.metadata.annotations.volcano.sh/task-topology-affinity",
                  "task-topology plugin"));
  EXPECT_EQ(d.warnings.size(), 2u) << dump(d.warnings) << "team: ml is the user's own";
}

}  // namespace
}  // namespace caldera
