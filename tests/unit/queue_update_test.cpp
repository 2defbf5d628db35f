// Queue states (Open, Closing, Closed) and what `caldera apply` may change in a Queue or a
// PriorityClass: read from YAML, decided by the pure core (actors/scheduler/core), and enforced
// when a job names a closed queue.
#include <gtest/gtest.h>

#include "actors/directory/scheduling_names.hpp"
#include "actors/scheduler/core/scheduling_update.hpp"
#include "messages/yaml/job_yaml.hpp"
#include "tests/unit/diagnostic_matchers.hpp"

namespace caldera {
namespace {

Queue stored_queue() {
  return Queue{"uid", 1, QueueSpec{"research", {}, {}, 2, std::nullopt, true, kQueueOpen}, 4};
}

TEST(QueueYaml, StatusStateIsReadAsVolcanosWebhookTakesIt) {
  Diagnostics d;
  auto docs = parse_yaml(
      "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: a}\n"
      "spec: {weight: 1}\nstatus: {state: Closed, running: 3, allocated: {cpu: '1'}}\n"
      "---\n"
      "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: b}\n"
      "status: {state: Closing}\n"
      "---\n"
      "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: c}\n",
      d);
  EXPECT_TRUE(d.ok()) << dump(d.errors);
  EXPECT_TRUE(d.warnings.empty()) << dump(d.warnings);
  ASSERT_EQ(docs.queues.size(), 3u);
  EXPECT_EQ(docs.queues[0].value.state, kQueueClosed);
  // What `get -o yaml` wrote of a closed queue whose jobs still run asks for Closed.
  EXPECT_EQ(docs.queues[1].value.state, kQueueClosed);
  EXPECT_EQ(docs.queues[2].value.state, "") << "not given: Open at create, kept at an update";
}

TEST(QueueYaml, AnUnknownStateIsRefusedAtItsField) {
  Diagnostics d;
  parse_yaml(
      "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: a}\n"
      "status: {state: Paused}\n",
      d);
  EXPECT_TRUE(has(d.errors, "status.state", "\"Paused\" is not one of Open, Closed"));
}

TEST(QueueState, AClosedQueueIsClosingWhilePodGroupsWaitOrRunInIt) {
  QueueSpec spec{"q"};
  QueueStatus idle{"q"};
  EXPECT_EQ(observed_state(spec, idle), kQueueOpen) << "no state asked: Open";
  spec.state = kQueueClosed;
  EXPECT_EQ(observed_state(spec, idle), kQueueClosed);
  for (auto busy : {QueueStatus{"q", {}, {}, 1, 0, 0}, QueueStatus{"q", {}, {}, 0, 1, 0},
                    QueueStatus{"q", {}, {}, 0, 0, 1}})
    EXPECT_EQ(observed_state(spec, busy), kQueueClosing);
  spec.state = kQueueOpen;
  EXPECT_EQ(observed_state(spec, QueueStatus{"q", {}, {}, 0, 0, 1}), kQueueOpen);
}

TEST(QueueUpdate, EveryFieldMayChangeAndEachChangeIsOneGeneration) {
  auto stored = stored_queue();
  QueueSpec applied = stored.spec;
  applied.weight = 7;
  applied.capability = ResourceList{{{"cpu", 4000}}};
  applied.reclaimable = false;
  applied.labels = {{"team", "ml"}};
  auto c = update_queue(stored, applied);
  EXPECT_TRUE(c.diags.ok());
  ASSERT_TRUE(c.changed);
  EXPECT_EQ(c.next.spec, applied);
  EXPECT_EQ(c.next.generation, 5);
  EXPECT_EQ(c.next.uid, "uid");
  EXPECT_EQ(c.next.created_ms, 1);
}

TEST(QueueUpdate, TheSameDocumentIsUnchangedAndOneNamingNoStateKeepsTheStoredOne) {
  auto stored = stored_queue();
  stored.spec.state = kQueueClosed;
  QueueSpec applied = stored.spec;
  applied.state = "";
  auto c = update_queue(stored, applied);
  EXPECT_FALSE(c.changed);
  EXPECT_EQ(c.next, stored);
  applied.weight = 3;
  c = update_queue(stored, applied);
  ASSERT_TRUE(c.changed);
  EXPECT_EQ(c.next.spec.state, kQueueClosed) << "a weight change does not reopen the queue";
}

TEST(QueueUpdate, OpenAndCloseSetTheStateAndNothingElse) {
  auto stored = stored_queue();
  auto closed = operate_queue(stored, "close");
  ASSERT_TRUE(closed.changed);
  EXPECT_EQ(closed.next.spec.state, kQueueClosed);
  EXPECT_EQ(closed.next.spec.weight, 2);
  EXPECT_FALSE(operate_queue(closed.next, "close").changed) << "closing a closed queue: no-op";
  auto opened = operate_queue(closed.next, "open");
  ASSERT_TRUE(opened.changed);
  EXPECT_EQ(opened.next.spec.state, kQueueOpen);
  EXPECT_EQ(opened.next.generation, stored.generation + 2);
  auto bad = operate_queue(stored, "drain");
  EXPECT_TRUE(has(bad.diags.errors, "action", "open or close"));
  EXPECT_FALSE(bad.changed);
}

PriorityClass stored_class() {
  PriorityClass c;
  c.uid = "u";
  c.name = "high";
  c.value = 100;
  c.description = "old";
  return c;
}

TEST(PriorityClassUpdate, ValueAndPreemptionPolicyAreImmutableAsKubernetesSays) {
  auto stored = stored_class();
  auto applied = stored;
  applied.value = 200;
  applied.preemption_policy = kPreemptNever;
  auto c = update_priority_class(stored, applied, "");
  EXPECT_FALSE(c.changed);
  EXPECT_TRUE(has(c.diags.errors, "value", "cannot change (100 -> 200)"));
  EXPECT_TRUE(has(c.diags.errors, "preemptionPolicy", "cannot change"));
}

TEST(PriorityClassUpdate, DescriptionAndGlobalDefaultMayChangeWithOneDefaultAtMost) {
  auto stored = stored_class();
  auto applied = stored;
  applied.description = "new";
  applied.global_default = true;
  auto taken = update_priority_class(stored, applied, "other");
  EXPECT_TRUE(has(taken.diags.errors, "globalDefault", "\"other\" is already marked"));
  auto c = update_priority_class(stored, applied, "");
  ASSERT_TRUE(c.changed) << dump(c.diags.errors);
  EXPECT_EQ(c.next.description, "new");
  EXPECT_TRUE(c.next.global_default);
  EXPECT_EQ(c.next.uid, "u");
  // Already the default itself: no conflict with itself.
  EXPECT_TRUE(update_priority_class(c.next, applied, "high").diags.ok());
  EXPECT_FALSE(update_priority_class(c.next, applied, "high").changed);
}

std::string job_in(const std::string& queue) {
  return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j}\nspec:\n" +
         (queue.empty() ? std::string() : "  queue: " + queue + "\n") +
         "  tasks: [{name: w, replicas: 1, template: {spec: {containers: [{command: "
         "[\"true\"]}]}}}]\n";
}

Diagnostics admit(const std::string& text, const SchedulingNames& names) {
  Diagnostics parsed;
  auto docs = parse_yaml(text, parsed);
  EXPECT_TRUE(parsed.ok()) << dump(parsed.errors);
  Diagnostics d;
  admit_scheduling(docs, names, d);
  return d;
}

TEST(QueueState, AClosedQueueTakesNoNewJobAndSaysHowToOpenIt) {
  SchedulingNames names;
  names.queues = {"research"};
  names.closed_queues = {"research", "default"};
  auto d = admit(job_in("research"), names);
  EXPECT_TRUE(has(d.errors, "spec.queue",
                  "queue \"research\" is Closed: it takes no new jobs (caldera queue open "
                  "research opens it)"));
  // A job that names no queue is in `default`, closed too.
  EXPECT_TRUE(has(admit(job_in(""), names).errors, "spec.queue", "\"default\" is Closed"));
  names.closed_queues.clear();
  EXPECT_TRUE(admit(job_in("research"), names).ok());
}

TEST(QueueState, AQueueClosedInTheSameFileTakesNoJobEither) {
  SchedulingNames names;
  auto d = admit(
      "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: shut}\n"
      "status: {state: Closed}\n---\n" +
          job_in("shut"),
      names);
  EXPECT_TRUE(has(d.errors, "documents[1].spec.queue", "\"shut\" is Closed"));
}

TEST(QueueState, AKubernetesJobInAClosedQueueIsRefusedAtItsAnnotation) {
  SchedulingNames names;
  names.queues = {"research"};
  names.closed_queues = {"research"};
  auto d = admit(
      "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: k\n  annotations:\n"
      "    scheduling.volcano.sh/queue-name: research\nspec:\n  template:\n    spec:\n"
      "      restartPolicy: Never\n      containers: [{name: c, command: [\"true\"]}]\n",
      names);
  EXPECT_TRUE(has(d.errors, "metadata.annotations.scheduling.volcano.sh/queue-name",
                  "\"research\" is Closed"));
}

}  // namespace
}  // namespace caldera
