#include <gtest/gtest.h>

#include <capnp/message.h>

#include "actors/job/job_record.hpp"
#include "job_test_support.hpp"
#include "messages/codec/codec.hpp"
#include "messages/codec/flat.hpp"
#include "messages/store.capnp.h"

namespace caldera {
namespace {
using namespace caldera::testing;

Pod make_pod(const std::string& task, int32_t index, PodPhase phase) {
  Pod p;
  p.name = pod_name("train", task, index);
  p.uid = "uid-" + task + "-" + std::to_string(index);
  p.namespace_ = "ml";
  p.job_name = "train";
  p.task_name = task;
  p.index = index;
  p.job_version = 3;
  p.node = "n1";
  p.phase = phase;
  p.reason = phase == PodPhase::Failed ? "Error" : "";
  p.message = phase == PodPhase::Failed ? "exit code 1" : "";
  ContainerStatus c;
  c.name = "main";
  c.state = is_terminal(phase) ? ContainerState::Terminated : ContainerState::Running;
  c.exit_code = phase == PodPhase::Failed ? 1 : 0;
  c.started_ms = 1'700'000'001'000;
  c.finished_ms = is_terminal(phase) ? 1'700'000'002'500 : 0;
  p.containers = {c};
  p.created_ms = 1'700'000'000'500;
  p.started_ms = c.started_ms;
  p.finished_ms = c.finished_ms;
  p.out_of_sync = phase == PodPhase::Failed;
  p.partition = index / 2;
  return p;
}

// Every field the controller keeps, none at its default.
JobModel rich_model() {
  JobModel m;
  m.job.uid = "job-uid";
  m.job.created_ms = 1'700'000'000'000;
  m.job.spec.name = "train";
  m.job.spec.namespace_ = "ml";
  m.job.spec.max_retry = 4;
  m.job.spec.ttl_seconds_after_finished = 30;
  m.job.spec.active_deadline_seconds = 600;
  m.job.spec.policies = {{{Event::PodPending}, std::nullopt, Action::AbortJob, 4000}};
  TaskSpec t;
  t.name = "worker";
  t.replicas = 3;
  t.max_retry = 2;
  t.depends_on = DependsOn{{"loader"}, "any", "Succeeded"};
  Container c;
  c.name = "main";
  c.command = {"sleep", "60"};
  t.template_.containers = {c};
  m.job.spec.tasks = {t};
  auto& s = m.job.status;
  s.state = {JobPhase::Restarting, "PodFailed", "PodFailed of pod train-worker-1 -> RestartJob",
             1'700'000'003'000};
  s.conditions = {{JobPhase::Pending, 1'700'000'000'000},
                  {JobPhase::Running, 1'700'000'001'200},
                  {JobPhase::Restarting, 1'700'000'003'000}};
  s.version = 3;
  s.retry_count = 2;
  s.running = 1;
  s.failed = 1;
  s.min_available = 3;
  m.job.events = {
      {1'700'000'000'000, "Normal", "Created", "job accepted"},
      {1'700'000'000'010, "Normal", "DelayedActionScheduled", "AbortJob in 4000ms"},
      {1'700'000'003'000, "Warning", "PodFailed", "pod train-worker-1 failed with exit code 1"},
  };
  for (auto p : {make_pod("worker", 0, PodPhase::Running), make_pod("worker", 1, PodPhase::Failed),
                 make_pod("worker", 2, PodPhase::Pending)})
    m.pods.emplace(p.name, p);
  m.command_ids = {"cmd-1", "cmd-2"};
  m.delayed = {
      {"train-worker-2", "uid-worker-2", "worker", 1, Event::PodPending, Action::AbortJob,
       1'700'000'004'000},
      {"train-worker-1", "uid-worker-1", "worker", 0, Event::PodFailed, Action::RestartTask,
       1'700'000'013'000},
      {"", "", "", -1, Event::Any, Action::TerminateJob, 1'700'000'020'000},
  };
  m.task_retries = {{"worker", 2}, {"loader", 1}};
  m.retries_exhausted = true;
  m.creation = {4, {"train-worker-2"}, 3, 2, 1'700'000'005'000, 2, 1'700'000'004'500};
  return m;
}

void expect_same(const JobModel& a, const JobModel& b) {
  EXPECT_EQ(a.job, b.job);  // spec, status, conditions and events
  EXPECT_EQ(a.pods, b.pods);
  EXPECT_EQ(a.command_ids, b.command_ids);
  EXPECT_EQ(a.delayed, b.delayed);
  EXPECT_EQ(a.task_retries, b.task_retries);
  EXPECT_EQ(a.retries_exhausted, b.retries_exhausted);
  EXPECT_EQ(a.creation, b.creation);
  EXPECT_EQ(a.ssh_keys, b.ssh_keys);
}

// What the store would hold after these writes, read back as recovery reads it.
Result<JobModel> round_trip(JobModel& m) {
  std::string job_row;
  std::optional<std::string> spec_row;
  std::vector<std::string> pod_rows;
  for (auto& w : job_writes(m)) {
    if (w.family == Family::Jobs) job_row = *w.value;
    if (w.family == Family::Specs) spec_row = *w.value;
    if (w.family == Family::Pods && w.value) pod_rows.push_back(*w.value);
  }
  return load_job(job_row, pod_rows, nullptr, spec_row);
}

size_t count_writes(const std::vector<Write>& writes, Family f, bool puts) {
  size_t n = 0;
  for (const auto& w : writes) n += w.family == f && w.value.has_value() == puts;
  return n;
}

TEST(JobRecord, RoundTripKeepsEveryField) {
  auto m = rich_model();
  auto back = round_trip(m);
  ASSERT_TRUE(back) << back.error();
  expect_same(m, *back);
  EXPECT_EQ(back->job.events.size(), 3u);
  EXPECT_EQ(back->delayed[0].due_ms, 1'700'000'004'000);
  EXPECT_EQ(back->task_retries.at("worker"), 2);
}

TEST(JobRecord, AFreshJobRoundTripsWithEmptyBookkeeping) {
  JobModel m;
  m.job.uid = "u";
  m.job.spec.name = "plain";
  auto back = round_trip(m);
  ASSERT_TRUE(back) << back.error();
  expect_same(m, *back);
  EXPECT_FALSE(back->retries_exhausted);
  EXPECT_TRUE(back->delayed.empty());
  EXPECT_EQ(back->creation.next_batch, 1);
}

TEST(JobRecord, TheSshKeysAreKeptInTheSpecRowOnly) {
  JobModel m;
  m.job.uid = "u";
  m.job.spec.name = "keyed";
  m.ssh_keys = SshKeyPair{"-----BEGIN RSA PRIVATE KEY-----\nx\n", "ssh-rsa AAAA\n"};
  auto writes = job_writes(m);
  for (const auto& w : writes) {
    if (w.family == Family::Specs || !w.value) continue;
    EXPECT_EQ(w.value->find("BEGIN RSA PRIVATE KEY"), std::string::npos)
        << "the job row is written on every change, and shown: the keys are not in it";
  }
  auto back = round_trip(m);
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->ssh_keys, m.ssh_keys);
  EXPECT_EQ(encode_spec_row(*back), encode_spec_row(m));
}

TEST(JobRecord, TheJobRowHoldsNoPodsAndEachPodHasARow) {
  auto m = rich_model();
  auto writes = job_writes(m);
  // The job, its three pods, its spec (the first write only), its summary, its live index entry
  // (the first write only, while it is not settled).
  ASSERT_EQ(writes.size(), 7u);
  EXPECT_EQ(writes[0].family, Family::Jobs);
  EXPECT_EQ(writes[4].family, Family::Specs);
  EXPECT_EQ(writes[4].key, "ml/train");
  EXPECT_EQ(writes[5].family, Family::Summaries);
  EXPECT_EQ(writes[6].family, Family::Live);
  EXPECT_EQ(writes[6].value, m.job.uid);
  EXPECT_EQ(writes[0].key, "ml/train");
  EXPECT_EQ(count_writes(writes, Family::Pods, true), 3u);
  EXPECT_EQ(writes[1].key, "ml/train/train-worker-0");
  EXPECT_EQ(job_key_of_pod_row(writes[1].key), "ml/train");
  FlatReader reader(*writes[0].value);
  EXPECT_FALSE(reader.root<store::JobRecord>().hasPods());
  // Pods in flight say so in their own rows: the job row does not grow with a batch.
  EXPECT_EQ(reader.root<store::JobRecord>().getSlowStart().getInFlight().size(), 0u);
  bool flying = false;
  ASSERT_TRUE(decode_pod_row(*writes[3].value, nullptr, &flying));
  EXPECT_EQ(writes[3].key, "ml/train/train-worker-2");
  EXPECT_TRUE(flying);
  // Nothing changed since (and the spec row is durable): the next write is the job row and its
  // summary.
  m.spec_stored = true;
  EXPECT_EQ(job_writes(m).size(), 2u);
}

TEST(JobRecord, APodEventOfABigJobWritesTheJobRowAndThatPodOnly) {
  auto c = test_clock();
  auto m = running_job(spec_with({{"w", 2000}}), c);
  job_writes(m);  // as created
  m.spec_stored = true;
  report(m, pod_name(m.name(), "w", 7), PodPhase::Succeeded, c);
  auto writes = job_writes(m);
  ASSERT_EQ(writes.size(), 3u);  // the job row, the pod's, the summary
  EXPECT_EQ(writes[1].key, "default/" + m.name() + "/" + pod_name(m.name(), "w", 7));
  auto back = decode_pod_row(*writes[1].value);
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->phase, PodPhase::Succeeded);
}

