// The pure job controller: each arrow of seed 000's state diagram implemented so far, by name.
#include <gtest/gtest.h>

#include "actors/job/core/job_controller.hpp"
#include "actors/job/core/pod_template.hpp"
#include "tests/unit/job_test_support.hpp"

namespace caldera {
namespace {

using namespace caldera::testing;

TEST(JobController, NewJobIsPendingWithACondition) {
  auto c = test_clock();
  auto m = new_job(spec_with({{"w", 2}}), "u1", c);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Pending);
  ASSERT_EQ(m.job.status.conditions.size(), 1u);
  EXPECT_EQ(m.job.status.conditions[0].status, JobPhase::Pending);
  EXPECT_EQ(m.job.status.min_available, 2);
}

TEST(JobController, SyncCreatesPodsNamedJobTaskIndexAndAsksForPlacement) {
  auto c = test_clock();
  auto m = new_job(spec_with({{"ps", 1}, {"worker", 2}}), "u1", c);
  auto fx = sync_job(m, c);
  EXPECT_TRUE(fx.request_placement);
  EXPECT_TRUE(fx.changed);
  std::vector<std::string> names;
  for (auto& [n, p] : m.pods) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"job-ps-0", "job-worker-0", "job-worker-1"}));
  EXPECT_EQ(m.job.status.pending, 3);
  // Idempotent: a second sync creates nothing new.
  auto again = sync_job(m, c);
  EXPECT_EQ(m.pods.size(), 3u);
  EXPECT_EQ(m.pods.at("job-ps-0").uid, "uid-1");
  EXPECT_FALSE(again.changed);
}

TEST(JobController, PlacementLaunchesOnlyUnboundPendingPods) {
  auto c = test_clock();
  auto m = new_job(spec_with({{"w", 2}}), "u1", c);
  sync_job(m, c);
  auto fx = on_pods_placed(
      m, {{m.pods.at("job-w-0").uid, {"n1", "10.0.0.1"}}, {"stale-uid", {"n1", "10.0.0.1"}}}, c);
  EXPECT_EQ(fx.launch, std::vector<std::string>{"job-w-0"});
  EXPECT_EQ(fx.release, std::vector<std::string>{"stale-uid"});
  // Its node reserved it for the gang: it lets that go now, not when the reservation expires.
  ASSERT_EQ(fx.unreserve.size(), 1u);
  EXPECT_EQ(fx.unreserve[0].uid, "stale-uid");
  EXPECT_EQ(fx.unreserve[0].node, "n1");
  EXPECT_EQ(m.pods.at("job-w-0").node, "n1");
}

TEST(JobController, Pending_to_Running_WhenMinAvailablePodsRun) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 3}});
  spec.min_available = 2;
  auto m = new_job(spec, "u1", c);
  sync_job(m, c);
  place_all(m, c);
  report(m, "job-w-0", PodPhase::Running, c);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Pending);
  auto fx = report(m, "job-w-1", PodPhase::Running, c);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Running);
  ASSERT_EQ(fx.phase_changes.size(), 1u);
  EXPECT_EQ(fx.phase_changes[0].to, JobPhase::Running);
  EXPECT_EQ(m.job.status.running, 2);
}

TEST(JobController, Running_to_Completed_WhenAllPodsSucceeded) {
  auto c = test_clock();
  auto m = new_job(spec_with({{"w", 2}}), "u1", c);
  sync_job(m, c);
  place_all(m, c);
  report(m, "job-w-0", PodPhase::Running, c);
  report(m, "job-w-1", PodPhase::Running, c);
  report(m, "job-w-0", PodPhase::Succeeded, c);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Running);
  auto fx = report(m, "job-w-1", PodPhase::Succeeded, c);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Completed);
  EXPECT_EQ(m.job.status.succeeded, 2);
  EXPECT_EQ(fx.ended, std::vector<std::string>{m.pods.at("job-w-1").uid});
}

