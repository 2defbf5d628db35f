// A Kubernetes Job's durable and wire forms, its key beside a Volcano Job's, and the merge
// patches it takes.
#include <gtest/gtest.h>

#include <capnp/message.h>

#include "actors/job/core/batch_job_controller.hpp"
#include "actors/job/job_record.hpp"
#include "actors/watch/watchers.hpp"
#include "job_test_support.hpp"
#include "messages/admission/batch_job_patch.hpp"
#include "messages/codec/codec.hpp"
#include "messages/codec/flat.hpp"
#include "messages/model/batch_job.hpp"

namespace caldera {
namespace {

BatchJobSpec everything() {
  BatchJobSpec s;
  s.name = "pi";
  s.namespace_ = "ml";
  s.labels = {{"team", "a"}};
  s.annotations = {{kQueueNameAnnotation, "research"}};
  s.parallelism = 2;
  s.completions = 6;
  s.completion_mode = "Indexed";
  s.backoff_limit = 3;
  s.backoff_limit_per_index = 1;
  s.max_failed_indexes = 2;
  s.active_deadline_seconds = 600;
  s.ttl_seconds_after_finished = 30;
  s.suspend = true;
  PodFailurePolicyRule fail;
  fail.action = "FailJob";
  fail.on_exit_codes = ExitCodeRequirement{"main", "In", {42, 43}};
  PodFailurePolicyRule ignore;
  ignore.action = "Ignore";
  ignore.on_pod_conditions = {{"DisruptionTarget", "True"}};
  s.pod_failure_policy = std::vector<PodFailurePolicyRule>{fail, ignore};
  s.success_policy = std::vector<SuccessPolicyRule>{{"0-2", 2}, {std::nullopt, 4}};
  s.pod_replacement_policy = "Failed";
  s.selector = std::map<std::string, std::string>{{"app", "pi"}};
  s.manual_selector = true;
  s.template_.labels = {{"app", "pi"}};
  s.template_.restart_policy = "Never";
  s.template_.containers.push_back(Container{"main", "", {"true"}, {}, {}, {}, {}, {}});
  return s;
}

TEST(BatchJobStore, TheSpecAndStatusTravelWhole) {
  const JobSpec spec = to_job_spec(everything());
  EXPECT_EQ(spec.queue, "research") << "the queue-name annotation names the queue";
  capnp::MallocMessageBuilder b;
  encode(spec, b.initRoot<api::JobSpec>());
  Diagnostics diags;
  EXPECT_EQ(decode(b.getRoot<api::JobSpec>().asReader(), diags), spec);
  EXPECT_EQ(to_batch_job_spec(spec), everything());

  JobStatus status;
  status.batch = BatchJobStatus{
      3,    2, 4,     1,   1,
      1000, 0, "0-3", "5", {{"Suspended", "False", "JobResumed", "Job resumed", 10, 20}}};
  capnp::MallocMessageBuilder s;
  encode(status, s.initRoot<api::JobStatus>());
  EXPECT_EQ(decode(s.getRoot<api::JobStatus>().asReader()), status);
}

TEST(BatchJobStore, TheRecordKeepsTheControllersBookkeepingAndItsIndexes) {
  auto c = testing::test_clock(5000);
  auto m = new_batch_job(to_job_spec(everything()), "job-uid", c);
  m.job.spec.batch->suspend = false;
  sync_job(m, c);
  m.job.status.batch->completed_indexes = "0,1";
  m.job.status.batch->failed_indexes = "4";
  m.batch.backoff[kJobWideBackoff] = {2, 4000};
  m.batch.backoff[3] = {1, 4500};
  m.batch.ignored_failures[3] = 1;
  m.batch.create_at_ms = 14'500;
  m.batch.counted_terminating = {"pi-2-abcde"};
  std::string row;
  auto writes = job_writes(m, &row);
  std::string spec_row = encode_spec_row(m);
  auto back = load_job(row, {}, nullptr, spec_row);
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->job.spec, m.job.spec);
  EXPECT_EQ(back->job.status, m.job.status);
  EXPECT_EQ(back->batch.backoff, m.batch.backoff);
  EXPECT_EQ(back->batch.ignored_failures, m.batch.ignored_failures);
  EXPECT_EQ(back->batch.create_at_ms, 14'500);
  EXPECT_EQ(back->batch.counted_terminating, m.batch.counted_terminating);
  EXPECT_EQ(back->batch.succeeded_indexes, (std::set<int32_t>{0, 1})) << "read from the status";
  EXPECT_EQ(back->batch.failed_indexes, (std::set<int32_t>{4}));
  EXPECT_EQ(back->key(), "ml/jobs.batch/pi");
}

TEST(BatchJobStore, ASuspendedJobIsSettledButNoHistoryForRetentionToDelete) {
  auto c = testing::test_clock(5000);
  auto spec = everything();
  spec.suspend = true;
  spec.ttl_seconds_after_finished.reset();  // settled once finished, not after a TTL
  auto m = new_batch_job(to_job_spec(spec), "job-uid", c);
  sync_job(m, c);
  ASSERT_TRUE(is_settled(m));
  auto writes = job_writes(m);
  for (const auto& w : writes) EXPECT_NE(w.family, Family::History) << w.key;
  // Once it has finished, it is history.
  m.job.spec.batch->suspend = false;
  sync_job(m, c);
  for (const auto& [name, p] : m.pods.map()) {
    Pod r = p;
    r.node = "n1";
    r.phase = PodPhase::Succeeded;
    r.status_seq = 1;
    on_pod_report(m, r, c);
  }
  ASSERT_TRUE(batch_job_finished(m));
  bool history = false;
  for (const auto& w : job_writes(m)) history = history || w.family == Family::History;
  EXPECT_TRUE(history);
}

TEST(BatchJobStore, TheKindsHaveKeysOfTheirOwn) {
  EXPECT_EQ(job_key("ml", "pi", false), "ml/pi");
  EXPECT_EQ(job_key("ml", "pi", true), "ml/jobs.batch/pi");
  EXPECT_TRUE(is_batch_job_key("ml/jobs.batch/pi"));
  EXPECT_FALSE(is_batch_job_key("ml/pi"));
  EXPECT_FALSE(is_batch_job_key("jobs.batch/pi")) << "a namespace named like the infix";
  // Pod rows and History rows read their job's key back.
  EXPECT_EQ(job_key_of_pod_row(pod_row_key("ml/jobs.batch/pi", "pi-0-bcdfg")), "ml/jobs.batch/pi");
  EXPECT_EQ(parse_history_key(history_key(42, "ml/jobs.batch/pi"))->second, "ml/jobs.batch/pi");
}

TEST(BatchJobStore, AWatchOfJobsSeesOneKindAndAWatchOfPodsBoth) {
  Watcher jobs, batch, pods;
  jobs.kind = batch.kind = WatchKind::Jobs;
  batch.batch = is_batch_watch("jobs.batch");
  pods.kind = WatchKind::Pods;
  pods.name = "pi";
  batch.name = "pi";
  EXPECT_EQ(*parse_watch_kind("jobs.batch"), WatchKind::Jobs);
  EXPECT_TRUE(watches(jobs, "ml/pi"));
  EXPECT_FALSE(watches(jobs, "ml/jobs.batch/pi"));
  EXPECT_TRUE(watches(batch, "ml/jobs.batch/pi"));
  EXPECT_FALSE(watches(batch, "ml/pi"));
  EXPECT_TRUE(watches(pods, "ml/pi"));
  EXPECT_TRUE(watches(pods, "ml/jobs.batch/pi"));
}

// The patch applied to everything(), or the errors it got.
std::pair<JobSpec, std::string> patched(std::string_view patch) {
  JobSpec spec = to_job_spec(everything());
  Diagnostics diags;
  apply_batch_job_patch(spec, patch, diags);
  std::string errors;
  for (const auto& e : diags.errors) errors += to_string(e) + "\n";
  return {spec, errors};
}

TEST(BatchJobStore, AMergePatchChangesWhatKubernetesLetsChange) {
  auto [spec, errors] = patched(
      R"({"spec": {"suspend": false, "parallelism": 4, "backoffLimit": 1,
                   "activeDeadlineSeconds": null, "ttlSecondsAfterFinished": 60}})");
  ASSERT_EQ(errors, "");
  EXPECT_FALSE(spec.batch->suspend);
  EXPECT_EQ(spec.batch->parallelism, 4);
  EXPECT_EQ(spec.tasks.at(0).replicas, 4);
  EXPECT_EQ(spec.batch->backoff_limit, 1);
  EXPECT_EQ(spec.active_deadline_seconds, std::nullopt) << "null removes it";
  EXPECT_EQ(spec.ttl_seconds_after_finished, 60);
  EXPECT_EQ(spec.queue, "research");
  EXPECT_EQ(spec.key(), "ml/jobs.batch/pi");
}

