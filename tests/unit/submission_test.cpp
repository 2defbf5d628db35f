// Admission of a whole submission: every kind, name clashes, templates a flow may rely on, and
// paths under each document's prefix when kinds are mixed.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>

#include "actors/directory/submission.hpp"
#include "actors/jobflow/core/flow_submission.hpp"
#include "messages/api.capnp.h"
#include "messages/codec/flat.hpp"
#include "tests/unit/diagnostic_matchers.hpp"

namespace caldera {
namespace {

const char* kTemplate = R"(apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: prep}
spec:
  tasks: [{name: main, replicas: 1, template: {spec: {containers: [{command: ["true"]}]}}}]
)";

const char* kFlow = R"(apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: flow}
spec: {flows: [{name: prep}, {name: train, dependsOn: {targets: [prep]}}]}
)";

const char* kJob = R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: job}
spec:
  tasks: [{name: main, replicas: 1, template: {spec: {containers: [{command: ["true"]}]}}}]
)";

// What the flow directory would know: names taken (stored or in flight) and stored templates.
struct Known {
  std::map<std::string, JobSpec> templates;  // stored
  std::set<std::string> taken_templates;     // in flight
  std::set<std::string> flows;
};

// As the two directories admit a submission: its templates and flows, then its jobs.
Diagnostics admit_text(const std::string& text, const Known& known = {},
                       std::set<std::string> jobs = {}) {
  Diagnostics parse;
  auto docs = parse_yaml(text, parse);
  EXPECT_TRUE(parse.ok()) << dump(parse.errors);
  FlowDocuments flow_docs{std::move(docs.templates), std::move(docs.flows), {}, {}};
  admit_flow_objects(flow_docs,
                     FlowNames{[&](const std::string& key) {
                                 return known.templates.count(key) > 0 ||
                                        known.taken_templates.count(key) > 0;
                               },
                               [&](const std::string& key) { return known.flows.count(key) > 0; },
                               [&](const std::string& key) -> std::optional<JobSpec> {
                                 auto it = known.templates.find(key);
                                 if (it == known.templates.end()) return std::nullopt;
                                 return it->second;
                               }});
  auto diags = std::move(flow_docs.diags);
  admit_jobs(
      docs.jobs, AdmissionContext{}, [&](const std::string& key) { return jobs.count(key) > 0; },
      diags);
  return diags;
}

std::string docs(std::initializer_list<const char*> parts) {
  std::string out;
  for (const char* p : parts) out += std::string(out.empty() ? "" : "---\n") + p;
  return out;
}

TEST(Submission, MixedKindsAreAdmittedAndAFlowSeesTemplatesOfTheSameFile) {
  auto d = admit_text(docs({kTemplate, kFlow, kJob}));
  EXPECT_TRUE(d.ok()) << dump(d.errors);
  // "prep" arrives with the flow; "train" does not exist anywhere.
  EXPECT_TRUE(
      has(d.warnings, "documents[1].spec.flows[1].name", "JobTemplate train does not exist"));
  EXPECT_EQ(d.warnings.size(), 1u) << dump(d.warnings);
}

TEST(Submission, StoredAndInFlightTemplatesCountForAFlow) {
  Known known;
  known.templates["default/prep"] = JobSpec{};
  known.taken_templates.insert("default/train");
  auto d = admit_text(kFlow, known);
  EXPECT_TRUE(d.ok()) << dump(d.errors);
  EXPECT_TRUE(d.warnings.empty()) << dump(d.warnings);
}

TEST(Submission, NamesTakenByTheSameKindAlreadyExist) {
  Known known;
  known.templates["default/prep"] = JobSpec{};
  known.flows.insert("default/flow");  // accepted, not yet durable: the name is taken
  auto d = admit_text(docs({kTemplate, kFlow, kJob}), known, {"default/job"});
  EXPECT_TRUE(has(d.errors, "documents[0].metadata.name",
                  "jobtemplates.flow.volcano.sh \"prep\" already exists in namespace default"));
  EXPECT_TRUE(has(d.errors, "documents[1].metadata.name",
                  "jobflows.flow.volcano.sh \"flow\" already exists in namespace default"));
  EXPECT_TRUE(has(d.errors, "documents[2].metadata.name",
                  "jobs.batch.volcano.sh \"job\" already exists in namespace default"));
  EXPECT_EQ(d.errors.size(), 3u) << dump(d.errors);
}

