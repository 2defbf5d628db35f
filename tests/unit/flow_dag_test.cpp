// The JobFlow DAG core: which entries' jobs are due (seed 002, 5.3-5.4), the status lists, and
// each arrow of the flow phase diagram (seed 002, 4.2), with the Terminated fix (volcano#4134).
#include "actors/jobflow/core/dag.hpp"

#include <gtest/gtest.h>

namespace caldera {
namespace {

using P = JobPhase;

Flow flow(const std::string& name, std::vector<std::string> targets = {}) {
  Flow f;
  f.name = name;
  if (!targets.empty()) f.depends_on = FlowDependsOn{std::move(targets)};
  return f;
}

// Seed 002's example: A and B first, C after both, D after C, E after A.
JobFlowSpec example() {
  JobFlowSpec s;
  s.name = "ml";
  s.flows = {flow("a"), flow("b"), flow("c", {"a", "b"}), flow("d", {"c"}), flow("e", {"a"})};
  return s;
}

TEST(FlowDag, EntriesWithoutDependenciesAreDueAtOnce) {
  EXPECT_EQ(due_flows(example(), {}), (std::vector<std::string>{"a", "b"}));
}

TEST(FlowDag, AnEntryIsDueOnlyOnceEveryTargetCompleted) {
  auto s = example();
  EXPECT_EQ(due_flows(s, {{"a", P::Completed}, {"b", P::Running}}),
            (std::vector<std::string>{"e"}));
  EXPECT_EQ(due_flows(s, {{"a", P::Completed}, {"b", P::Completed}, {"e", P::Running}}),
            (std::vector<std::string>{"c"}));
  EXPECT_EQ(
      due_flows(
          s, {{"a", P::Completed}, {"b", P::Completed}, {"c", P::Completed}, {"e", P::Completed}}),
      (std::vector<std::string>{"d"}));
}

TEST(FlowDag, AJobThatExistsIsNeverDueAgain) {
  auto s = example();
  EXPECT_TRUE(due_flows(s, {{"a", P::Failed},
                            {"b", P::Completed},
                            {"c", P::Completed},
                            {"d", P::Running},
                            {"e", P::Pending}})
                  .empty());
}

TEST(FlowDag, NothingDownstreamOfAFailedOrTerminatedJobIsEverDue) {
  auto s = example();
  EXPECT_EQ(due_flows(s, {{"a", P::Failed}, {"b", P::Completed}}), (std::vector<std::string>{}));
  EXPECT_EQ(due_flows(s, {{"a", P::Completed}, {"b", P::Terminated}}),
            (std::vector<std::string>{"e"}));
}

TEST(FlowDag, EachJobIsListedUnderItsPhase) {
  JobFlowStatus st;
  st.unknown_jobs = {"stale"};
  fill_job_lists(example(),
                 {{"a", P::Completed},
                  {"b", P::Failed},
                  {"c", P::Running},
                  {"d", P::Restarting},
                  {"e", P::Terminated}},
                 st);
  EXPECT_EQ(st.completed_jobs, std::vector<std::string>{"ml-a"});
  EXPECT_EQ(st.failed_jobs, std::vector<std::string>{"ml-b"});
  EXPECT_EQ(st.running_jobs, std::vector<std::string>{"ml-c"});
  EXPECT_EQ(st.unknown_jobs, std::vector<std::string>{"ml-d"});
  EXPECT_EQ(st.terminated_jobs, std::vector<std::string>{"ml-e"});
  EXPECT_TRUE(st.pending_jobs.empty());
}

TEST(FlowDag, Pending_to_Running_WhenAJobRunsAndNoneFailed) {
  EXPECT_EQ(next_phase(FlowPhase::Pending, example(), {{"a", P::Running}, {"b", P::Pending}}),
            FlowPhase::Running);
  EXPECT_EQ(next_phase(FlowPhase::Pending, example(), {{"a", P::Completed}}), FlowPhase::Running);
}

TEST(FlowDag, Pending_StaysWhileEveryJobIsPending) {
  EXPECT_EQ(next_phase(FlowPhase::Pending, example(), {{"a", P::Pending}, {"b", P::Pending}}),
            FlowPhase::Pending);
  EXPECT_EQ(next_phase(FlowPhase::Pending, example(), {}), FlowPhase::Pending);
}

TEST(FlowDag, Pending_to_Failed_WhenAJobFailedOrWasTerminated) {
  EXPECT_EQ(next_phase(FlowPhase::Pending, example(), {{"a", P::Running}, {"b", P::Failed}}),
            FlowPhase::Failed);
  EXPECT_EQ(next_phase(FlowPhase::Pending, example(), {{"a", P::Terminated}}), FlowPhase::Failed);
}

TEST(FlowDag, Running_to_Succeed_WhenEveryEntrysJobCompleted) {
  FlowJobs all;
  for (const auto& f : example().flows) all[f.name] = P::Completed;
  EXPECT_EQ(next_phase(FlowPhase::Running, example(), all), FlowPhase::Succeed);
  all.erase("d");
  EXPECT_EQ(next_phase(FlowPhase::Running, example(), all), FlowPhase::Running)
      << "d is not even created yet";
}

TEST(FlowDag, Running_to_Failed_WhenAJobFailed) {
  EXPECT_EQ(next_phase(FlowPhase::Running, example(), {{"a", P::Completed}, {"b", P::Failed}}),
            FlowPhase::Failed);
}

TEST(FlowDag, Running_to_Failed_WhenAJobWasTerminated) {
  // Volcano leaves such a flow Running for good (volcano#4134, #4442).
  EXPECT_EQ(next_phase(FlowPhase::Running, example(), {{"a", P::Completed}, {"b", P::Terminated}}),
            FlowPhase::Failed);
}

TEST(FlowDag, Pending_to_Succeed_InOneLookWhenEverythingCompletedBetweenTwo) {
  FlowJobs all;
  for (const auto& f : example().flows) all[f.name] = P::Completed;
  EXPECT_EQ(next_phase(FlowPhase::Pending, example(), all), FlowPhase::Succeed);
}

TEST(FlowDag, SucceedFailedAndTerminatingAreFinal) {
  FlowJobs running{{"a", P::Running}};
  for (auto p : {FlowPhase::Succeed, FlowPhase::Failed, FlowPhase::Terminating})
    EXPECT_EQ(next_phase(p, example(), running), p) << to_string(p);
}

TEST(FlowDag, PhaseNamesRoundTrip) {
  for (auto p : {FlowPhase::Pending, FlowPhase::Running, FlowPhase::Succeed, FlowPhase::Failed,
                 FlowPhase::Terminating})
    EXPECT_EQ(parse_flow_phase(to_string(p)), p);
  EXPECT_FALSE(parse_flow_phase("Completed"));
}

// ---- retry ----

JobFlowSpec with_retry(int32_t retry) {
  auto s = example();
  s.flows[0].retry = retry;  // "a"
  return s;
}

TEST(FlowDag, RetryIsDueForAFailedJobWhileRetriesAreLeft) {
  auto s = with_retry(2);
  FlowJobs jobs{{"a", P::Failed}, {"b", P::Running}};
  EXPECT_EQ(retry_due(s, jobs, {}), (std::vector<std::string>{"a"}));
  EXPECT_EQ(retry_due(s, jobs, {{"a", 1}}), (std::vector<std::string>{"a"}));
  EXPECT_TRUE(retry_due(s, jobs, {{"a", 2}}).empty());
}

TEST(FlowDag, RetryIsNeverDueWithoutRetryOrForOtherPhases) {
  EXPECT_TRUE(retry_due(example(), {{"a", P::Failed}}, {}).empty());
  auto s = with_retry(3);
  for (auto p : {P::Pending, P::Running, P::Completed, P::Terminated, P::Aborted})
    EXPECT_TRUE(retry_due(s, {{"a", p}}, {}).empty()) << to_string(p);
}

TEST(FlowDag, AJobAboutToBeRetriedNeitherFailsTheFlowNorCounts) {
  auto s = with_retry(1);
  FlowJobs jobs{{"a", P::Failed}, {"b", P::Completed}};
  auto judged = judged_jobs(s, jobs, {});
  EXPECT_EQ(judged, (FlowJobs{{"b", P::Completed}}));
  EXPECT_EQ(next_phase(FlowPhase::Running, s, judged), FlowPhase::Running);
  EXPECT_EQ(due_flows(s, judged), (std::vector<std::string>{"a"}));
  // Once the retries are spent, the failure counts.
  auto spent = judged_jobs(s, jobs, {{"a", 1}});
  EXPECT_EQ(next_phase(FlowPhase::Running, s, spent), FlowPhase::Failed);
  EXPECT_EQ(failed_entry(s, spent), "a");
}

TEST(FlowDag, FailedEntryIsTheFirstFailedOrTerminatedInSpecOrder) {
  EXPECT_EQ(failed_entry(example(), {{"a", P::Completed}, {"b", P::Running}}), std::nullopt);
  EXPECT_EQ(failed_entry(example(), {{"e", P::Failed}, {"b", P::Terminated}}), "b");
}

// ---- probe ----

JobFlowSpec probed(const std::string& phase) {
  JobFlowSpec s;
  s.name = "p";
  s.flows = {flow("server"), flow("client", {"server"})};
  s.flows[1].depends_on->probe = {{"main", phase}};
  return s;
}

TEST(FlowDag, ProbeRunningLetsADependentStartOnceAPodOfTheTaskRuns) {
  auto s = probed("Running");
  FlowJobs jobs{{"server", P::Running}};
  EXPECT_TRUE(due_flows(s, jobs, {{"server", {{"main", {1, 0, 0, 0, 0}}}}}).empty());
  EXPECT_EQ(due_flows(s, jobs, {{"server", {{"main", {0, 1, 0, 0, 0}}}}}),
            (std::vector<std::string>{"client"}));
  // A pod that ran and succeeded since has reached Running too.
  EXPECT_EQ(due_flows(s, jobs, {{"server", {{"main", {0, 0, 1, 0, 0}}}}}),
            (std::vector<std::string>{"client"}));
  // Another task's pods do not count; no counts at all is not reached.
  EXPECT_TRUE(due_flows(s, jobs, {{"server", {{"other", {0, 1, 0, 0, 0}}}}}).empty());
  EXPECT_TRUE(due_flows(s, jobs, {}).empty());
}

TEST(FlowDag, ProbeSucceededWaitsForASucceededPod) {
  auto s = probed("Succeeded");
  FlowJobs jobs{{"server", P::Running}};
  EXPECT_TRUE(due_flows(s, jobs, {{"server", {{"main", {0, 2, 0, 0, 0}}}}}).empty());
  EXPECT_EQ(due_flows(s, jobs, {{"server", {{"main", {0, 1, 1, 0, 0}}}}}),
            (std::vector<std::string>{"client"}));
}

TEST(FlowDag, ProbeNeverReachesAFailedTargetButCompletedAlwaysCounts) {
  auto s = probed("Running");
  FlowTasks running{{"server", {{"main", {0, 1, 0, 0, 0}}}}};
  EXPECT_TRUE(due_flows(s, {{"server", P::Failed}}, running).empty());
  EXPECT_EQ(due_flows(s, {{"server", P::Completed}}, {}), (std::vector<std::string>{"client"}));
}

TEST(FlowDag, WithoutAProbeTaskCountsDoNotMatter) {
  JobFlowSpec s;
  s.name = "p";
  s.flows = {flow("server"), flow("client", {"server"})};
  EXPECT_TRUE(
      due_flows(s, {{"server", P::Running}}, {{"server", {{"main", {0, 1, 0, 0, 0}}}}}).empty());
}

JobFlowSpec endpoint_probed() {
  JobFlowSpec s;
  s.name = "p";
  s.flows = {flow("server"), flow("client", {"server"}), flow("other", {"server"})};
  s.flows[1].depends_on->http_get = {{"web", "/ready", 8080, "", ""}};
  return s;
}

TEST(FlowDag, AnEndpointProbeIsWantedWhileItsTargetRunsAndUntilItPasses) {
  auto s = endpoint_probed();
  EXPECT_TRUE(endpoint_probes_wanted(s, {{"server", P::Pending}}, {}, {}).empty())
      << "a target that does not run has no endpoint to probe yet";
  const FlowJobs running{{"server", P::Running}};
  EXPECT_EQ(endpoint_probes_wanted(s, running, {}, {}),
            (std::vector<ProbeWanted>{{"client", "server"}}))
      << "only the entry that probes: `other` waits for completion";
  EXPECT_TRUE(due_flows(s, running, {}, {}).empty());
  const FlowAnswers answered{{"client", {"server"}}};
  EXPECT_EQ(due_flows(s, running, {}, answered), (std::vector<std::string>{"client"}));
  EXPECT_TRUE(endpoint_probes_wanted(s, running, {}, answered).empty());
  // An answer speaks for the entry whose probe it was, not for another entry on the same target.
  EXPECT_EQ(due_flows(s, running, {}, {{"other", {"server"}}}), (std::vector<std::string>{}));
  // Once the client's job exists, nothing more is probed for it.
  EXPECT_TRUE(
      endpoint_probes_wanted(s, {{"server", P::Running}, {"client", P::Pending}}, {}, {}).empty());
}

TEST(FlowDag, AnEndpointAnswerNeverReachesAFailedTarget) {
  auto s = endpoint_probed();
  const FlowAnswers answered{{"client", {"server"}}};
  EXPECT_TRUE(due_flows(s, {{"server", P::Failed}}, {}, answered).empty());
  EXPECT_TRUE(endpoint_probes_wanted(s, {{"server", P::Failed}}, {}, {}).empty());
}

TEST(FlowDag, AnyOneProbeWillDoATaskStatusBesideAnEndpoint) {
  auto s = endpoint_probed();
  s.flows[1].depends_on->probe = {{"web", "Succeeded"}};
  const FlowJobs running{{"server", P::Running}};
  const FlowTasks succeeded{{"server", {{"web", {0, 0, 1, 0, 0}}}}};
  EXPECT_EQ(due_flows(s, running, succeeded, {}), (std::vector<std::string>{"client"}));
  EXPECT_TRUE(endpoint_probes_wanted(s, running, succeeded, {}).empty())
      << "reached already: no endpoint is probed";
}

}  // namespace
}  // namespace caldera