// The node made the pod's end durable before it reported it: its room goes back to the scheduler
// at once (Effects::ended), not once the job's own write is durable (Effects::release).
TEST(JobController, PodReport_OfAnEndedPodGivesItsRoomBackWithoutWaitingForTheWrite) {
  auto c = test_clock();
  auto m = new_job(spec_with({{"w", 2}}), "u1", c);
  sync_job(m, c);
  place_all(m, c);
  const auto uid = m.pods.at("job-w-0").uid;
  auto running = report(m, "job-w-0", PodPhase::Running, c);
  EXPECT_TRUE(running.ended.empty()) << "a running pod keeps its room";
  auto succeeded = report(m, "job-w-0", PodPhase::Succeeded, c);
  EXPECT_EQ(succeeded.ended, std::vector<std::string>{uid});
  EXPECT_TRUE(succeeded.release.empty()) << "nothing waits for the write to give the room back";
  auto again = report(m, "job-w-0", PodPhase::Succeeded, c);
  EXPECT_TRUE(again.ended.empty()) << "an ended pod's room goes back once";
}

TEST(JobController, Running_to_Completed_WhenMinSuccessReachedKillsTheRest) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 3}});
  spec.min_success = 1;
  auto m = new_job(spec, "u1", c);
  sync_job(m, c);
  place_all(m, c);
  for (auto n : {"job-w-0", "job-w-1", "job-w-2"}) report(m, n, PodPhase::Running, c);
  auto fx = report(m, "job-w-0", PodPhase::Succeeded, c);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Completed);
  EXPECT_EQ(fx.kill.size(), 2u);  // finishedState kills what still runs
  EXPECT_TRUE(m.pods.at("job-w-1").out_of_sync);
  EXPECT_EQ(m.job.status.terminating, 2);
}

TEST(JobController, Running_to_Failed_WhenFewerThanMinAvailableSucceeded) {
  auto c = test_clock();
  auto m = new_job(spec_with({{"w", 2}}), "u1", c);
  sync_job(m, c);
  place_all(m, c);
  report(m, "job-w-0", PodPhase::Running, c);
  report(m, "job-w-1", PodPhase::Running, c);
  report(m, "job-w-0", PodPhase::Succeeded, c);
  report(m, "job-w-1", PodPhase::Failed, c, 3);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Failed);
  EXPECT_EQ(m.job.status.state.reason, "MinAvailableNotMet");
  EXPECT_EQ(m.job.status.failed, 1);
}

TEST(JobController, Running_to_Failed_WhenMinSuccessNotReached) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 2}});
  spec.min_available = 1;
  spec.min_success = 2;
  auto m = new_job(spec, "u1", c);
  sync_job(m, c);
  place_all(m, c);
  report(m, "job-w-0", PodPhase::Succeeded, c);
  report(m, "job-w-1", PodPhase::Failed, c, 1);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Failed);
  EXPECT_EQ(m.job.status.state.reason, "MinSuccessNotMet");
}

TEST(JobController, Running_to_Failed_WhenATaskMissesItsMinAvailable) {
  auto c = test_clock();
  auto spec = spec_with({{"a", 1}, {"b", 1}});
  spec.min_available = 1;
  spec.tasks[1].min_available = 1;
  auto m = new_job(spec, "u1", c);
  sync_job(m, c);
  place_all(m, c);
  report(m, "job-a-0", PodPhase::Succeeded, c);
  report(m, "job-b-0", PodPhase::Failed, c, 2);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Failed);
  EXPECT_EQ(m.job.status.state.reason, "TaskMinAvailableNotMet");
}

TEST(JobController, Running_to_Pending_WhenTooManyPodsPending) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 2}});
  auto m = new_job(spec, "u1", c);
  sync_job(m, c);
  place_all(m, c);
  report(m, "job-w-0", PodPhase::Running, c);
  report(m, "job-w-1", PodPhase::Running, c);
  ASSERT_EQ(m.job.status.state.phase, JobPhase::Running);
  // A node reports a pod back in Pending (e.g. re-created): 1 pending > 2 - 2.
  report(m, "job-w-1", PodPhase::Pending, c);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Pending);
  EXPECT_EQ(m.job.status.state.reason, "NotEnoughPods");
}

TEST(JobController, FastPodsPassPendingRunningCompletedInOneSync) {
  auto c = test_clock();
  auto m = new_job(spec_with({{"w", 1}}), "u1", c);
  sync_job(m, c);
  place_all(m, c);
  auto fx = report(m, "job-w-0", PodPhase::Succeeded, c);
  ASSERT_EQ(fx.phase_changes.size(), 2u);
  EXPECT_EQ(fx.phase_changes[0].to, JobPhase::Running);
  EXPECT_EQ(fx.phase_changes[1].to, JobPhase::Completed);
  EXPECT_EQ(m.job.status.conditions.size(), 3u);
}