TEST(JobRecord, AnErasedPodGetsADeleteAndAnErasedJobDeletesEveryRow) {
  auto m = rich_model();
  job_writes(m);
  m.spec_stored = true;
  m.pods.erase("train-worker-1");
  auto writes = job_writes(m);
  ASSERT_EQ(count_writes(writes, Family::Pods, false), 1u);
  EXPECT_EQ(writes[1].key, "ml/train/train-worker-1");
  EXPECT_FALSE(writes[1].value);
  m.pods.erase("train-worker-2");  // erased and never written since: still deleted
  auto erase = job_erase_writes(m);
  EXPECT_EQ(count_writes(erase, Family::Jobs, false), 1u);
  EXPECT_EQ(count_writes(erase, Family::Pods, false), 2u);  // worker-0 and worker-2
  EXPECT_EQ(count_writes(erase, Family::Pods, true) + count_writes(erase, Family::Jobs, true), 0u);
  for (auto f : {Family::Specs, Family::Summaries, Family::Live})
    EXPECT_EQ(count_writes(erase, f, false), 1u);
}

TEST(JobRecord, ARecordWithItsPodsInsideMovesThemIntoRowsOnTheNextWrite) {
  JobModel old = rich_model();
  capnp::MallocMessageBuilder b;
  auto rec = b.initRoot<store::JobRecord>();
  encode(old.job, rec.initJob());
  auto pods = rec.initPods(static_cast<unsigned>(old.pods.size()));
  unsigned i = 0;
  for (const auto& [name, p] : std::as_const(old.pods)) encode(p, pods[i++]);
  auto loaded = load_job(to_bytes(b), {});
  ASSERT_TRUE(loaded) << loaded.error();
  EXPECT_EQ(loaded->pods, old.pods);
  auto writes = job_writes(*loaded);
  EXPECT_EQ(count_writes(writes, Family::Pods, true), 3u);
  FlatReader reader(*writes[0].value);
  EXPECT_FALSE(reader.root<store::JobRecord>().hasPods());
}

