// Queue and PriorityClass documents: how they are read from YAML, how a submission of them is
// admitted, and what a job may name in spec.queue and spec.priorityClassName.
#include <gtest/gtest.h>

#include <future>

#include "actors/directory/scheduling_names.hpp"
#include "actors/scheduler/scheduling_registry.hpp"
#include "messages/yaml/job_yaml.hpp"
#include "tests/unit/diagnostic_matchers.hpp"
#include "tests/unit/temp_store.hpp"

namespace caldera {
namespace {

const char* kQueue = R"(apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: research, labels: {team: ml}}
spec:
  weight: 3
  capability: {cpu: "8", memory: 16Gi}
  reclaimable: false
)";

const char* kClass = R"(apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
globalDefault: true
preemptionPolicy: Never
description: deadlines first
)";

std::string job_naming(const std::string& queue, const std::string& klass) {
  return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j}\nspec:\n  queue: " +
         queue + "\n  priorityClassName: " + klass +
         "\n  tasks: [{name: w, replicas: 1, template: {spec: {containers: [{command: "
         "[\"true\"]}]}}}]\n";
}

ParsedDocuments parse(const std::string& text, Diagnostics& d) {
  return parse_yaml(text, d);
}

TEST(SchedulingYaml, AQueueAndAPriorityClassAreReadWithEveryField) {
  Diagnostics d;
  auto docs = parse(std::string(kQueue) + "---\n" + kClass, d);
  EXPECT_TRUE(d.ok()) << dump(d.errors);
  EXPECT_TRUE(d.warnings.empty()) << dump(d.warnings);
  ASSERT_EQ(docs.queues.size(), 1u);
  const auto& q = docs.queues[0].value;
  EXPECT_EQ(q.name, "research");
  EXPECT_EQ(q.labels.at("team"), "ml");
  EXPECT_EQ(q.weight, 3);
  ASSERT_TRUE(q.capability.has_value());
  EXPECT_EQ(q.capability->get("cpu"), 8000);
  EXPECT_EQ(q.capability->get("memory"), 16LL * 1024 * 1024 * 1024 * 1000);
  EXPECT_FALSE(q.reclaimable);
  ASSERT_EQ(docs.priority_classes.size(), 1u);
  const auto& c = docs.priority_classes[0].value;
  EXPECT_EQ(c.name, "high");
  EXPECT_EQ(c.value, 1000);
  EXPECT_TRUE(c.global_default);
  EXPECT_EQ(c.preemption_policy, "Never");
  EXPECT_EQ(c.description, "deadlines first");
  EXPECT_EQ(docs.priority_classes[0].prefix, "documents[1].");
}

TEST(SchedulingYaml, BadFieldsAreErrorsAtTheirPaths) {
  Diagnostics d;
  parse(R"(apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: q, namespace: ns}
spec: {weight: 0, reclaimable: "yes", capability: {cpu: lots}, color: red}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: p}
preemptionPolicy: Sometimes
)",
        d);
  EXPECT_TRUE(has(d.errors, "documents[0].spec.weight", "1"));
  EXPECT_TRUE(has(d.errors, "documents[0].spec.reclaimable", "expected true or false"));
  EXPECT_TRUE(has(d.errors, "documents[0].spec.capability.cpu", ""));
  EXPECT_TRUE(has(d.warnings, "documents[0].spec.color", "unknown field"));
  EXPECT_TRUE(has(d.warnings, "documents[0].metadata.namespace", "cluster-scoped"));
  EXPECT_TRUE(has(d.errors, "documents[1].value", "value is required"));
  EXPECT_TRUE(has(d.errors, "documents[1].preemptionPolicy",
                  "\"Sometimes\" is not one of PreemptLowerPriority, Never"));
}

TEST(SchedulingYaml, AnUnknownKindNamesTheKindsThatAreRead) {
  Diagnostics d;
  parse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", d);
  EXPECT_TRUE(has(d.errors, "kind", "Queue (scheduling.volcano.sh/v1beta1)"));
  EXPECT_TRUE(has(d.errors, "kind", "PriorityClass (scheduling.k8s.io/v1)"));
}

TEST(SchedulingYaml, AHierarchyAnnotationIsWarnedAboutAsNotHonoured) {
  Diagnostics d;
  auto docs = parse(
      "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata:\n  name: research\n"
      "  annotations:\n    volcano.sh/hierarchy: root/eng/research\n"
      "    volcano.sh/hierarchy-weights: 1/2/8\n    owner: ml\nspec: {weight: 2}\n",
      d);
  EXPECT_TRUE(d.ok()) << dump(d.errors);
  ASSERT_EQ(docs.queues.size(), 1u);
  EXPECT_EQ(docs.queues[0].value.annotations.size(), 3u) << "kept with the queue";
  EXPECT_TRUE(has(d.warnings, "metadata.annotations.volcano.sh/hierarchy", "not built yet"));
  EXPECT_TRUE(has(d.warnings, "metadata.annotations.volcano.sh/hierarchy-weights", "flat one"));
  EXPECT_EQ(d.warnings.size(), 2u) << dump(d.warnings);
}

Diagnostics admit(const std::string& text, const SchedulingNames& names = {}) {
  Diagnostics parsed;
  auto docs = parse(text, parsed);
  EXPECT_TRUE(parsed.ok()) << dump(parsed.errors);
  Diagnostics d;
  admit_scheduling(docs, names, d);
  return d;
}