// A placed pod's report under an older uid (a pod the job replaced), in `phase`.
Pod report_of_replaced_pod(JobModel& m, PodPhase phase, const Clock& c) {
  sync_job(m, c);
  place_all(m, c);
  Pod stale = m.pods.at("job-w-0");
  stale.uid = "older";
  stale.phase = phase;
  return stale;
}

TEST(JobController, ReportsForAnotherPodUidAreIgnoredAndStopped) {
  auto c = test_clock();
  auto m = new_job(spec_with({{"w", 1}}), "u1", c);
  auto fx = on_pod_report(m, report_of_replaced_pod(m, PodPhase::Running, c), c);
  ASSERT_EQ(fx.kill.size(), 1u);
  EXPECT_EQ(fx.kill[0].uid, "older");
  EXPECT_EQ(m.pods.at("job-w-0").phase, PodPhase::Pending);
}

TEST(JobController, AnEndedPodOfAnotherUidIsForgottenByItsNode) {
  auto c = test_clock();
  auto m = new_job(spec_with({{"w", 1}}), "u1", c);
  auto fx = on_pod_report(m, report_of_replaced_pod(m, PodPhase::Succeeded, c), c);
  EXPECT_TRUE(fx.kill.empty());
  ASSERT_EQ(fx.remove.size(), 1u);
  EXPECT_EQ(fx.remove[0].uid, "older");
  EXPECT_EQ(fx.remove[0].node, "n1");
  EXPECT_EQ(m.pods.at("job-w-0").phase, PodPhase::Pending);
}

TEST(JobController, TerminalPodStatusIsFinal) {
  auto c = test_clock();
  auto m = new_job(spec_with({{"w", 2}}), "u1", c);
  sync_job(m, c);
  place_all(m, c);
  report(m, "job-w-0", PodPhase::Failed, c, 1);
  report(m, "job-w-0", PodPhase::Running, c);  // a late, reordered report
  EXPECT_EQ(m.pods.at("job-w-0").phase, PodPhase::Failed);
}

TEST(JobController, RunningDurationStopsWhenTheJobFinishes) {
  auto m = new_job(spec_with({{"w", 1}}), "u1", test_clock(1000));
  sync_job(m, test_clock(1000));
  place_all(m, test_clock(1000));
  report(m, "job-w-0", PodPhase::Running, test_clock(2000));
  report(m, "job-w-0", PodPhase::Succeeded, test_clock(5000));
  update_counts(m, 99000);
  EXPECT_EQ(m.job.status.running_duration_ms, 3000);
}

TEST(JobController, NodeUpRelaunchesLaunchedPodsTheNodeNeverStarted) {
  auto c = test_clock();
  auto m = new_job(spec_with({{"w", 3}}), "u1", c);
  sync_job(m, c);
  place_all(m, c);                             // batch 1: job-w-0
  report(m, "job-w-0", PodPhase::Running, c);  // batch 2: job-w-1, job-w-2
  ASSERT_EQ(m.creation.in_flight, (std::set<std::string>{"job-w-1", "job-w-2"}));
  auto fx = on_node_up(m, "n1", {m.pods.at("job-w-0").uid, m.pods.at("job-w-1").uid}, c);
  EXPECT_EQ(fx.launch, std::vector<std::string>{"job-w-2"});
  EXPECT_TRUE(on_node_up(m, "other", {}, c).launch.empty());
}

TEST(JobController, NodeUpDoesNotLaunchPodsWaitingForTheirBatch) {
  auto c = test_clock();
  auto m = new_job(spec_with({{"w", 2}}), "u1", c);
  sync_job(m, c);
  place_all(m, c);  // batch 1: job-w-0; job-w-1 waits until the node has created it
  auto fx = on_node_up(m, "n1", {}, c);
  EXPECT_EQ(fx.launch, std::vector<std::string>{"job-w-0"});
}

