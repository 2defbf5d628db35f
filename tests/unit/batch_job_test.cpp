// A Kubernetes Job (batch/v1): read from YAML, checked as the API server checks it.
#include <gtest/gtest.h>

#include <string>

#include "actors/directory/submission.hpp"
#include "messages/admission/batch_job_validation.hpp"
#include "messages/yaml/job_yaml.hpp"
#include "tests/unit/diagnostic_matchers.hpp"

namespace caldera {
namespace {

constexpr const char* kIndexedJob = R"(
apiVersion: batch/v1
kind: Job
metadata:
  name: sample
  labels: {team: ml}
spec:
  completions: 5
  parallelism: 2
  completionMode: Indexed
  backoffLimit: 3
  backoffLimitPerIndex: 1
  maxFailedIndexes: 2
  activeDeadlineSeconds: 600
  ttlSecondsAfterFinished: 30
  suspend: true
  podReplacementPolicy: Failed
  podFailurePolicy:
    rules:
      - action: FailJob
        onExitCodes: {containerName: main, operator: In, values: [42, 43]}
      - action: Ignore
        onPodConditions: [{type: DisruptionTarget}]
      - action: FailIndex
        onExitCodes: {operator: NotIn, values: [0]}
  successPolicy:
    rules:
      - {succeededIndexes: "0-2,4", succeededCount: 3}
  template:
    metadata:
      annotations: {caldera.io/sim-duration-ms: "100"}
    spec:
      restartPolicy: Never
      containers:
        - name: main
          command: [sh, -c, "echo $JOB_COMPLETION_INDEX"]
)";

// The one Kubernetes Job of `yaml`, and what reading and checking it found.
struct Checked {
  BatchJobSpec job;
  Diagnostics diags;
};

Checked check(const std::string& yaml) {
  Checked c;
  auto parsed = parse_yaml(yaml, c.diags);
  EXPECT_EQ(parsed.batch_jobs.size(), 1u) << dump(c.diags.errors);
  if (parsed.batch_jobs.empty()) return c;
  c.job = parsed.batch_jobs[0].value;
  validate_batch_job(c.job, c.diags);
  return c;
}

// kIndexedJob with `from` replaced by `to` (which must be there).
std::string edited(std::string from, std::string to) {
  std::string yaml = kIndexedJob;
  auto at = yaml.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) yaml.replace(at, from.size(), to);
  return yaml;
}

TEST(BatchJob, EveryFieldOfAnIndexedJobIsReadAndPassesTheApiServersChecks) {
  auto c = check(kIndexedJob);
  EXPECT_TRUE(c.diags.ok()) << dump(c.diags.errors);
  EXPECT_TRUE(c.diags.warnings.empty()) << dump(c.diags.warnings);
  const auto& j = c.job;
  EXPECT_EQ(j.key(), "default/sample");
  EXPECT_EQ(j.labels.at("team"), "ml");
  EXPECT_EQ(j.completions, 5);
  EXPECT_EQ(j.parallelism, 2);
  EXPECT_TRUE(j.indexed());
  EXPECT_EQ(j.backoff_limit, 3);
  EXPECT_EQ(j.backoff_limit_per_index, 1);
  EXPECT_EQ(j.max_failed_indexes, 2);
  EXPECT_EQ(j.active_deadline_seconds, 600);
  EXPECT_EQ(j.ttl_seconds_after_finished, 30);
  EXPECT_TRUE(j.suspend);
  EXPECT_EQ(j.pod_replacement_policy, "Failed");
  ASSERT_TRUE(j.pod_failure_policy);
  ASSERT_EQ(j.pod_failure_policy->size(), 3u);
  const auto& fail = (*j.pod_failure_policy)[0];
  EXPECT_EQ(fail.action, "FailJob");
  ASSERT_TRUE(fail.on_exit_codes);
  EXPECT_EQ(fail.on_exit_codes->container_name, "main");
  EXPECT_EQ(fail.on_exit_codes->op, "In");
  EXPECT_EQ(fail.on_exit_codes->values, (std::vector<int32_t>{42, 43}));
  const auto& ignore = (*j.pod_failure_policy)[1];
  ASSERT_EQ(ignore.on_pod_conditions.size(), 1u);
  EXPECT_EQ(ignore.on_pod_conditions[0].type, "DisruptionTarget");
  EXPECT_EQ(ignore.on_pod_conditions[0].status, "True");  // Kubernetes' default
  ASSERT_TRUE(j.success_policy);
  ASSERT_EQ(j.success_policy->size(), 1u);
  EXPECT_EQ((*j.success_policy)[0].succeeded_indexes, "0-2,4");
  EXPECT_EQ((*j.success_policy)[0].succeeded_count, 3);
  ASSERT_EQ(j.template_.containers.size(), 1u);
  EXPECT_EQ(j.template_.restart_policy, "Never");
}

