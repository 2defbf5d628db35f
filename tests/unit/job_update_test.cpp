// `caldera apply` of a job that exists: what may change (actors/job/core/job_update), and elastic
// scaling as the controller carries it out (new pods placed, surplus pods stopped highest index
// first and then dropped, the gang's minimum followed).
#include <gtest/gtest.h>

#include "actors/job/core/job_update.hpp"
#include "messages/admission/admission.hpp"
#include "messages/model/batch_job.hpp"
#include "tests/unit/diagnostic_matchers.hpp"
#include "tests/unit/job_test_support.hpp"

namespace caldera {
namespace {

using namespace caldera::testing;

JobSpec two_tasks() {
  auto s = spec_with({{"ps", 1}, {"worker", 2}});
  s.min_available = 3;
  s.annotations = {{"caldera.io/jobflow-uid", "f1"}, {"note", "a"}};
  return s;
}

TEST(JobUpdate, ReplicasMinAvailablePriorityMaxRetryAndTtlMayChangeAndCountAGeneration) {
  auto stored = two_tasks();
  auto applied = stored;
  applied.annotations = {{"note", "b"}};  // a file does not carry caldera's own annotations
  applied.tasks[1].replicas = 4;
  applied.tasks[1].min_available = 2;
  applied.min_available = 3;
  applied.priority_class_name = "high";
  applied.max_retry = 5;
  applied.ttl_seconds_after_finished = 60;
  Diagnostics d;
  auto next = update_job_spec(stored, JobPhase::Running, applied, d);
  ASSERT_TRUE(next) << dump(d.errors);
  EXPECT_EQ(next->tasks[1].replicas, 4);
  EXPECT_EQ(next->tasks[1].min_available, 2);
  EXPECT_EQ(next->priority_class_name, "high");
  EXPECT_EQ(next->max_retry, 5);
  EXPECT_EQ(next->ttl_seconds_after_finished, 60);
  EXPECT_EQ(next->generation, 2);
  EXPECT_EQ(next->annotations.at("caldera.io/jobflow-uid"), "f1") << "caldera's own stay";
  EXPECT_EQ(next->annotations.at("note"), "b");
}

TEST(JobUpdate, TheSameSpecIsUnchanged) {
  auto stored = two_tasks();
  stored.generation = 3;
  auto applied = stored;
  applied.generation = 1;  // as a file reads
  Diagnostics d;
  EXPECT_FALSE(update_job_spec(stored, JobPhase::Running, applied, d));
  EXPECT_TRUE(d.ok()) << dump(d.errors);
}

TEST(JobUpdate, AJobStoredBeforeItsPluginsBroughtOthersIsScaledByTheSameFile) {
  auto stored = two_tasks();
  stored.plugins = {{"mpi", {"--port=2222"}}};  // as stored before mpi brought svc and ssh
  auto applied = stored;
  applied.tasks[1].replicas = 4;
  add_plugin_dependencies(applied);  // the same file, defaulted today
  ASSERT_EQ(applied.plugins.size(), 3u);
  Diagnostics d;
  auto next = update_job_spec(stored, JobPhase::Running, applied, d);
  ASSERT_TRUE(next) << dump(d.errors);
  EXPECT_EQ(next->tasks[1].replicas, 4);
  EXPECT_EQ(next->plugins, stored.plugins) << "the running job's plugins stay as they started";
  // A plugin the file really adds is still a change that is refused.
  applied.plugins.push_back({"env", {}});
  Diagnostics refused;
  EXPECT_FALSE(update_job_spec(stored, JobPhase::Running, applied, refused));
  EXPECT_TRUE(has(refused.errors, "spec.plugins", "")) << dump(refused.errors);
}

TEST(JobUpdate, AnyOtherFieldIsRefusedByNameAsVolcanosWebhookRefusesIt) {
  auto stored = two_tasks();
  struct Case {
    std::function<void(JobSpec&)> change;
    std::string path;
  };
  std::vector<Case> cases{
      {[](JobSpec& s) { s.queue = "other"; }, "spec.queue"},
      {[](JobSpec& s) { s.min_success = 1; }, "spec.minSuccess"},
      {[](JobSpec& s) {
         s.plugins = {{"svc", {}}};
       },
       "spec.plugins"},
      {[](JobSpec& s) { s.tasks[0].max_retry = 1; }, "spec.tasks[0].maxRetry"},
      {[](JobSpec& s) { s.tasks[1].template_.containers.emplace_back(); },
       "spec.tasks[1].template"},
  };
  for (const auto& c : cases) {
    auto applied = stored;
    c.change(applied);
    Diagnostics d;
    EXPECT_FALSE(update_job_spec(stored, JobPhase::Running, applied, d));
    EXPECT_TRUE(has(d.errors, c.path, "job updates may not change fields other than"))
        << c.path << ": " << dump(d.errors);
  }
  auto fewer = stored;
  fewer.tasks.pop_back();
  Diagnostics d;
  EXPECT_FALSE(update_job_spec(stored, JobPhase::Running, fewer, d));
  EXPECT_TRUE(has(d.errors, "spec.tasks", "may not add or remove tasks (2 -> 1)"));
}

TEST(JobUpdate, AFinishedJobIsNotScaledButItsTtlMayChange) {
  auto stored = two_tasks();
  auto scaled = stored;
  scaled.tasks[1].replicas = 5;
  Diagnostics d;
  EXPECT_FALSE(update_job_spec(stored, JobPhase::Completed, scaled, d));
  EXPECT_TRUE(has(d.errors, "spec", "the job is Completed"));
  auto ttl = stored;
  ttl.ttl_seconds_after_finished = 10;
  Diagnostics ok;
  auto next = update_job_spec(stored, JobPhase::Completed, ttl, ok);
  ASSERT_TRUE(next) << dump(ok.errors);
  EXPECT_EQ(next->ttl_seconds_after_finished, 10);
}

BatchJobSpec batch_job() {
  BatchJobSpec b;
  b.name = "k";
  b.parallelism = 2;
  b.completions = 4;
  b.template_.containers.emplace_back();
  b.template_.restart_policy = "Never";
  return b;
}

TEST(JobUpdate, AKubernetesJobChangesWhatAPatchMayChangeAndNothingElse) {
  auto stored = to_job_spec(batch_job());
  auto changed = batch_job();
  changed.parallelism = 3;
  changed.suspend = true;
  auto applied = to_job_spec(changed);
  Diagnostics d;
  auto next = update_job_spec(stored, JobPhase::Running, applied, d);
  ASSERT_TRUE(next) << dump(d.errors);
  EXPECT_EQ(next->batch->parallelism, 3);
  EXPECT_TRUE(next->batch->suspend);
  EXPECT_EQ(next->generation, 2);
  auto more = batch_job();
  more.completions = 9;
  auto completions = to_job_spec(more);
  Diagnostics refused;
  EXPECT_FALSE(update_job_spec(stored, JobPhase::Running, completions, refused));
  EXPECT_TRUE(has(refused.errors, "spec", "may change only spec.suspend"));
  auto volcano = stored;
  volcano.batch.reset();
  Diagnostics kind;
  EXPECT_FALSE(update_job_spec(stored, JobPhase::Running, volcano, kind));
  EXPECT_TRUE(has(kind.errors, "kind", "another kind"));
}

std::vector<std::string> live_pods(const JobModel& m) {
  std::vector<std::string> out;
  for (const auto& [name, p] : m.pods)
    if (!p.out_of_sync) out.push_back(name);
  return out;
}

TEST(ElasticScaling, MoreReplicasCreateThePodsOfTheNewIndexesWhileTheOthersRun) {
  auto c = test_clock();
  auto m = running_job(spec_with({{"w", 2}}), c);
  ASSERT_EQ(m.job.status.state.phase, JobPhase::Running);
  // The file names no minAvailable: the gang stays the one the job was created with (Volcano's
  // webhook wrote it then), not every pod of the larger job.
  auto applied = m.job.spec;
  applied.tasks[0].replicas = 4;
  Diagnostics d;
  auto next = update_job_spec(m.job.spec, JobPhase::Running, applied, d);
  ASSERT_TRUE(next) << dump(d.errors);
  EXPECT_EQ(next->min_available, 2);
  m.job.spec = *next;
  sync_job(m, c);
  EXPECT_EQ(live_pods(m), (std::vector<std::string>{"job-w-0", "job-w-1", "job-w-2", "job-w-3"}));
  EXPECT_EQ(m.pods.at("job-w-2").phase, PodPhase::Pending);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Running) << "the gang already runs";
  place_all(m, c);
  report(m, "job-w-2", PodPhase::Running, c);
  report(m, "job-w-3", PodPhase::Running, c);
  EXPECT_EQ(m.job.status.running, 4);
}

TEST(ElasticScaling, FewerReplicasStopTheHighestIndexesFirstAndDropThemOnceEnded) {
  auto c = test_clock();
  auto m = running_job(spec_with({{"w", 4}}), c);
  m.job.spec.tasks[0].replicas = 2;
  auto fx = sync_job(m, c);
  ASSERT_EQ(fx.kill.size(), 2u);
  EXPECT_EQ(fx.kill[0].uid, m.pods.at("job-w-3").uid) << "highest index first";
  EXPECT_EQ(fx.kill[1].uid, m.pods.at("job-w-2").uid);
  EXPECT_TRUE(m.pods.at("job-w-3").out_of_sync) << "stopped by us: never an eviction";
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Running);
  EXPECT_EQ(m.job.status.running, 2) << "the surplus pods no longer count";
  finish_killed(m, c);
  EXPECT_EQ(live_pods(m), (std::vector<std::string>{"job-w-0", "job-w-1"}));
  EXPECT_EQ(m.pods.size(), 2u) << "ended surplus pods leave the table (and their nodes)";
  // The job ends on the pods it wants.
  report(m, "job-w-0", PodPhase::Succeeded, c);
  report(m, "job-w-1", PodPhase::Succeeded, c);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Completed);
}

TEST(ElasticScaling, AHigherMinAvailableThanRunsSendsTheJobBackToPending) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 2}});
  spec.min_available = 1;
  auto m = running_job(spec, c);
  m.job.spec.tasks[0].replicas = 4;
  m.job.spec.min_available = 4;
  sync_job(m, c);
  EXPECT_EQ(m.job.status.min_available, 4);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Pending) << "2 pending > 4 - 4: not enough";
  place_all(m, c);
  report(m, "job-w-2", PodPhase::Running, c);
  report(m, "job-w-3", PodPhase::Running, c);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Running);
}

}  // namespace
}  // namespace caldera