TEST(JobController, NodeUpKillsAgainWhatTheControllerHadKilled) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 2}});
  spec.min_success = 1;
  auto m = new_job(spec, "u1", c);
  sync_job(m, c);
  place_all(m, c);
  report(m, "job-w-0", PodPhase::Running, c);
  report(m, "job-w-1", PodPhase::Running, c);
  report(m, "job-w-0", PodPhase::Succeeded, c);  // Completed: job-w-1 is killed
  ASSERT_TRUE(m.pods.at("job-w-1").out_of_sync);
  // The node restarted still running it: the kill may have been lost, so it is sent again.
  auto fx = on_node_up(m, "n1", {m.pods.at("job-w-0").uid, m.pods.at("job-w-1").uid}, c);
  ASSERT_EQ(fx.kill.size(), 1u);
  EXPECT_EQ(fx.kill[0].uid, m.pods.at("job-w-1").uid);
  EXPECT_TRUE(fx.launch.empty());
  // A node without it: the killed pod is over and its resources are free.
  auto gone = on_node_up(m, "n1", {m.pods.at("job-w-0").uid}, c);
  EXPECT_EQ(gone.release, std::vector<std::string>{m.pods.at("job-w-1").uid});
  EXPECT_EQ(m.pods.at("job-w-1").phase, PodPhase::Failed);
  EXPECT_EQ(m.job.status.terminating, 0);
}

TEST(JobController, AnUnschedulableGangShowsWhyWhilePendingAndWritesOnlyChanges) {
  auto c = test_clock();
  auto m = new_job(spec_with({{"w", 2}}), "u1", c);
  sync_job(m, c);
  const std::string why =
      "0/2 pods placed: minAvailable 2 needs cpu 2, the ready nodes have 1 "
      "free (1 in all)";
  auto fx = on_unschedulable(m, why, true, c);
  EXPECT_TRUE(fx.changed);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Pending);
  EXPECT_EQ(m.job.status.state.reason, "Unschedulable");
  EXPECT_EQ(m.job.status.state.message, why);
  EXPECT_EQ(m.job.status.conditions.size(), 1u);  // not a phase change
  EXPECT_EQ(m.job.status.pod_group_phase, "Inqueue");
  auto events = m.job.events.size();
  EXPECT_FALSE(on_unschedulable(m, why, true, c).changed);
  EXPECT_TRUE(on_unschedulable(m, why + ".", true, c).changed);
  // The enqueue action takes its admission back: the same words, its pod group Pending.
  EXPECT_TRUE(on_unschedulable(m, why + ".", false, c).changed);
  EXPECT_EQ(m.job.status.pod_group_phase, "Pending");
  EXPECT_EQ(m.job.events.size(), events);  // one event when it became unschedulable

  // Placed later: the shortfall is gone, and running pods move the job on as usual.
  place_all(m, c);
  EXPECT_EQ(m.job.status.state.reason, "Scheduled");
  report(m, "job-w-0", PodPhase::Running, c);
  report(m, "job-w-1", PodPhase::Running, c);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Running);
  EXPECT_EQ(m.job.status.state.reason, "MinAvailableReached");
  // A late report does not touch a job that is not Pending.
  EXPECT_FALSE(on_unschedulable(m, why, true, c).changed);
  EXPECT_EQ(m.job.status.state.reason, "MinAvailableReached");
}

// Volcano's pod group starts Pending; placed pods mean the enqueue action admitted it, and a
// restart sends it back to be admitted again.
TEST(JobController, APlacedGangsPodGroupIsInqueueThoughItWasNeverUnschedulableUntilARestart) {
  auto c = test_clock();
  auto m = new_job(spec_with({{"w", 2}}), "u1", c);
  sync_job(m, c);
  EXPECT_EQ(m.job.status.pod_group_phase, "");
  place_all(m, c);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Pending);
  EXPECT_EQ(m.job.status.pod_group_phase, "Inqueue");
  // A restart takes its pods away: it waits to be admitted again.
  on_command(m, Action::RestartJob, "", c);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Restarting);
  EXPECT_EQ(m.job.status.pod_group_phase, "");
}

TEST(JobController, PodEnvCarriesTaskIndex) {
  auto spec = spec_with({{"w", 2}});
  Container ct;
  ct.name = "main";
  ct.command = {"true"};
  spec.tasks[0].template_.containers = {ct};
  auto c = test_clock();
  auto m = new_job(spec, "u1", c);
  sync_job(m, c);
  auto rt = pod_runtime(m.job.spec, m.pods.at("job-w-1"));
  ASSERT_TRUE(rt);
  std::map<std::string, std::string> env;
  for (auto& e : rt->containers[0].env) env[e.name] = e.value;
  EXPECT_EQ(env["VK_TASK_INDEX"], "1");
  EXPECT_EQ(env["VC_TASK_INDEX"], "1");
  EXPECT_EQ(rt->requests.get("pods"), 1000);
}

