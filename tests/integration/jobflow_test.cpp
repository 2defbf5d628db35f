// JobTemplates and JobFlows on a real node: submitted, listed, shown, kept across kill -9,
// rejected whole when any document is bad, and deleted.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "client/client.hpp"
#include "node_test.hpp"

namespace caldera::testing {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

class JobFlows : public NodeTest {
 protected:
  void submit_example() {
    auto r = node.cli({"submit", "-f", source_path("examples/flow.yaml")});
    ASSERT_EQ(r.exit_code, 0) << r.err << node.log();
    EXPECT_EQ(r.out,
              "jobtemplate.flow.volcano.sh/prepare created\n"
              "jobtemplate.flow.volcano.sh/train created\n"
              "jobflow.flow.volcano.sh/flow-demo created\n");
    EXPECT_EQ(r.err, "");
  }
};

constexpr const char* kTemplateA = R"(apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: a}
spec:
  tasks:
    - name: main
      replicas: 1
      template: {spec: {containers: [{name: main, command: [echo, a]}]}}
)";

TEST_F(JobFlows, ExampleIsStoredListedAndShown) {
  submit_example();

  auto templates = node.cli({"get", "jobtemplates"});
  ASSERT_EQ(templates.exit_code, 0) << templates.err;
  EXPECT_EQ(templates.out.substr(0, templates.out.find('\n')), "NAME      AGE");
  EXPECT_NE(templates.out.find("\nprepare   "), std::string::npos) << templates.out;
  EXPECT_NE(templates.out.find("\ntrain     "), std::string::npos) << templates.out;
  auto wide = node.cli({"get", "jobtemplates", "-o", "wide"});
  EXPECT_NE(wide.out.find("TASKS   REPLICAS"), std::string::npos) << wide.out;

  auto flows = node.cli({"get", "jobflows"});
  ASSERT_EQ(flows.exit_code, 0) << flows.err;
  EXPECT_NE(flows.out.find("NAME        STATUS    AGE\nflow-demo   "), std::string::npos)
      << flows.out;

  auto list = get_json({"get", "jobtemplates"});
  ASSERT_EQ(list["items"].size(), 2u) << list;
  EXPECT_EQ(list["items"][0]["kind"], "JobTemplate");
  EXPECT_EQ(list["items"][0]["apiVersion"], "flow.volcano.sh/v1alpha1");
  auto train = get_json({"get", "jobtemplate", "train"});
  EXPECT_EQ(train["spec"]["minAvailable"], 2);
  EXPECT_EQ(train["spec"]["tasks"][0]["replicas"], 2);

  auto flow = get_json({"get", "jobflow", "flow-demo"});
  EXPECT_EQ(flow["kind"], "JobFlow");
  EXPECT_EQ(flow["metadata"]["namespace"], "default");
  EXPECT_EQ(flow["spec"]["flows"][1]["name"], "train");
  EXPECT_EQ(flow["spec"]["flows"][1]["dependsOn"]["targets"], json::array({"prepare"}));
  EXPECT_EQ(flow["spec"]["jobRetainPolicy"], "retain");

  // The flow runs: its jobs are ordinary jobs, and it ends Succeed.
  ASSERT_TRUE(eventually([&] {
    return get_json({"get", "jobflow", "flow-demo"})["status"]["state"]["phase"] == "Succeed";
  })) << node.log();
  auto jobs = get_json({"get", "jobs"});
  ASSERT_EQ(jobs["items"].size(), 2u) << jobs;
  EXPECT_EQ(jobs["items"][0]["metadata"]["name"], "flow-demo-prepare");
  EXPECT_EQ(jobs["items"][1]["metadata"]["name"], "flow-demo-train");
  // Namespaces filter as for jobs.
  auto other = node.cli({"-n", "other", "get", "jobflows"});
  EXPECT_EQ(other.exit_code, 0);
  EXPECT_NE(other.err.find("No resources found"), std::string::npos);
  EXPECT_EQ(get_json({"-n", "other", "get", "jobflows", "-A"})["items"].size(), 1u);
}

