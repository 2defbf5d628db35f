// How a flow records its jobs (jobStatusList histories, conditions) and how it makes and
// recognises its jobs (names, owner marks, the template read at creation).
#include <gtest/gtest.h>

#include "actors/jobflow/core/flow_job.hpp"
#include "actors/jobflow/core/flow_status.hpp"

namespace caldera {
namespace {

using P = JobPhase;

TEST(FlowStatus, ALineIsMadeOnceAndEachPhaseOpensAHistory) {
  JobFlowStatus s;
  auto& line = job_status_line(s, "f-a", "u1", 100);
  EXPECT_TRUE(observe_phase(line, P::Pending, 100));
  EXPECT_FALSE(observe_phase(line, P::Pending, 150));  // no change: no new history
  EXPECT_TRUE(observe_phase(line, P::Running, 200));
  EXPECT_TRUE(observe_phase(line, P::Completed, 900));
  ASSERT_EQ(s.job_status_list.size(), 1u);
  const auto& l = s.job_status_list[0];
  EXPECT_EQ(l.state, "Completed");
  EXPECT_EQ(l.start_ms, 100);
  EXPECT_EQ(l.end_ms, 900);
  EXPECT_EQ(l.running_histories,
            (std::vector<JobRunningHistory>{
                {"Pending", 100, 200}, {"Running", 200, 900}, {"Completed", 900, 0}}));
  // The same job again finds the same line.
  EXPECT_EQ(&job_status_line(s, "f-a", "u1", 100), &s.job_status_list[0]);
}

TEST(FlowStatus, AJobCreatedAgainKeepsItsHistoriesAndCountsARestart) {
  JobFlowStatus s;
  auto& line = job_status_line(s, "f-a", "u1", 100);
  observe_phase(line, P::Running, 100);
  observe_phase(line, P::Failed, 300);
  auto& again = job_status_line(s, "f-a", "u2", 400);
  EXPECT_EQ(again.restart_count, 1);
  EXPECT_EQ(again.uid, "u2");
  EXPECT_EQ(again.start_ms, 400);
  EXPECT_EQ(again.end_ms, 0);
  EXPECT_TRUE(again.state.empty());
  observe_phase(again, P::Pending, 400);
  ASSERT_EQ(again.running_histories.size(), 3u);
  EXPECT_EQ(again.running_histories[1], (JobRunningHistory{"Failed", 300, 400}));
  EXPECT_EQ(again.running_histories[2], (JobRunningHistory{"Pending", 400, 0}));
}

TEST(FlowStatus, ConditionIsTheJobsPhaseCountsAndDuration) {
  JobStatus js;
  js.state.phase = P::Running;
  js.running_duration_ms = 1500;
  js.task_status_count["main"] = {0, 2, 1, 0, 0};
  auto c = condition_of(js, 42);
  EXPECT_EQ(c.phase, "Running");
  EXPECT_EQ(c.create_ms, 42);
  EXPECT_EQ(c.running_duration_ms, 1500);
  EXPECT_EQ(c.task_status_count.at("main").running, 2);
}

JobFlow sample_flow() {
  JobFlow f;
  f.uid = "flow-uid";
  f.spec.name = "ml";
  f.spec.namespace_ = "team";
  f.spec.flows = {Flow{"prep", std::nullopt}, Flow{"train", FlowDependsOn{{"prep"}}}};
  return f;
}

TEST(FlowJob, TheJobIsTheTemplateNamedAfterTheFlowAndMarked) {
  JobTemplate t;
  t.spec.name = "train";
  t.spec.namespace_ = "team";
  t.spec.labels["owner"] = "me";
  t.spec.queue = "gpu";
  auto made = flow_job_spec(sample_flow(), "train", t);
  ASSERT_TRUE(made) << made.error();
  auto spec = *made;
  EXPECT_EQ(spec.name, "ml-train");
  EXPECT_EQ(spec.namespace_, "team");
  EXPECT_EQ(spec.queue, "gpu");
  EXPECT_EQ(spec.labels.at("owner"), "me");
  EXPECT_EQ(spec.labels.at(kCreatedByJobFlow), "team.ml");
  EXPECT_EQ(spec.labels.at(kCreatedByJobTemplate), "team.train");
  EXPECT_EQ(spec.annotations.at(kCreatedByJobFlow), "team.ml");
  EXPECT_EQ(spec.annotations.at(kJobFlowUid), "flow-uid");
}

TEST(FlowJob, OwnershipIsTheFlowsKeyAndUid) {
  JobTemplate t;
  t.spec.name = "train";
  auto flow = sample_flow();
  auto spec = *flow_job_spec(flow, "train", t);
  EXPECT_EQ(owner_flow_key(spec), "team/ml");
  EXPECT_TRUE(created_by(spec, flow));
  auto successor = flow;
  successor.uid = "another";  // deleted and submitted again
  EXPECT_FALSE(created_by(spec, successor));
  JobSpec plain;
  EXPECT_EQ(owner_flow_key(plain), std::nullopt);
  EXPECT_FALSE(created_by(plain, flow));
  plain.labels[kCreatedByJobFlow] = "nodot";
  EXPECT_EQ(owner_flow_key(plain), std::nullopt);
}

TEST(FlowJob, EntryOfJobIsFoundByItsName) {
  auto flow = sample_flow();
  const auto entries = job_entries(flow.spec);
  EXPECT_EQ(entries.at("ml-train"), "train");
  EXPECT_EQ(entries.count("ml-other"), 0u);
  EXPECT_EQ(entries.count("train"), 0u);
}

JobTemplate trainer() {
  JobTemplate t;
  t.spec.name = "train";
  t.spec.namespace_ = "team";
  t.spec.min_available = 2;
  TaskSpec task;
  task.name = "worker";
  task.replicas = 2;
  Container c;
  c.name = "main";
  c.command = {"python", "train.py"};
  c.env = {{"LR", "0.1"}, {"EPOCHS", "3"}};
  c.requests.values["cpu"] = 1000;
  task.template_.containers = {c};
  task.template_.annotations["keep"] = "yes";
  t.spec.tasks = {task};
  return t;
}

TEST(FlowPatch, ReplicasCommandEnvAndResourcesAreAppliedOverTheTemplate) {
  JobSpec patch;
  patch.queue.clear();
  patch.min_available = 4;
  TaskSpec pt;
  pt.name = "worker";
  pt.replicas = 4;
  Container pc;
  pc.name = "main";
  pc.command = {"python", "train2.py"};
  pc.env = {{"LR", "0.01"}, {"SEED", "7"}};
  pc.requests.values["memory"] = 1 << 20;
  pt.template_.containers = {pc};
  pt.template_.annotations["caldera.io/sim-duration-ms"] = "0";
  patch.tasks = {pt};
  auto flow = sample_flow();
  flow.spec.flows[1].patch = patch;
  auto made = flow_job_spec(flow, "train", trainer());
  ASSERT_TRUE(made) << made.error();
  const auto& task = made->tasks.at(0);
  EXPECT_EQ(made->min_available, 4);
  EXPECT_EQ(made->queue, "default");  // not named by the patch: the template's
  EXPECT_EQ(task.replicas, 4);
  const auto& c = task.template_.containers.at(0);
  EXPECT_EQ(c.command, (std::vector<std::string>{"python", "train2.py"}));
  EXPECT_EQ(c.env, (std::vector<EnvVar>{{"LR", "0.01"}, {"EPOCHS", "3"}, {"SEED", "7"}}));
  EXPECT_EQ(c.requests.values.at("cpu"), 1000);
  EXPECT_EQ(c.requests.values.at("memory"), 1 << 20);
  EXPECT_EQ(task.template_.annotations.at("keep"), "yes");
  EXPECT_EQ(task.template_.annotations.at("caldera.io/sim-duration-ms"), "0");
  EXPECT_EQ(made->name, "ml-train");
}

TEST(FlowPatch, WhatThePatchLeavesUnsetStays) {
  JobSpec patch;
  patch.queue.clear();
  TaskSpec pt;
  pt.name = "worker";  // replicas 0: keep
  patch.tasks = {pt};
  auto patched = apply_patch(trainer().spec, patch);
  ASSERT_TRUE(patched) << patched.error();
  EXPECT_EQ(*patched, trainer().spec);
}

TEST(FlowPatch, AnUnknownTaskOrContainerIsAnError) {
  JobSpec patch;
  TaskSpec pt;
  pt.name = "ps";
  patch.tasks = {pt};
  auto r = apply_patch(trainer().spec, patch);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "patch.spec.tasks[0].name: the JobTemplate has no task \"ps\"");
  pt.name = "worker";
  Container pc;
  pc.name = "sidecar";
  pt.template_.containers = {pc};
  patch.tasks = {pt};
  r = apply_patch(trainer().spec, patch);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(),
            "patch.spec.tasks[0].template.spec.containers[0].name: task worker has no container "
            "\"sidecar\"");
}

TEST(FlowPatch, OnlyTheEntryWithThePatchIsPatched) {
  JobSpec patch;
  patch.queue = "fast";
  auto flow = sample_flow();
  flow.spec.flows[1].patch = patch;  // "train"
  auto t = trainer();
  EXPECT_EQ(flow_job_spec(flow, "train", t)->queue, "fast");
  EXPECT_EQ(flow_job_spec(flow, "prep", t)->queue, "default");
}

}  // namespace
}  // namespace caldera