// Three running pods: job-w-0 and job-w-1 on n1, job-w-2 on n2.
JobModel running_on_two_nodes(JobSpec spec, const Clock& c) {
  auto m = new_job(std::move(spec), "u1", c);
  sync_job(m, c);
  on_pods_placed(m,
                 {{m.pods.at("job-w-0").uid, {"n1", "10.0.0.1"}},
                  {m.pods.at("job-w-1").uid, {"n1", "10.0.0.1"}},
                  {m.pods.at("job-w-2").uid, {"n2", "10.0.0.2"}}},
                 c);
  for (auto name : {"job-w-0", "job-w-1", "job-w-2"}) report(m, name, PodPhase::Running, c);
  return m;
}

TEST(JobController, NodeLost_EvictsItsLivePodsSoPodEvictedRestartsTheJob) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 3}});
  spec.policies = {policy(Event::PodEvicted, Action::RestartJob)};
  auto m = running_on_two_nodes(spec, c);
  ASSERT_EQ(m.job.status.state.phase, JobPhase::Running);
  auto fx = on_node_lost(m, "n2", "no heartbeat for 2001ms", c);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Restarting);
  EXPECT_EQ(m.job.status.state.reason, "PodEvicted");
  EXPECT_EQ(m.job.status.retry_count, 1);
  // The gang's other pods are killed on the node that is still there.
  ASSERT_EQ(fx.kill.size(), 2u);
  for (const auto& k : fx.kill) EXPECT_EQ(k.node, "n1");
  EXPECT_TRUE(fx.changed);
}

// A pod its node ended Failed with reason Preempted (the scheduler evicted it for a
// higher-priority gang) is PodEvicted to its job, whatever its exit code: not PodFailed.
TEST(JobController, APreemptedPodIsPodEvictedNotPodFailed) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 3}});
  spec.policies = {policy(Event::PodEvicted, Action::RestartJob),
                   policy(Event::PodFailed, Action::AbortJob)};
  auto m = running_on_two_nodes(spec, c);
  report(m, "job-w-2", PodPhase::Failed, c, 143, "Preempted");
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Restarting);
  EXPECT_EQ(m.job.status.state.reason, "PodEvicted");
}

// The scheduler evicts a pod: one running on its node is killed there with the eviction's
// reason; one placed but not launched yet ends here at once, and its node's reservation goes.
TEST(JobController, AnEvictedPodIsKilledOnItsNodeOrEndsAtOnceIfNotLaunched) {
  auto c = test_clock();
  auto m = running_on_two_nodes(spec_with({{"w", 3}}), c);
  const auto running = m.pods.at("job-w-2").uid;
  auto fx = on_pod_evicted(m, running, "Preempted", "preempted by job default/high", c);
  ASSERT_EQ(fx.kill.size(), 1u);
  EXPECT_EQ(fx.kill[0].uid, running);
  EXPECT_EQ(fx.kill[0].node, "n2");
  EXPECT_EQ(fx.kill[0].evict_reason, "Preempted");
  EXPECT_EQ(m.pods.at("job-w-2").phase, PodPhase::Running);  // until its node says it ended

  auto spec = spec_with({{"w", 2}});
  auto waiting = new_job(spec, "u2", c);
  sync_job(waiting, c);
  place_all(waiting, c);  // slow start sends one pod first: the other waits for its batch
  const auto name = launched(waiting, waiting.pods.at("job-w-0")) ? "job-w-1" : "job-w-0";
  const auto uid = waiting.pods.at(name).uid;
  ASSERT_FALSE(launched(waiting, waiting.pods.at(name)));
  auto ended = on_pod_evicted(waiting, uid, "Reclaimed", "reclaimed for job default/b", c);
  EXPECT_TRUE(ended.kill.empty());
  EXPECT_EQ(waiting.pods.at(name).phase, PodPhase::Failed);
  EXPECT_EQ(waiting.pods.at(name).reason, "Reclaimed");
  ASSERT_EQ(ended.unreserve.size(), 1u);
  EXPECT_EQ(ended.unreserve[0].node, "n1");
  EXPECT_EQ(ended.release, std::vector<std::string>{uid});
  // An unknown or ended pod is left alone.
  EXPECT_TRUE(on_pod_evicted(waiting, uid, "Reclaimed", "again", c).unreserve.empty());
  EXPECT_TRUE(on_pod_evicted(waiting, "nobody", "Reclaimed", "", c).kill.empty());
}