TEST(BatchJob, AJobOfDefaultsNeedsOnlyATemplateThatDoesNotRestartAlways) {
  auto c = check(R"(
apiVersion: batch/v1
kind: Job
metadata: {name: pi}
spec:
  template:
    spec:
      containers: [{name: pi, command: ["true"]}]
)");
  // Kubernetes' pods restart Always unless told otherwise, which a Job may not.
  EXPECT_TRUE(
      has(c.diags.errors, "spec.template.spec.restartPolicy", "Unsupported value: \"Always\""));
  EXPECT_EQ(c.diags.errors.size(), 1u) << dump(c.diags.errors);
  EXPECT_FALSE(c.job.indexed());
  EXPECT_FALSE(c.job.completions);
  EXPECT_FALSE(c.job.suspend);
}

TEST(BatchJob, NamesAndCountsAreCheckedAsTheApiServerDoes) {
  auto c = check(R"(
apiVersion: batch/v1
kind: Job
metadata: {name: Not_A_Name}
spec:
  parallelism: -1
  completions: -2
  backoffLimit: -1
  activeDeadlineSeconds: -5
  ttlSecondsAfterFinished: -1
  completionMode: Sometimes
  template:
    spec:
      restartPolicy: OnFailure
)");
  EXPECT_TRUE(has(c.diags.errors, "metadata.name", "RFC 1123"));
  for (const char* path : {"spec.parallelism", "spec.completions", "spec.backoffLimit",
                           "spec.activeDeadlineSeconds", "spec.ttlSecondsAfterFinished"})
    EXPECT_TRUE(has(c.diags.errors, path, "greater than or equal to 0")) << path;
  EXPECT_TRUE(has(c.diags.errors, "spec.completionMode", "\"Indexed\""));
  EXPECT_TRUE(has(c.diags.errors, "spec.template.spec.containers", "Required"));
  auto long_name = check(edited("name: sample", "name: " + std::string(64, 'a')));
  EXPECT_TRUE(has(long_name.diags.errors, "metadata.name", "no more than 63 characters"));
}

TEST(BatchJob, PerIndexLimitsNeedAnIndexedJobWithCompletions) {
  auto no_completions = check(edited("  completions: 5\n", ""));
  EXPECT_TRUE(
      has(no_completions.diags.errors, "spec.completions", "when completion mode is Indexed"));
  auto not_indexed = check(edited("completionMode: Indexed", "completionMode: NonIndexed"));
  EXPECT_TRUE(has(not_indexed.diags.errors, "spec.backoffLimitPerIndex", "requires indexed"));
  EXPECT_TRUE(has(not_indexed.diags.errors, "spec.successPolicy", "requires indexed"));
  auto too_many = check(edited("maxFailedIndexes: 2", "maxFailedIndexes: 6"));
  EXPECT_TRUE(
      has(too_many.diags.errors, "spec.maxFailedIndexes", "less than or equal to completions"));
  auto alone = check(edited("  backoffLimitPerIndex: 1\n", ""));
  EXPECT_TRUE(has(alone.diags.errors, "spec.maxFailedIndexes", "backoffLimitPerIndex is not set"));
  EXPECT_TRUE(has(alone.diags.errors, "spec.podFailurePolicy.rules[2].action",
                  "requires the backoffLimitPerIndex"));
  auto wide = check(edited("parallelism: 2", "parallelism: 100001"));
  EXPECT_TRUE(has(wide.diags.errors, "spec.parallelism", "100000 when completion mode is Indexed"));
}