TEST_F(JobFlows, BadFlowIsRejectedWithEveryPathAndNothingIsStored) {
  auto yaml = std::string(kTemplateA) + R"(---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: bad}
spec:
  flows:
    - name: a
      dependsOn: {targets: [b, ghost]}
    - name: b
      dependsOn: {targets: [a]}
)";
  auto r = node.cli({"submit", "-f", "-"}, yaml);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("documents[1].spec.flows[0].dependsOn.targets[1]: no flow named \"ghost\""),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("documents[1].spec.flows[0].dependsOn: dependency cycle: a -> b -> a"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("JobTemplate b does not exist yet"), std::string::npos) << r.err;
  // All or nothing: the good template of the same file was not stored either.
  EXPECT_NE(node.cli({"get", "jobtemplate", "a"}).exit_code, 0);
  EXPECT_NE(node.cli({"get", "jobflow", "bad"}).exit_code, 0);
}

TEST_F(JobFlows, PathsNameTheirDocumentWhenKindsAreMixed) {
  auto yaml = std::string(kTemplateA) + R"(---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: ok}
spec: {flows: [{name: a}]}
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: broken}
spec:
  tasks:
    - name: main
      replicas: -1
      template: {spec: {containers: [{name: main, command: ["true"]}]}}
)";
  auto r = node.cli({"submit", "-f", "-"}, yaml);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("documents[2].spec.tasks[0].replicas: replicas must be >= 0"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("documents[0].spec"), std::string::npos) << r.err;
  EXPECT_NE(node.cli({"get", "jobtemplate", "a"}).exit_code, 0);
  EXPECT_NE(node.cli({"get", "jobflow", "ok"}).exit_code, 0);
  // The flow directory admitted the template and the flow, then gave their names back when the
  // job was refused: the file without the bad job goes through.
  auto fixed = node.cli({"submit", "-f", "-"}, yaml.substr(0, yaml.rfind("---\n")));
  EXPECT_EQ(fixed.exit_code, 0) << fixed.err;
  EXPECT_EQ(node.cli({"get", "jobflow", "ok"}).exit_code, 0);
}

TEST_F(JobFlows, DuplicateSubmitIsAlreadyExists) {
  submit_example();
  auto r = node.cli({"submit", "-f", source_path("examples/flow.yaml")});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("error (already exists): documents[0].metadata.name: "
                       "jobtemplates.flow.volcano.sh \"prepare\" already exists in namespace "
                       "default"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("jobflows.flow.volcano.sh \"flow-demo\" already exists"), std::string::npos)
      << r.err;
}

TEST_F(JobFlows, KillNineKeepsThemAndDeleteRemovesThem) {
  submit_example();
  auto before_flow = get_json({"get", "jobflow", "flow-demo"});
  auto before_templates = get_json({"get", "jobtemplates"});
  node.kill9();  // right after "created": everything must already be durable
  node.start();
  auto after_flow = get_json({"get", "jobflow", "flow-demo"});
  EXPECT_EQ(after_flow["spec"], before_flow["spec"]);  // its status moves on: it runs
  EXPECT_EQ(after_flow["metadata"], before_flow["metadata"]);
  EXPECT_EQ(get_json({"get", "jobtemplates"}), before_templates);

  auto del = node.cli({"delete", "jobtemplate", "prepare"});
  ASSERT_EQ(del.exit_code, 0) << del.err;
  EXPECT_EQ(del.out, "jobtemplate.flow.volcano.sh \"prepare\" deleted\n");
  del = node.cli({"delete", "jobflow", "flow-demo"});
  ASSERT_EQ(del.exit_code, 0) << del.err;
  EXPECT_EQ(del.out, "jobflow.flow.volcano.sh \"flow-demo\" deleted\n");

  auto gone = node.cli({"get", "jobtemplate", "prepare"});
  EXPECT_NE(gone.exit_code, 0);
  EXPECT_NE(gone.err.find("error (not found): name: jobtemplates.flow.volcano.sh \"prepare\" not "
                          "found in namespace default"),
            std::string::npos)
      << gone.err;
  gone = node.cli({"get", "jobflow", "flow-demo"});
  EXPECT_NE(gone.err.find("jobflows.flow.volcano.sh \"flow-demo\" not found"), std::string::npos)
      << gone.err;
  EXPECT_NE(node.cli({"delete", "jobflow", "flow-demo"}).exit_code, 0);

  // The deletes are durable too; the other template is untouched.
  node.kill9();
  node.start();
  EXPECT_NE(node.cli({"get", "jobtemplate", "prepare"}).exit_code, 0);
  EXPECT_NE(node.cli({"get", "jobflow", "flow-demo"}).exit_code, 0);
  EXPECT_EQ(get_json({"get", "jobtemplate", "train"})["metadata"]["name"], "train");
}