// terminationGracePeriodSeconds: the pod's SIGTERM-to-SIGKILL time on every stop, and what a lost
// node's pods are waited for once its lease is over; a pod that sets none gets 10 s when killed
// and 1 s when its lease runs out.
TEST(JobController, APodIsStoppedWithItsTasksGracePeriod) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 3}});
  spec.tasks.push_back(spec.tasks[0]);
  spec.tasks[1].name = "p";
  spec.tasks[1].replicas = 1;
  spec.tasks[0].template_.termination_grace_seconds = 30;
  auto m = running_job(spec, c);
  const auto& w = m.pods.at("job-w-0");
  const auto& p = m.pods.at("job-p-0");
  auto rw = pod_runtime(m.job.spec, w);
  auto rp = pod_runtime(m.job.spec, p);
  ASSERT_TRUE(rw && rp);
  EXPECT_EQ(rw->grace_ms, 30000);
  EXPECT_EQ(rw->lease_stop_grace_ms, 30000);
  EXPECT_EQ(rp->grace_ms, kPodGraceMs);
  EXPECT_EQ(rp->lease_stop_grace_ms, kLeaseStopGraceMs);
  auto fx = on_pod_evicted(m, w.uid, "Preempted", "preempted by job default/high", c);
  ASSERT_EQ(fx.kill.size(), 1u);
  EXPECT_EQ(fx.kill[0].grace_ms, 30000);
  fx = on_pod_evicted(m, p.uid, "Preempted", "preempted by job default/high", c);
  ASSERT_EQ(fx.kill.size(), 1u);
  EXPECT_EQ(fx.kill[0].grace_ms, kPodGraceMs);

  auto lost = running_job(spec, c);  // every pod on n1
  EXPECT_EQ(lost_pods_stop_ms(lost, "n1"), 30000);
  EXPECT_EQ(lost_pods_stop_ms(lost, "n2"), 0);
  for (auto name : {"job-w-0", "job-w-1", "job-w-2"}) report(lost, name, PodPhase::Succeeded, c);
  EXPECT_EQ(lost_pods_stop_ms(lost, "n1"), kLeaseStopGraceMs) << "only job-p-0 runs there now";
  report(lost, "job-p-0", PodPhase::Succeeded, c);
  EXPECT_EQ(lost_pods_stop_ms(lost, "n1"), 0);
}

TEST(JobController, NodeLost_FailsOnlyTheLivePodsOfThatNodeWithReasonNodeLost) {
  auto c = test_clock();
  auto m = running_on_two_nodes(spec_with({{"w", 3}}), c);
  report(m, "job-w-0", PodPhase::Succeeded, c);
  auto fx = on_node_lost(m, "n1", "connection lost", c);
  const auto& lost = m.pods.at("job-w-1");
  EXPECT_EQ(lost.phase, PodPhase::Failed);
  EXPECT_EQ(lost.reason, "NodeLost");
  EXPECT_NE(lost.message.find("node n1 which was running pod job-w-1 is unresponsive"),
            std::string::npos)
      << lost.message;
  EXPECT_EQ(lost.containers.at(0).state, ContainerState::Terminated);
  EXPECT_EQ(m.pods.at("job-w-0").phase, PodPhase::Succeeded) << "an ended pod stays as it ended";
  EXPECT_EQ(m.pods.at("job-w-2").phase, PodPhase::Running) << "another node's pod runs on";
  EXPECT_EQ(fx.release, std::vector<std::string>{lost.uid});
  EXPECT_TRUE(on_node_lost(m, "n3", "connection lost", c).kill.empty());
}

TEST(JobController, AnEvictedPodThatItsReturningNodeStillRunsIsKilled) {
  auto c = test_clock();
  auto m = running_on_two_nodes(spec_with({{"w", 3}}), c);
  on_node_lost(m, "n2", "no heartbeat", c);
  ASSERT_EQ(m.pods.at("job-w-2").phase, PodPhase::Failed);
  // The node is back and reports the pod it kept running meanwhile.
  Pod still = m.pods.at("job-w-2");
  still.phase = PodPhase::Running;
  still.reason.clear();
  auto fx = on_pod_report(m, still, c);
  ASSERT_EQ(fx.kill.size(), 1u);
  EXPECT_EQ(fx.kill[0].uid, still.uid);
  EXPECT_EQ(fx.kill[0].node, "n2");
  EXPECT_EQ(m.pods.at("job-w-2").phase, PodPhase::Failed) << "the eviction stands";
}