TEST(JobRecord, AFailedWriteGivesItsPodChangesBackForTheNext) {
  auto m = rich_model();
  job_writes(m);
  m.spec_stored = true;  // durable
  m.pods.erase("train-worker-1");
  PodTable::Changes first, second;
  auto failed = job_writes(m, nullptr, &first);
  ASSERT_EQ(count_writes(failed, Family::Pods, false), 1u);
  // Taken: without a restore the delete would be lost.
  EXPECT_EQ(count_writes(job_writes(m), Family::Pods, false), 0u);
  m.pods.erase("train-worker-0");
  job_writes(m, nullptr, &second);  // fails too
  m.pods.restore(std::move(second));
  m.pods.restore(std::move(first));
  auto again = job_writes(m);
  EXPECT_EQ(count_writes(again, Family::Pods, false), 2u);
}

TEST(JobRecord, PodsWaitingForANodeHaveNoRowsAndAreMadeAgainWithTheUidsTheirActionsName) {
  auto c = test_clock();
  auto spec = spec_with({{"w", 3}});
  spec.policies = {policy(Event::PodPending, Action::AbortJob, 4000)};
  auto m = pending_job(spec, c);
  ASSERT_EQ(m.delayed.size(), 3u);
  auto writes = job_writes(m);
  EXPECT_EQ(count_writes(writes, Family::Pods, true), 0u);  // nothing placed: no pod rows
  EXPECT_EQ(count_writes(writes, Family::Pods, false), 0u);
  ASSERT_EQ(count_writes(writes, Family::Specs, true), 1u);
  const std::string spec_row = *writes[1].value;
  ASSERT_EQ(writes[1].family, Family::Specs);

  // One is placed: it gets its row.
  m.pods.at(pod_name(m.name(), "w", 1)).node = "n1";
  writes = job_writes(m);
  ASSERT_EQ(count_writes(writes, Family::Pods, true), 1u);
  std::vector<std::string> rows{*writes[1].value};

  // After a restart the others are made again, the same: their pending actions still hold.
  auto back = load_job(*writes[0].value, rows, nullptr, spec_row);
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->pods.size(), 1u);
  sync_job(*back, at(c, c.now_ms + 1000));
  ASSERT_EQ(back->pods.size(), 3u);
  for (const auto& [name, p] : std::as_const(m.pods)) EXPECT_EQ(back->pods.at(name).uid, p.uid);
  EXPECT_EQ(back->delayed, m.delayed);  // none added, none moved

  // Made again by a restart of the job instead (placed one killed and replaced): its row goes.
  auto& placed = m.pods.at(pod_name(m.name(), "w", 1));
  placed.node.clear();  // as if replaced by a new pod of the name that waits for a node
  writes = job_writes(m);
  EXPECT_EQ(count_writes(writes, Family::Pods, false), 1u);
}