TEST(BatchJob, APodFailurePolicyNeedsPodsThatNeverRestartAndWellFormedRules) {
  auto restarts = check(edited("restartPolicy: Never", "restartPolicy: OnFailure"));
  EXPECT_TRUE(has(restarts.diags.errors, "spec.template.spec.restartPolicy",
                  "only \"Never\" is supported when podFailurePolicy is specified"));
  auto both = check(edited("onPodConditions: [{type: DisruptionTarget}]",
                           "onPodConditions: [{type: DisruptionTarget, status: Maybe}]\n"
                           "        onExitCodes: {operator: In, values: [1]}"));
  EXPECT_TRUE(has(both.diags.errors, "spec.podFailurePolicy.rules[1]", "both OnExitCodes and"));
  EXPECT_TRUE(has(both.diags.errors, "spec.podFailurePolicy.rules[1].onPodConditions[0].status",
                  "\"Unknown\""));
  auto neither =
      check(edited("onPodConditions: [{type: DisruptionTarget}]", "onPodConditions: []"));
  EXPECT_TRUE(has(neither.diags.errors, "spec.podFailurePolicy.rules[1]", "one of OnExitCodes"));
  auto codes = check(edited("{containerName: main, operator: In, values: [42, 43]}",
                            "{containerName: other, operator: Equals, values: [0, 43, 43, 7]}"));
  const std::string at = "spec.podFailurePolicy.rules[0].onExitCodes";
  EXPECT_TRUE(has(codes.diags.errors, at + ".containerName", "container or initContainer names"));
  EXPECT_TRUE(has(codes.diags.errors, at + ".operator", "\"NotIn\""));
  EXPECT_TRUE(has(codes.diags.errors, at + ".values[2]", "Duplicate"));
  EXPECT_TRUE(has(codes.diags.errors, at + ".values[3]", "must be ordered"));
  auto zero = check(edited("values: [42, 43]", "values: [0]"));
  EXPECT_TRUE(has(zero.diags.errors, at + ".values[0]", "must not be 0 for the In operator"));
  auto empty = check(edited("values: [42, 43]", "values: []"));
  EXPECT_TRUE(has(empty.diags.errors, at + ".values", "at least one value"));
  auto action = check(edited("action: FailJob", "action: Retry"));
  EXPECT_TRUE(has(action.diags.errors, "spec.podFailurePolicy.rules[0].action", "\"FailJob\""));
  auto replaced =
      check(edited("podReplacementPolicy: Failed", "podReplacementPolicy: TerminatingOrFailed"));
  EXPECT_TRUE(has(replaced.diags.errors, "spec.podReplacementPolicy",
                  "\"Failed\" when podFailurePolicy is specified"));
}

TEST(BatchJob, ASuccessPolicyCountsIndexesBelowCompletions) {
  auto beyond = check(edited("succeededIndexes: \"0-2,4\"", "succeededIndexes: \"0-2,5\""));
  EXPECT_TRUE(has(beyond.diags.errors, "spec.successPolicy.rules[0].succeededIndexes",
                  "not below completions (5)"));
  auto more = check(edited("succeededCount: 3", "succeededCount: 5"));
  EXPECT_TRUE(has(more.diags.errors, "spec.successPolicy.rules[0].succeededCount",
                  "number of indexes in succeededIndexes (4)"));
  auto past = check(edited("succeededCount: 3", "succeededCount: 6"));
  EXPECT_TRUE(has(past.diags.errors, "spec.successPolicy.rules[0].succeededCount",
                  "less than or equal to .spec.completions"));
  auto bare = check(edited("{succeededIndexes: \"0-2,4\", succeededCount: 3}", "{}"));
  EXPECT_TRUE(has(bare.diags.errors, "spec.successPolicy.rules[0]",
                  "at least one of succeededCount or succeededIndexes"));
}

TEST(BatchJob, OwnSelectorsNeedManualSelectorAndMustMatchTheTemplate) {
  auto own =
      check(edited("  suspend: true\n", "  suspend: true\n  selector: {matchLabels: {a: b}}\n"));
  EXPECT_TRUE(has(own.diags.errors, "spec.selector", "will be auto-generated"));
  auto manual = check(edited("  suspend: true\n",
                             "  suspend: true\n  manualSelector: true\n"
                             "  selector: {matchLabels: {a: b}}\n"));
  EXPECT_TRUE(has(manual.diags.errors, "spec.template.metadata.labels", "does not match"));
  auto yaml =
      edited("  suspend: true\n",
             "  suspend: true\n  manualSelector: true\n  selector: {matchLabels: {a: b}}\n");
  yaml.insert(yaml.find("      annotations:"), "      labels: {a: b}\n");
  auto matching = check(yaml);
  EXPECT_TRUE(matching.diags.ok()) << dump(matching.diags.errors);
}