TEST(JobController, NodeLost_ARunningGangBelowItsMinimumRaisesUnknownForItsPolicies) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 3}});
  spec.min_available = 3;
  spec.policies = {policy(Event::JobUnknown, Action::RestartJob)};
  auto m = running_on_two_nodes(spec, c);
  ASSERT_EQ(m.job.status.state.phase, JobPhase::Running);
  on_node_lost(m, "n2", "no heartbeat", c);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Restarting);
  EXPECT_EQ(m.job.status.state.reason, "Unknown");
  EXPECT_EQ(m.job.status.retry_count, 1);
}

TEST(JobController, NodeLost_AGangStillAtItsMinimumRaisesNoUnknown) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 3}});
  spec.min_available = 2;
  spec.policies = {policy(Event::JobUnknown, Action::RestartJob)};
  auto m = running_on_two_nodes(spec, c);
  on_node_lost(m, "n2", "no heartbeat", c);
  EXPECT_EQ(m.job.status.state.phase, JobPhase::Running) << "two of three still run";
}

// A node's numbered report, as its outbox sends it (again after a reconnect or a resend).
Pod numbered(const JobModel& m, const std::string& name, PodPhase phase, uint64_t seq,
             std::vector<ContainerStatus> containers) {
  Pod r = m.pods.at(name);
  r.phase = phase;
  r.status_seq = seq;
  r.containers = std::move(containers);
  return r;
}

ContainerStatus container(const std::string& name, ContainerState state, int32_t exit_code = 0) {
  ContainerStatus c;
  c.name = name;
  c.state = state;
  c.exit_code = exit_code;
  return c;
}

TEST(JobController, PodReport_ARepeatOfAnAppliedStatusChangesNothing) {
  auto c = test_clock();
  auto m = pending_job(spec_with({{"w", 2}}), c);
  place_all(m, c);
  auto running =
      numbered(m, "job-w-0", PodPhase::Running, 1, {container("main", ContainerState::Running)});
  EXPECT_TRUE(on_pod_report(m, running, c).changed);
  EXPECT_EQ(m.pods.at("job-w-0").status_seq, 1u);
  auto events = m.job.events.size();
  auto again = on_pod_report(m, running, c);
  EXPECT_FALSE(again.changed);
  EXPECT_TRUE(again.kill.empty());
  EXPECT_EQ(m.job.events.size(), events);
}

TEST(JobController, PodReport_AnOlderStatusDoesNotTakeThePodBack) {
  auto c = test_clock();
  auto m = pending_job(spec_with({{"w", 1}}), c);
  place_all(m, c);
  // Two containers: the first one ends, then a reordered report says both still run.
  auto both =
      numbered(m, "job-w-0", PodPhase::Running, 1,
               {container("a", ContainerState::Running), container("b", ContainerState::Running)});
  auto one_done = numbered(
      m, "job-w-0", PodPhase::Running, 2,
      {container("a", ContainerState::Terminated), container("b", ContainerState::Running)});
  on_pod_report(m, one_done, c);
  auto fx = on_pod_report(m, both, c);
  EXPECT_FALSE(fx.changed);
  EXPECT_EQ(m.pods.at("job-w-0").containers.at(0).state, ContainerState::Terminated);
  EXPECT_EQ(m.pods.at("job-w-0").status_seq, 2u);
}

TEST(JobController, NodeLost_AnEvictedPodItsNodeReportsWithTheSameNumberIsStillKilled) {
  auto c = test_clock();
  auto m = pending_job(spec_with({{"w", 1}}), c);
  place_all(m, c);
  auto running =
      numbered(m, "job-w-0", PodPhase::Running, 3, {container("main", ContainerState::Running)});
  on_pod_report(m, running, c);
  on_node_lost(m, "n1", "no heartbeat", c);
  ASSERT_EQ(m.pods.at("job-w-0").phase, PodPhase::Failed);
  // The node returns; the pod ran on unchanged, so its status keeps the number 3.
  auto fx = on_pod_report(m, running, c);
  ASSERT_EQ(fx.kill.size(), 1u);
  EXPECT_EQ(fx.kill[0].uid, running.uid);
}

}  // namespace
}  // namespace caldera