TEST(Submission, KindsHaveSeparateNamesButNotTwiceInOneFile) {
  // A template, a flow and a job may share a name; two templates may not.
  std::string same = docs({kTemplate, kTemplate});
  auto d = admit_text(same);
  EXPECT_TRUE(has(d.errors, "documents[1].metadata.name", "\"prep\" already exists"));
  EXPECT_EQ(d.errors.size(), 1u) << dump(d.errors);
}

TEST(Submission, ErrorsCarryTheirOwnDocumentsPrefix) {
  std::string bad_job = R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: bad}
spec:
  tasks: [{name: main, replicas: -1, template: {spec: {containers: [{command: ["true"]}]}}}]
)";
  std::string bad_flow = R"(apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: f}
spec: {jobRetainPolicy: never, flows: [{name: prep}]}
)";
  auto d = admit_text(docs({kTemplate, bad_flow.c_str(), bad_job.c_str()}));
  EXPECT_TRUE(has(d.errors, "documents[2].spec.tasks[0].replicas", "replicas must be >= 0"));
  EXPECT_TRUE(has(d.errors, "documents[2].spec.tasks", "job has no replicas"));
  EXPECT_TRUE(has(d.errors, "documents[1].spec.jobRetainPolicy", "never"));
  EXPECT_EQ(d.errors.size(), 3u) << dump(d.errors);
}

TEST(Submission, RejectionSaysAlreadyExistsWithItsOwnCode) {
  Diagnostics d;
  d.error("metadata.name", "jobflows.flow.volcano.sh \"f\" already exists in namespace default");
  d.error("spec.flows", "a JobFlow needs at least one flow");
  d.warn("spec.flows[0].name", "JobTemplate x does not exist yet");
  auto bytes = rejection_response(5, d);
  FlatReader reader(bytes);
  auto r = reader.root<api::Response>();
  EXPECT_EQ(r.getId(), 5u);
  ASSERT_EQ(r.which(), api::Response::ERRORS);
  ASSERT_EQ(r.getErrors().size(), 2u);
  EXPECT_EQ(r.getErrors()[0].getCode(), api::Error::Code::ALREADY_EXISTS);
  EXPECT_EQ(r.getErrors()[1].getCode(), api::Error::Code::INVALID_ARGUMENT);
  EXPECT_EQ(std::string(r.getErrors()[1].getPath().cStr()), "spec.flows");
  ASSERT_EQ(r.getWarnings().size(), 1u);
}

TEST(Submission, AProbeMustNameATaskOfItsTargetsTemplate) {
  const char* probed = R"(apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: flow}
spec:
  flows:
    - name: prep
    - name: train
      dependsOn: {targets: [prep], probe: {taskStatusList: [{taskName: nosuch, phase: Running}]}}
)";
  auto d = admit_text(docs({kTemplate, probed}));
  EXPECT_TRUE(has(d.errors, "documents[1].spec.flows[1].dependsOn.probe",
                  "JobTemplate prep has none of the probed tasks"))
      << dump(d.errors);
  // The template's own task is fine; an unknown template is only the usual warning.
  std::string good = probed;
  good.replace(good.find("nosuch"), 6, "main");
  EXPECT_TRUE(admit_text(docs({kTemplate, good.c_str()})).ok());
}

}  // namespace
}  // namespace caldera

namespace caldera {
namespace {

TEST(EtcVolcanoWarning, NamesTheNodesWhosePodsFindTheSvcFilesInTheirDirectoryOnly) {
  JobSpec spec;
  spec.plugins = {{"svc", {}}};
  EXPECT_FALSE(etc_volcano_warning(spec, {})) << "every node shows them";
  auto one = etc_volcano_warning(spec, {"node-2"});
  ASSERT_TRUE(one);
  EXPECT_EQ(*one,
            "node node-2 cannot show pods their svc files at /etc/volcano (its label "
            "caldera.io/private-etc is false): pods placed there find them in "
            "$VC_POD_DIR/volcano");
  auto many = etc_volcano_warning(spec, {"a", "b", "c"});
  ASSERT_TRUE(many);
  EXPECT_NE(many->find("node a and 2 more"), std::string::npos) << *many;
  spec.plugins = {{"mpi", {}}};
  EXPECT_TRUE(etc_volcano_warning(spec, {"a"}));
  spec.plugins = {{"env", {}}, {"pytorch", {}}};
  EXPECT_FALSE(etc_volcano_warning(spec, {"a"})) << "no files to show";
}

}  // namespace
}  // namespace caldera
