// JobTemplate and JobFlow through their Cap'n Proto form and back.
#include <gtest/gtest.h>

#include <capnp/message.h>

#include "messages/codec/codec.hpp"
#include "messages/codec/flat.hpp"

namespace caldera {
namespace {

template <class T, class V, class Decode>
V through_bytes(const V& value, Decode decode_fn) {
  capnp::MallocMessageBuilder message;
  encode(value, message.initRoot<T>());
  std::string bytes = to_bytes(message);
  FlatReader reader(bytes);
  return decode_fn(reader.template root<T>());
}

JobFlow sample_flow() {
  JobFlow f;
  f.uid = "flow-uid";
  f.created_ms = 1700000000000;
  f.spec.name = "pipeline";
  f.spec.namespace_ = "ml";
  f.spec.labels = {{"app", "demo"}};
  f.spec.annotations = {{"note", "a b"}};
  f.spec.flows = {{"prepare", std::nullopt},
                  {"train", FlowDependsOn{{"prepare"}}},
                  {"evaluate", FlowDependsOn{{"train", "prepare"}}},
                  {"report", FlowDependsOn{}}};
  f.spec.job_retain_policy = "delete";
  f.status.phase = "Running";
  f.status.pending_jobs = {"pipeline-evaluate"};
  f.status.running_jobs = {"pipeline-train"};
  f.status.completed_jobs = {"pipeline-prepare"};
  f.status.failed_jobs = {"x"};
  f.status.terminated_jobs = {"y"};
  f.status.unknown_jobs = {"z"};
  // What the flow actor adds: retry, probes, why it failed, histories and conditions.
  f.spec.flows[1].retry = 3;
  f.spec.flows[2].depends_on->probe = {{"worker", "Running"}, {"ps", "Succeeded"}};
  f.spec.flows[2].depends_on->http_get = {{"worker", "/ready", 8080, "X-Probe", "1"}};
  f.spec.flows[2].depends_on->tcp_socket = {{"ps", 2222}};
  f.status.reason = "JobFailed";
  f.status.message = "job pipeline-x Failed";
  f.status.last_transition_ms = 1700000000500;
  f.status.job_status_list = {{"pipeline-prepare",
                               "u1",
                               "Completed",
                               10,
                               20,
                               0,
                               {{"Pending", 10, 12}, {"Completed", 12, 0}}},
                              {"pipeline-train", "u2", "Running", 21, 0, 2, {}}};
  f.status.conditions["pipeline-train"] = {"Running", 21, 1500, {{"worker", {0, 2, 1, 0, 0}}}};
  return f;
}

TEST(FlowCodec, JobFlowRoundTripsThroughBytes) {
  JobFlow f = sample_flow();
  auto back = through_bytes<api::JobFlow>(f, [](api::JobFlow::Reader r) { return decode(r); });
  EXPECT_EQ(back, f);
  EXPECT_FALSE(back.spec.flows[0].depends_on.has_value());
  EXPECT_TRUE(back.spec.flows[3].depends_on.has_value());  // present but empty stays present
}

TEST(FlowCodec, JobFlowSpecFromAClientRoundTrips) {
  JobFlowSpec spec = sample_flow().spec;
  Diagnostics diags;
  auto back = through_bytes<api::JobFlowSpec>(
      spec, [&](api::JobFlowSpec::Reader r) { return decode(r, diags); });
  EXPECT_TRUE(diags.ok());
  EXPECT_EQ(back, spec);
}

TEST(FlowCodec, JobTemplateRoundTripsThroughBytes) {
  JobTemplate t;
  t.uid = "tmpl-uid";
  t.created_ms = 1700000000001;
  t.spec.name = "train";
  t.spec.namespace_ = "ml";
  t.spec.labels = {{"stage", "train"}};
  t.spec.min_available = 2;
  TaskSpec task;
  task.name = "worker";
  task.replicas = 2;
  task.template_.containers = {Container{"main", "", {"echo", "hi"}, {}, {}, "", {}, {}}};
  t.spec.tasks = {task};
  EXPECT_EQ(
      through_bytes<api::JobTemplate>(t, [](api::JobTemplate::Reader r) { return decode(r); }), t);
}

TEST(FlowCodec, UntrustedFlowSpecReportsKeysGivenTwice) {
  capnp::MallocMessageBuilder message;
  auto b = message.initRoot<api::JobFlowSpec>();
  b.setName("f");
  auto labels = b.initLabels(2);
  labels[0].setKey("app");
  labels[0].setValue("one");
  labels[1].setKey("app");
  labels[1].setValue("two");
  auto annotations = b.initAnnotations(2);
  annotations[0].setKey("a");
  annotations[1].setKey("b");
  Diagnostics diags;
  auto spec = decode(message.getRoot<api::JobFlowSpec>().asReader(), diags);
  ASSERT_EQ(diags.errors.size(), 1u);
  EXPECT_EQ(diags.errors[0].path, "metadata.labels.app");
  EXPECT_EQ(spec.labels.at("app"), "one");
  EXPECT_EQ(spec.annotations.size(), 2u);
  EXPECT_EQ(spec.job_retain_policy, "");  // left to admission's defaults
}

TEST(FlowCodec, FlowStatusTravelsAsAJobState) {
  capnp::MallocMessageBuilder message;
  JobFlowStatus st;
  encode(st, message.initRoot<api::JobFlowStatus>());
  auto r = message.getRoot<api::JobFlowStatus>().asReader();
  EXPECT_EQ(std::string(r.getState().getPhase().cStr()), "Pending");
  EXPECT_EQ(r.getPendingJobs().size(), 0u);
  EXPECT_EQ(decode(r), st);
}

}  // namespace
}  // namespace caldera