TEST(BatchJob, TypeErrorsNameTheirField) {
  auto c = check(edited("suspend: true", "suspend: sometimes"));
  EXPECT_TRUE(has(c.diags.errors, "spec.suspend", "expected true or false"));
  auto expr = check(edited("  suspend: true\n",
                           "  suspend: true\n  manualSelector: true\n"
                           "  selector: {matchExpressions: [{key: a, operator: Exists}]}\n"));
  EXPECT_TRUE(has(expr.diags.errors, "spec.selector.matchExpressions", "matchLabels only"));
}

TEST(BatchJob, ASubmissionIsCheckedUnderItsDocumentAndRunsAsAJobOfItsOwnKind) {
  Diagnostics diags;
  auto parsed =
      parse_yaml(std::string(kIndexedJob) + "---\n" + edited("name: sample", "name: other") +
                     "---\n" + edited("name: sample", "name: taken"),
                 diags);
  ASSERT_EQ(parsed.batch_jobs.size(), 3u);
  parsed.batch_jobs[1].value.parallelism = -1;
  auto admitted = admit_batch_jobs(
      parsed.batch_jobs, AdmissionContext{},
      [](const std::string& key) { return key == "default/jobs.batch/taken"; }, diags);
  EXPECT_TRUE(has(diags.errors, "documents[1].spec.parallelism", "greater than or equal to 0"));
  EXPECT_TRUE(
      has(diags.errors, "documents[2].metadata.name", "jobs.batch \"taken\" already exists"));
  EXPECT_EQ(diags.errors.size(), 2u) << dump(diags.errors);
  ASSERT_EQ(admitted.size(), 1u);
  const JobSpec& spec = admitted[0].value;
  EXPECT_EQ(spec.key(), "default/jobs.batch/sample") << "a Volcano Job may be named sample too";
  ASSERT_TRUE(spec.batch);
  EXPECT_TRUE(spec.batch->indexed());
  ASSERT_EQ(spec.tasks.size(), 1u);
  EXPECT_EQ(spec.min_available, 1) << "no gang: each pod is placed when it fits";
  EXPECT_EQ(to_batch_job_spec(spec).template_, spec.tasks[0].template_);
}

TEST(BatchJob, CalderasOwnLimitsHoldAtTheirBounds) {
  auto admit_one = [](const std::string& yaml) {
    Diagnostics diags;
    auto parsed = parse_yaml(yaml, diags);
    admit_batch_jobs(
        parsed.batch_jobs, AdmissionContext{}, [](const std::string&) { return false; }, diags);
    return diags;
  };
  auto at_limit = admit_one(edited("  completions: 5\n  parallelism: 2\n",
                                   "  completions: 10000\n  parallelism: 10000\n"));
  EXPECT_TRUE(at_limit.ok()) << dump(at_limit.errors);
  auto past = admit_one(edited("  completions: 5\n  parallelism: 2\n",
                               "  completions: 10001\n  parallelism: 10001\n"));
  EXPECT_TRUE(has(past.errors, "spec.parallelism", "caldera keeps every pod of a job"));
  EXPECT_TRUE(has(past.errors, "spec.completions", "10001 is more than 10000"));
  auto no_command =
      admit_one(edited("command: [sh, -c, \"echo $JOB_COMPLETION_INDEX\"]", "image: busybox"));
  EXPECT_TRUE(
      has(no_command.errors, "spec.template.spec.containers[0].command", "caldera runs processes"));
  auto deadline =
      admit_one(edited("activeDeadlineSeconds: 600", "activeDeadlineSeconds: 9223372036854776"));
  EXPECT_TRUE(has(deadline.errors, "spec.activeDeadlineSeconds", "in milliseconds"));
  auto longest =
      admit_one(edited("activeDeadlineSeconds: 600", "activeDeadlineSeconds: 9223372036854775"));
  EXPECT_TRUE(longest.ok()) << dump(longest.errors);
}

}  // namespace
}  // namespace caldera