TEST(JobRecord, RowsOfAnEarlierJobOfTheNameAreLeftOutAndDeletedOnTheNextWrite) {
  auto old = rich_model();
  std::vector<std::string> rows;
  for (auto& w : job_writes(old))
    if (w.family == Family::Pods) rows.push_back(*w.value);
  auto fresh = rich_model();
  fresh.job.uid = "another-uid";
  std::vector<std::string> stale;
  auto loaded = load_job(encode_job_row(fresh), rows, &stale, encode_spec_row(fresh));
  ASSERT_TRUE(loaded) << loaded.error();
  EXPECT_TRUE(loaded->pods.empty());
  EXPECT_EQ(stale.size(), 3u);
  auto writes = job_writes(*loaded);
  EXPECT_EQ(count_writes(writes, Family::Pods, false), 3u);
}

TEST(JobRecord, ACorruptPodRowFailsTheLoad) {
  auto m = rich_model();
  std::string job_row = encode_job_row(m);
  auto bad = load_job(job_row, {"not a pod row"}, nullptr, encode_spec_row(m));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("pod record"), std::string::npos) << bad.error();
  EXPECT_FALSE(decode_pod_row(std::string(64, '\xff')));
}

TEST(JobRecord, ARecordWithoutSlowStartTakesItsPlacedPendingPodsAsSent) {
  // Before slow start every placed pod was sent to its node at once: they must be killed there,
  // and not taken for pods that wait for their batch.
  JobModel old = rich_model();
  capnp::MallocMessageBuilder b;
  auto rec = b.initRoot<store::JobRecord>();
  encode(old.job, rec.initJob());
  auto pods = rec.initPods(static_cast<unsigned>(old.pods.size()));
  unsigned i = 0;
  for (const auto& [name, p] : std::as_const(old.pods)) encode(p, pods[i++]);
  auto back = decode_job_row(to_bytes(b));
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->creation.next_batch, 1);
  EXPECT_EQ(back->creation.in_flight, std::set<std::string>{"train-worker-2"});
  EXPECT_EQ(back->creation.resume_at_ms, 0);
}

