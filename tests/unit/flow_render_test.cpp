// What the CLI prints for JobTemplates and JobFlows: Volcano-shaped JSON and kubectl tables.
#include <gtest/gtest.h>

#include "client/render.hpp"

namespace caldera {
namespace {

constexpr int64_t kCreated = 1700000000000;
constexpr int64_t kNow = kCreated + 10 * 60 * 1000;

JobTemplate sample_template(const std::string& name, int tasks) {
  JobTemplate t;
  t.uid = "uid-" + name;
  t.created_ms = kCreated;
  t.spec.name = name;
  t.spec.namespace_ = "ml";
  t.spec.annotations = {{"owner", "bob"}};
  for (int i = 0; i < tasks; ++i) {
    TaskSpec task;
    task.name = "t" + std::to_string(i);
    task.replicas = 2;
    task.template_.containers = {Container{"main", "", {"echo"}, {}, {}, "", {}, {}}};
    t.spec.tasks.push_back(task);
  }
  return t;
}

JobFlow sample_flow() {
  JobFlow f;
  f.uid = "flow-uid";
  f.created_ms = kCreated;
  f.spec.name = "pipeline";
  f.spec.labels = {{"app", "demo"}};
  f.spec.flows = {{"prepare", std::nullopt}, {"train", FlowDependsOn{{"prepare"}}}};
  return f;
}

TEST(FlowRender, TemplateJsonHasTheJobSpec) {
  JobTemplate t = sample_template("train", 1);
  auto j = template_to_json(t);
  EXPECT_EQ(j["apiVersion"], "flow.volcano.sh/v1alpha1");
  EXPECT_EQ(j["kind"], "JobTemplate");
  EXPECT_EQ(j["metadata"]["name"], "train");
  EXPECT_EQ(j["metadata"]["namespace"], "ml");
  EXPECT_EQ(j["metadata"]["uid"], "uid-train");
  EXPECT_EQ(j["metadata"]["creationTimestamp"], "2023-11-14T22:13:20Z");
  EXPECT_EQ(j["metadata"]["annotations"]["owner"], "bob");
  EXPECT_FALSE(j["metadata"].contains("labels"));
  // The very spec a Job of the same spec shows.
  Job job{"uid-train", kCreated, t.spec, {}, {}};
  EXPECT_EQ(j["spec"], job_to_json(job)["spec"]);
  EXPECT_EQ(j["spec"]["tasks"][0]["replicas"], 2);
  EXPECT_FALSE(j.contains("status"));
}

TEST(FlowRender, FlowJsonUsesVolcanoNames) {
  JobFlow f = sample_flow();
  auto j = flow_to_json(f);
  EXPECT_EQ(j["apiVersion"], "flow.volcano.sh/v1alpha1");
  EXPECT_EQ(j["kind"], "JobFlow");
  EXPECT_EQ(j["metadata"]["name"], "pipeline");
  EXPECT_EQ(j["metadata"]["namespace"], "default");
  EXPECT_EQ(j["metadata"]["labels"]["app"], "demo");
  EXPECT_EQ(j["spec"]["jobRetainPolicy"], "retain");
  ASSERT_EQ(j["spec"]["flows"].size(), 2u);
  EXPECT_EQ(j["spec"]["flows"][0], (nlohmann::json{{"name", "prepare"}}));
  EXPECT_EQ(j["spec"]["flows"][1]["dependsOn"]["targets"], (nlohmann::json{"prepare"}));
  EXPECT_EQ(j["status"], (nlohmann::json{{"state", {{"phase", "Pending"}}}}));

  f.status.phase = "Running";
  f.status.running_jobs = {"pipeline-train"};
  f.status.completed_jobs = {"pipeline-prepare"};
  f.status.unknown_jobs = {"pipeline-x"};
  auto s = flow_to_json(f)["status"];
  EXPECT_EQ(s["state"]["phase"], "Running");
  EXPECT_EQ(s["runningJobs"], (nlohmann::json{"pipeline-train"}));
  EXPECT_EQ(s["completedJobs"], (nlohmann::json{"pipeline-prepare"}));
  EXPECT_EQ(s["unKnowJobs"], (nlohmann::json{"pipeline-x"}));
  EXPECT_FALSE(s.contains("pendingJobs"));
  EXPECT_FALSE(s.contains("failedJobs"));
}

TEST(FlowRender, TemplatesTable) {
  auto a = sample_template("prepare", 1);
  auto b = sample_template("a-longer-template", 3);
  b.created_ms = kNow - 3 * 3600 * 1000;
  EXPECT_EQ(templates_table({a, b}, false, kNow),
            "NAME                AGE\n"
            "prepare             10m\n"
            "a-longer-template   3h\n");
  EXPECT_EQ(templates_table({a, b}, true, kNow),
            "NAME                AGE   TASKS   REPLICAS\n"
            "prepare             10m   1       2\n"
            "a-longer-template   3h    3       6\n");
  EXPECT_EQ(templates_table({}, false, kNow), "No resources found.");
}

TEST(FlowRender, FlowsTable) {
  auto f = sample_flow();
  auto g = sample_flow();
  g.spec.name = "other";
  g.spec.job_retain_policy = "delete";
  g.status.phase = "Succeed";
  EXPECT_EQ(flows_table({f, g}, false, kNow),
            "NAME       STATUS    AGE\n"
            "pipeline   Pending   10m\n"
            "other      Succeed   10m\n");
  EXPECT_EQ(flows_table({f, g}, true, kNow),
            "NAME       STATUS    AGE   FLOWS   RETAIN\n"
            "pipeline   Pending   10m   2       retain\n"
            "other      Succeed   10m   2       delete\n");
  EXPECT_EQ(flows_table({}, true, kNow), "No resources found.");
}

TEST(FlowRender, FlowYamlLooksLikeKubectl) {
  auto y = to_yaml(flow_to_json(sample_flow()));
  EXPECT_NE(y.find("kind: JobFlow\n"), std::string::npos) << y;
  EXPECT_NE(y.find("  - dependsOn:\n      targets:\n      - prepare\n    name: train\n"),
            std::string::npos)
      << y;
}

}  // namespace
}  // namespace caldera