TEST_F(JobFlows, StructuredRequestsOverTheWire) {
  auto c = Client::connect(node.server(), 2s);
  ASSERT_TRUE(c) << c.error();
  auto flow = (*c)->call([](api::Request::Builder b) {
    auto s = b.initSubmitJobFlow();
    s.setName("wired");
    auto flows = s.initFlows(2);
    flows[0].setName("first");
    flows[1].setName("second");
    flows[1].initDependsOn().initTargets(1).set(0, "first");
  });
  ASSERT_TRUE(flow) << flow.error();
  auto resp = (*flow)->root<api::Response>();
  ASSERT_EQ(resp.which(), api::Response::SUBMITTED);
  EXPECT_EQ(std::string(resp.getSubmitted()[0].getKind().cStr()), "JobFlow");
  EXPECT_EQ(std::string(resp.getSubmitted()[0].getNamespace().cStr()), "default");
  // Neither template exists: warnings, not errors; the flow waits for them.
  EXPECT_EQ(resp.getWarnings().size(), 2u);

  auto tmpl = (*c)->call([](api::Request::Builder b) {
    auto s = b.initSubmitJobTemplate();
    s.setName("first");
    auto task = s.initTasks(1)[0];
    task.setName("main");
    task.setReplicas(1);
    auto container = task.initTemplate().initContainers(1)[0];
    container.setName("main");
    container.initCommand(1).set(0, "true");
  });
  ASSERT_TRUE(tmpl) << tmpl.error();
  ASSERT_EQ((*tmpl)->root<api::Response>().which(), api::Response::SUBMITTED);

  auto got = (*c)->call([](api::Request::Builder b) { b.initGetJobFlow().setName("wired"); });
  ASSERT_TRUE(got) << got.error();
  auto f = (*got)->root<api::Response>();
  ASSERT_EQ(f.which(), api::Response::JOB_FLOW);
  EXPECT_EQ(f.getJobFlow().getSpec().getFlows().size(), 2u);
  EXPECT_EQ(std::string(f.getJobFlow().getSpec().getJobRetainPolicy().cStr()), "retain");
  // "first" exists now, so the flow may have started it; "second" has no template.
  std::string phase = f.getJobFlow().getStatus().getState().getPhase().cStr();
  EXPECT_TRUE(phase == "Pending" || phase == "Running") << phase;

  auto listed = (*c)->call([](api::Request::Builder b) { b.initListJobTemplates(); });
  ASSERT_TRUE(listed) << listed.error();
  ASSERT_EQ((*listed)->root<api::Response>().which(), api::Response::JOB_TEMPLATES);
  EXPECT_EQ((*listed)->root<api::Response>().getJobTemplates().size(), 1u);

  auto bad = (*c)->call([](api::Request::Builder b) {
    auto s = b.initSubmitJobFlow();
    s.setName("Bad");
    s.setJobRetainPolicy("forever");
  });
  ASSERT_TRUE(bad) << bad.error();
  auto errors = (*bad)->root<api::Response>();
  ASSERT_EQ(errors.which(), api::Response::ERRORS);
  EXPECT_EQ(errors.getErrors().size(), 3u);  // name, no flows, retain policy
  EXPECT_EQ(errors.getErrors()[0].getCode(), api::Error::Code::INVALID_ARGUMENT);
}

}  // namespace
}  // namespace caldera::testing