TEST(JobRecord, ADelayedActionWithAnUnknownWordIsSkipped) {
  // A newer binary may write events or actions this one does not know: the rest still loads.
  capnp::MallocMessageBuilder b;
  auto rec = b.initRoot<store::JobRecord>();
  rec.initJob().setUid("u");
  auto delayed = rec.initDelayedActions(2);
  delayed[0].setEvent("PodExploded");
  delayed[0].setAction("AbortJob");
  delayed[0].setDueMs(5);
  delayed[1].setPodName("p");
  delayed[1].setEvent("PodPending");
  delayed[1].setAction("AbortJob");
  delayed[1].setDueMs(7);
  auto back = decode_job_row(to_bytes(b));
  ASSERT_TRUE(back) << back.error();
  ASSERT_EQ(back->delayed.size(), 1u);
  EXPECT_EQ(back->delayed[0].pod_name, "p");
  EXPECT_EQ(back->delayed[0].event, Event::PodPending);
  EXPECT_EQ(back->delayed[0].due_ms, 7);
}

TEST(JobRecord, GarbageBytesGiveAFailure) {
  auto text = decode_job_row("this is not a job record at all, just text");
  EXPECT_FALSE(text);
  EXPECT_NE(text.ok() ? std::string() : text.error(), "");

  std::string bytes(64, '\xff');
  EXPECT_FALSE(decode_job_row(bytes));

  auto whole = encode_job_row(rich_model());
  auto truncated = decode_job_row(std::string_view(whole).substr(0, whole.size() / 2));
  EXPECT_FALSE(truncated);
}

TEST(JobRecord, TheSpecHasARowOfItsOwnWrittenOnceAndDeletedWithTheJob) {
  auto m = rich_model();
  bool wrote = false;
  auto first = job_writes(m, nullptr, nullptr, &wrote);
  EXPECT_TRUE(wrote);
  EXPECT_EQ(count_writes(first, Family::Specs, true), 1u);
  FlatReader row(*first[0].value);
  EXPECT_FALSE(row.root<store::JobRecord>().getJob().hasSpec()) << "the job row does not repeat it";
  // Until a write that holds it is durable, every write holds it: a later one must not make a
  // job row durable without its spec row.
  m.job.status.state.phase = JobPhase::Pending;
  EXPECT_EQ(count_writes(job_writes(m), Family::Specs, true), 1u);
  m.spec_stored = true;  // a write that held it is durable
  m.job.status.state.phase = JobPhase::Running;
  bool again = false;
  EXPECT_EQ(count_writes(job_writes(m, nullptr, nullptr, &again), Family::Specs, true), 0u);
  EXPECT_FALSE(again);
  auto erase = job_erase_writes(m);
  EXPECT_EQ(count_writes(erase, Family::Specs, false), 1u);
  EXPECT_EQ(count_writes(erase, Family::Specs, true), 0u);
}