TEST(BatchJobStore, AMergePatchIsRefusedWholeWithEveryReason) {
  const JobSpec before = to_job_spec(everything());
  JobSpec spec = before;
  Diagnostics diags;
  apply_batch_job_patch(
      spec,
      R"({"spec": {"suspend": false, "completions": 9, "template": {}, "parallelizm": 2,
                   "parallelism": -1}, "metadata": {"labels": {}}})",
      diags);
  EXPECT_EQ(spec, before) << "nothing of a refused patch is applied";
  std::string all;
  for (const auto& e : diags.errors) all += to_string(e) + "\n";
  EXPECT_NE(all.find("spec.completions: Invalid value: 9: field is immutable"), std::string::npos)
      << all;
  EXPECT_NE(all.find("spec.template: Invalid value: ...: field is immutable"), std::string::npos)
      << all;
  EXPECT_NE(all.find("spec.parallelizm: Unsupported value"), std::string::npos) << all;
  EXPECT_NE(all.find("spec.parallelism"), std::string::npos) << all;
  EXPECT_NE(all.find("metadata: caldera patches a Job's spec only"), std::string::npos) << all;
}

TEST(BatchJobStore, APatchThatIsNotAJsonObjectOrTooLargeIsRefused) {
  EXPECT_NE(patched("{\"spec\": ").second.find("the patch is not JSON"), std::string::npos);
  EXPECT_NE(patched("[1, 2]").second.find("not a JSON object"), std::string::npos);
  EXPECT_NE(patched(R"({"spec": {"suspend": "sometimes"}})").second.find("spec.suspend"),
            std::string::npos);
  const std::string big =
      R"({"spec": {"suspend": true}, "x": ")" + std::string(kMaxPatchBytes, 'a') + "\"}";
  EXPECT_NE(patched(big).second.find("at most 65536 are taken"), std::string::npos);
  // The largest patch taken is taken (its blanks where the parser reads them fast).
  const std::string body = R"("spec": {"suspend": false}})";
  const std::string at_limit = "{" + std::string(kMaxPatchBytes - body.size() - 1, ' ') + body;
  ASSERT_EQ(at_limit.size(), kMaxPatchBytes);
  EXPECT_EQ(patched(at_limit).second, "");
}

}  // namespace
}  // namespace caldera