TEST(SchedulingAdmission, AJobMayNameWhatTheSameSubmissionCreates) {
  auto d = admit(std::string(kQueue) + "---\n" + kClass + "---\n" + job_naming("research", "high"));
  EXPECT_TRUE(d.ok()) << dump(d.errors);
}

TEST(SchedulingAdmission, AJobNamingWhatDoesNotExistIsRefusedAtTheField) {
  auto d = admit(job_naming("nowhere", "nothing"));
  EXPECT_TRUE(has(d.errors, "spec.queue", "queue \"nowhere\" does not exist"));
  EXPECT_TRUE(has(d.errors, "spec.priorityClassName", "no PriorityClass named \"nothing\""));
  // The default queue needs no document.
  Diagnostics parsed;
  auto docs = parse(job_naming("default", "x"), parsed);
  docs.jobs[0].value.priority_class_name.clear();
  Diagnostics ok;
  admit_scheduling(docs, {}, ok);
  EXPECT_TRUE(ok.ok()) << dump(ok.errors);
}

TEST(SchedulingAdmission, NamesAreUniqueAndOneClassAtMostIsTheGlobalDefault) {
  SchedulingNames stored;
  stored.queues.insert("research");
  stored.classes.insert("normal");
  stored.default_class = "normal";
  auto d = admit(std::string(kQueue) + "---\n" + kClass, stored);
  EXPECT_TRUE(has(d.errors, "documents[0].metadata.name",
                  "queues.scheduling.volcano.sh \"research\" already exists"));
  EXPECT_TRUE(has(d.errors, "documents[1].globalDefault",
                  "PriorityClass \"normal\" is already marked as the global default"));

  // `default` may be written once, to set its weight; a second time it exists.
  const std::string def_queue =
      "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: default}\n"
      "spec: {weight: 2}\n";
  EXPECT_TRUE(admit(def_queue).ok());
  EXPECT_FALSE(admit(def_queue + "---\n" + def_queue).ok());

  auto reserved = admit(
      "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: system-x}\n"
      "value: 1\n");
  EXPECT_TRUE(has(reserved.errors, "metadata.name", "reserved"));
  auto bad_name =
      admit("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: Bad_Name}\n");
  EXPECT_TRUE(has(bad_name.errors, "metadata.name", "DNS-1123"));
}

TEST(SchedulingRegistry, TheDefaultQueueIsAlwaysThere) {
  SchedulingRegistry stored;
  auto all = stored.all_queues();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].spec.name, "default");
  PriorityClass def;
  def.name = "normal";
  def.global_default = true;
  stored.classes["normal"] = def;
  EXPECT_EQ(stored.default_class(), "normal");
  SchedulingNames reg;
  EXPECT_TRUE(reg.queue_exists("default"));
  EXPECT_FALSE(reg.queue_exists("x"));
  reg.creating_queues.insert("x");
  EXPECT_TRUE(reg.queue_exists("x"));
  // While its delete is in flight no job may name it (it would name what is gone).
  reg.deleting_queues.insert("x");
  EXPECT_FALSE(reg.queue_exists("x"));
  reg.classes.insert("c");
  EXPECT_TRUE(reg.class_exists("c"));
  reg.deleting_classes.insert("c");
  EXPECT_FALSE(reg.class_exists("c"));
}

class SchedulingRecords : public testing::TempStoreTest {};

// What the directory writes, a restart reads back whole; a record that does not decode is
// skipped, not fatal.
TEST_F(SchedulingRecords, QueuesAndClassesRoundTripThroughTheStore) {
  Queue q{
      "uid-q", 42,
      QueueSpec{
          "research", {{"team", "ml"}}, {}, 3, ResourceList{{{"cpu", 8000}}}, false, kQueueClosed},
      6};
  PriorityClass c;
  c.uid = "uid-c";
  c.created_ms = 43;
  c.name = "high";
  c.value = -7;
  c.preemption_policy = kPreemptNever;
  c.global_default = true;
  c.description = "d";
  std::promise<std::string> done;
  store_->commit({{Family::Scheduling, queue_key(q.spec.name), queue_record(q)},
                  {Family::Scheduling, priority_class_key(c.name), priority_class_record(c)},
                  {Family::Scheduling, "queue/broken", std::string("\x01\x02")}},
                 [&](std::string error) { done.set_value(error); });
  ASSERT_EQ(done.get_future().get(), "");
  SchedulingRegistry reg;
  recover(reg, *store_);
  ASSERT_EQ(reg.queues.size(), 1u);
  EXPECT_EQ(reg.queues.at("research"), q);
  ASSERT_EQ(reg.classes.size(), 1u);
  EXPECT_EQ(reg.classes.at("high"), c);
  // A queue without a capability stays without one (not capped at nothing).
  Queue open{"u2", 1, QueueSpec{"open"}};
  SchedulingRegistry again;
  std::promise<std::string> second;
  store_->commit({{Family::Scheduling, queue_key("open"), queue_record(open)}},
                 [&](std::string error) { second.set_value(error); });
  ASSERT_EQ(second.get_future().get(), "");
  recover(again, *store_);
  EXPECT_FALSE(again.queues.at("open").spec.capability.has_value());
  // A queue that never named a state is Open, at its first generation.
  EXPECT_EQ(again.queues.at("open").spec.state, kQueueOpen);
  EXPECT_EQ(again.queues.at("open").generation, 1);
}

}  // namespace
}  // namespace caldera