TEST(JobRecord, ARecordWithItsSpecInsideIsReadAndTheNextWriteGivesTheSpecItsRow) {
  JobModel old = rich_model();
  capnp::MallocMessageBuilder b;
  encode(old.job, b.initRoot<store::JobRecord>().initJob());  // as written before spec rows
  auto loaded = load_job(to_bytes(b), {});
  ASSERT_TRUE(loaded) << loaded.error();
  EXPECT_EQ(loaded->job.spec, old.job.spec);
  EXPECT_FALSE(loaded->spec_stored);
  // Its next write gives the spec its row and drops it from the job row: read back, the same.
  std::string job_row, spec_row;
  for (auto& w : job_writes(*loaded)) {
    if (w.family == Family::Jobs) job_row = *w.value;
    if (w.family == Family::Specs) spec_row = *w.value;
  }
  ASSERT_FALSE(spec_row.empty());
  FlatReader row(job_row);
  EXPECT_FALSE(row.root<store::JobRecord>().getJob().hasSpec());
  auto again = load_job(job_row, {}, nullptr, spec_row);
  ASSERT_TRUE(again) << again.error();
  EXPECT_EQ(again->job.spec, old.job.spec);
}

TEST(JobRecord, AJobRowWithoutItsSpecRowOrWithAnotherJobsFailsTheLoad) {
  auto m = rich_model();
  auto missing = load_job(encode_job_row(m), {});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("no spec row"), std::string::npos) << missing.error();
  auto other = rich_model();
  other.job.uid = "someone-else";
  auto wrong = load_job(encode_job_row(m), {}, nullptr, encode_spec_row(other));
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().find("belongs to job someone-else"), std::string::npos) << wrong.error();
}

TEST(JobRecord, TheLiveIndexHoldsAJobUntilItIsSettledAndAgainWhenItIsNot) {
  auto c = test_clock();
  auto m = running_job(spec_with({{"w", 2}}), c);
  EXPECT_EQ(count_writes(job_writes(m), Family::Live, true), 1u);
  m.spec_stored = true;
  EXPECT_EQ(count_writes(job_writes(m), Family::Live, true), 0u);  // said once
  report(m, pod_name(m.name(), "w", 0), PodPhase::Succeeded, c);
  report(m, pod_name(m.name(), "w", 1), PodPhase::Succeeded, c);
  ASSERT_EQ(m.job.status.state.phase, JobPhase::Completed);
  ASSERT_TRUE(is_settled(m));
  auto writes = job_writes(m);
  EXPECT_EQ(count_writes(writes, Family::Live, false), 1u);  // out of the index
  EXPECT_EQ(count_writes(job_writes(m), Family::Live, false), 0u);
  // An Aborted job is settled too, and a resume brings it back into the index.
  auto a = running_job(spec_with({{"w", 1}}), c);
  job_writes(a);
  on_command(a, Action::AbortJob, "cmd-1", at(c, c.now_ms + 1000));
  report(a, pod_name(a.name(), "w", 0), PodPhase::Failed, c);
  ASSERT_EQ(a.job.status.state.phase, JobPhase::Aborted);
  ASSERT_TRUE(is_settled(a));
  EXPECT_EQ(count_writes(job_writes(a), Family::Live, false), 1u);
  on_command(a, Action::ResumeJob, "cmd-2", at(c, c.now_ms + 2000));
  ASSERT_FALSE(is_settled(a));
  EXPECT_EQ(count_writes(job_writes(a), Family::Live, true), 1u);
  // Not known (a failed write, a load): the next write says it either way.
  m.live_row.reset();
  EXPECT_EQ(count_writes(job_writes(m), Family::Live, false), 1u);
}

// A settled job has one History row, keyed by when it finished, and each row is counted in the
// same write: retention reads the count and deletes the oldest rows first.
TEST(JobRecord, ASettledJobHasOneCountedHistoryRowUntilItIsLiveAgainOrGone) {
  auto c = test_clock();
  auto history = [](const std::vector<Write>& writes) {
    std::vector<std::string> out;
    for (const auto& w : writes) {
      if (w.family == Family::History) out.push_back((w.value ? "+" : "-") + w.key);
      if (w.add != 0) out.push_back("count" + std::to_string(w.add));
    }
    return out;
  };
  auto m = running_job(spec_with({{"w", 1}}), c);
  EXPECT_TRUE(history(job_writes(m)).empty());
  m.spec_stored = true;
  report(m, pod_name(m.name(), "w", 0), PodPhase::Succeeded, at(c, c.now_ms + 5000));
  ASSERT_TRUE(is_settled(m));
  const auto key = history_key(m.job.status.state.last_transition_ms, m.key());
  EXPECT_EQ(key.substr(16), "/" + m.key());
  EXPECT_EQ(history(job_writes(m)), (std::vector<std::string>{"+" + key, "count1"}));
  EXPECT_TRUE(history(job_writes(m)).empty());  // said once
  auto parsed = parse_history_key(key);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->first, m.job.status.state.last_transition_ms);
  EXPECT_EQ(parsed->second, m.key());
  EXPECT_FALSE(parse_history_key("12/ns/name"));
  EXPECT_FALSE(parse_history_key("00000000000000x1/ns/name"));
  // Gone: the row goes with it.
  EXPECT_EQ(history(job_erase_writes(m)), (std::vector<std::string>{"-" + key, "count-1"}));

  // Aborted, then resumed: live again, out of the History until it settles again.
  auto a = running_job(spec_with({{"w", 1}}), c);
  job_writes(a);
  on_command(a, Action::AbortJob, "cmd-1", at(c, c.now_ms + 1000));
  report(a, pod_name(a.name(), "w", 0), PodPhase::Failed, c);
  ASSERT_TRUE(is_settled(a));
  auto aborted = history_key(finished_ms(a), a.key());
  EXPECT_EQ(history(job_writes(a)), (std::vector<std::string>{"+" + aborted, "count1"}));
  on_command(a, Action::ResumeJob, "cmd-2", at(c, c.now_ms + 2000));
  EXPECT_EQ(history(job_writes(a)), (std::vector<std::string>{"-" + aborted, "count-1"}));
  EXPECT_TRUE(history(job_erase_writes(a)).empty());  // a live job has no row to delete
}

TEST(JobRecord, TheSummaryRowCarriesWhatATableShowsAndNoEvents) {
  auto m = rich_model();
  m.job.spec.labels["team"] = "ml";
  m.job.spec.queue = "research";
  m.job.status.task_status_count["worker"].running = 1;
  m.job.status.running_duration_ms = 1800;
  m.job.status.pod_group_phase = "Inqueue";
  auto row = encode_summary_row(m);
  FlatReader reader(row);
  auto job = reader.root<api::Job>();
  EXPECT_EQ(std::string(job.getUid().cStr()), m.job.uid);
  EXPECT_EQ(job.getCreatedMs(), m.job.created_ms);
  EXPECT_EQ(std::string(job.getSpec().getName().cStr()), "train");
  EXPECT_EQ(std::string(job.getSpec().getNamespace().cStr()), "ml");
  EXPECT_EQ(std::string(job.getSpec().getQueue().cStr()), "research");
  EXPECT_EQ(job.getSpec().getLabels().size(), 1u);
  EXPECT_EQ(job.getSpec().getTasks().size(), 0u);
  EXPECT_EQ(job.getEvents().size(), 0u);
  auto status = job.getStatus();
  EXPECT_EQ(std::string(status.getState().getPhase().cStr()),
            std::string(to_string(m.job.status.state.phase)));
  // What the table, -o wide and a pod group show...
  EXPECT_EQ(std::string(status.getState().getReason().cStr()), "PodFailed");
  EXPECT_EQ(status.getState().getLastTransitionMs(), 1'700'000'003'000);
  EXPECT_EQ(status.getRunning(), 1);
  EXPECT_EQ(status.getFailed(), 1);
  EXPECT_EQ(status.getMinAvailable(), 3);
  EXPECT_EQ(status.getRetryCount(), 2);
  EXPECT_EQ(status.getVersion(), 3);
  EXPECT_EQ(std::string(status.getPodGroupPhase().cStr()), "Inqueue");
  // ...and not what grows with the job's history (a get reads that from the job row).
  EXPECT_EQ(status.getConditions().size(), 0u);
  EXPECT_EQ(status.getTaskStatusCount().size(), 0u);
  EXPECT_EQ(status.getRunningDurationMs(), 0);
  EXPECT_LT(row.size(), encode_job_row(m).size());
}
}  // namespace
}  // namespace caldera
