#include "actors/job/job_record.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include <capnp/message.h>
#include <fmt/format.h>
#include <kj/exception.h>

#include "actors/job/core/batch_job_controller.hpp"
#include "actors/job/core/job_controller.hpp"
#include "messages/codec/batch_job_codec.hpp"
#include "messages/codec/codec.hpp"
#include "messages/codec/flat.hpp"
#include "messages/model/completion_indexes.hpp"
#include "messages/store.capnp.h"

namespace caldera {

capnp::ReaderOptions record_reader_options() {
  capnp::ReaderOptions o;
  o.traversalLimitInWords = kRecordTraversalWords;
  return o;
}

namespace {

void encode_bookkeeping(const BatchBookkeeping& in, store::BatchJobBookkeeping::Builder out) {
  auto backoff = out.initBackoff(static_cast<unsigned>(in.backoff.size()));
  unsigned i = 0;
  for (const auto& [index, b] : in.backoff) {
    backoff[i].setIndex(index);
    backoff[i].setFailuresSinceSuccess(b.failures_since_success);
    backoff[i++].setLastFailureMs(b.last_failure_ms);
  }
  auto ignored = out.initIgnoredFailures(static_cast<unsigned>(in.ignored_failures.size()));
  i = 0;
  for (const auto& [index, n] : in.ignored_failures) {
    ignored[i].setIndex(index);
    ignored[i++].setCount(n);
  }
  out.setCreateAtMs(in.create_at_ms);
  auto counted = out.initCountedTerminating(static_cast<unsigned>(in.counted_terminating.size()));
  i = 0;
  for (const auto& name : in.counted_terminating) counted.set(i++, name);
}

void decode_bookkeeping(store::BatchJobBookkeeping::Reader in, BatchBookkeeping& b) {
  for (auto r : in.getBackoff())
    b.backoff[r.getIndex()] = {r.getFailuresSinceSuccess(), r.getLastFailureMs()};
  for (auto r : in.getIgnoredFailures()) b.ignored_failures[r.getIndex()] = r.getCount();
  b.create_at_ms = in.getCreateAtMs();
  for (auto name : in.getCountedTerminating()) b.counted_terminating.emplace(name.cStr());
}

// A Kubernetes Job's index sets are its status's, in interval form (read once the spec is).
void read_index_sets(JobModel& m) {
  if (!m.job.status.batch || !m.job.spec.batch) return;
  auto& b = m.batch;
  const int32_t completions = m.job.spec.batch->completions.value_or(0);
  auto read = [completions](const std::string& text, std::set<int32_t>& out) {
    auto intervals = parse_index_intervals(text, completions);
    if (!intervals) return;
    for (const auto& [lo, hi] : *intervals)
      for (int32_t i = lo; i <= hi; ++i) out.insert(i);
  };
  read(m.job.status.batch->completed_indexes, b.succeeded_indexes);
  read(m.job.status.batch->failed_indexes, b.failed_indexes);
}

}  // namespace

std::string encode_job_row(const JobModel& m) {
  SmallMessageBuilder b;
  auto rec = b.initRoot<store::JobRecord>();
  encode_without_spec(m.job, rec.initJob());  // the spec has a row of its own
  auto ids = rec.initCommandIds(static_cast<unsigned>(m.command_ids.size()));
  for (unsigned j = 0; j < m.command_ids.size(); ++j) ids.set(j, m.command_ids[j]);
  auto delayed = rec.initDelayedActions(static_cast<unsigned>(m.delayed.size()));
  for (unsigned j = 0; j < m.delayed.size(); ++j) {
    const auto& d = m.delayed[j];
    auto out = delayed[j];
    out.setPodName(d.pod_name);
    out.setPodUid(d.pod_uid);
    out.setTask(d.task);
    out.setPartition(d.partition);
    out.setEvent(std::string(to_string(d.event)));
    out.setAction(std::string(to_string(d.action)));
    out.setDueMs(d.due_ms);
  }
  std::map<std::string, std::string> retries;
  for (const auto& [task, n] : m.task_retries) retries[task] = std::to_string(n);
  encode_map(retries, rec.initTaskRetries(static_cast<unsigned>(retries.size())));
  rec.setRetriesExhausted(m.retries_exhausted);
  const auto& c = m.creation;
  auto ss = rec.initSlowStart();
  ss.setNextBatch(c.next_batch);
  // The pods in flight are marked in their own rows: the job row stays small while a large
  // batch is out.
  ss.setRoundCreated(c.round_created);
  ss.setRoundBatches(c.round_batches);
  ss.setResumeAtMs(c.resume_at_ms);
  ss.setStoppedRounds(c.stopped_rounds);
  ss.setBatchSentMs(c.batch_sent_ms);
  if (m.job.spec.batch) encode_bookkeeping(m.batch, rec.initBatch());
  return to_bytes(b);
}

std::string encode_spec_row(const JobModel& m) {
  SmallMessageBuilder b;
  auto rec = b.initRoot<store::JobSpecRecord>();
  rec.setJobUid(m.job.uid);
  encode(m.job.spec, rec.initSpec());
  if (m.ssh_keys) {
    auto keys = rec.initSshKeys();
    keys.setPrivateKey(m.ssh_keys->private_key);
    keys.setPublicKey(m.ssh_keys->public_key);
  }
  return to_bytes(b);
}

std::string encode_summary_row(const JobModel& m) {
  SmallMessageBuilder b;
  auto out = b.initRoot<api::Job>();
  out.setUid(m.job.uid);
  out.setCreatedMs(m.job.created_ms);
  encode_counts(m.job.status, out.initStatus());
  const auto& spec = m.job.spec;
  auto to = out.initSpec();
  to.setName(spec.name);
  to.setNamespace(spec.namespace_);
  encode_map(spec.labels, to.initLabels(static_cast<unsigned>(spec.labels.size())));
  to.setQueue(spec.queue);
  to.setMinAvailable(spec.min_available.value_or(-1));
  // A Kubernetes Job's own fields: its kind, and its completions for the table.
  if (spec.batch) encode(*spec.batch, to.initBatch());
  return to_bytes(b);
}

Result<JobModel> decode_job_row(std::string_view bytes) {
  try {
    FlatReader reader(bytes, record_reader_options());
    auto rec = reader.root<store::JobRecord>();
    JobModel m;
    m.job = decode(rec.getJob());
    for (auto p : rec.getPods()) {
      auto pod = decode(p);
      auto name = pod.name;
      m.pods.emplace(std::move(name), std::move(pod));
    }
    m.pods.take_changes();
    if (rec.hasPods()) m.pods.mark_all_changed();  // legacy: the next commit writes pod rows
    for (auto id : rec.getCommandIds()) m.command_ids.emplace_back(id.cStr());
    for (auto d : rec.getDelayedActions()) {
      auto event = parse_event(d.getEvent().cStr());
      auto action = parse_action(d.getAction().cStr());
      if (!event || !action) continue;  // written by a newer binary with more words: skip
      m.delayed.push_back({d.getPodName(), d.getPodUid(), d.getTask(), d.getPartition(), *event,
                           *action, d.getDueMs()});
    }
    for (const auto& [task, n] : decode_map(rec.getTaskRetries()))
      m.task_retries[task] = std::atoi(n.c_str());
    m.retries_exhausted = rec.getRetriesExhausted();
    auto ss = rec.getSlowStart();
    m.creation.next_batch = std::max(1, ss.getNextBatch());
    for (auto name : ss.getInFlight()) m.creation.in_flight.emplace(name.cStr());
    m.creation.round_created = ss.getRoundCreated();
    m.creation.round_batches = ss.getRoundBatches();
    m.creation.resume_at_ms = ss.getResumeAtMs();
    m.creation.stopped_rounds = ss.getStoppedRounds();
    m.creation.batch_sent_ms = ss.getBatchSentMs();
    if (rec.hasBatch()) decode_bookkeeping(rec.getBatch(), m.batch);
    if (!rec.hasSlowStart()) {
      // Written before slow start: every placed pod still Pending was sent to its node then.
      for (const auto& [name, p] : std::as_const(m.pods))
        if (!p.node.empty() && p.phase == PodPhase::Pending && !p.out_of_sync)
          m.creation.in_flight.insert(name);
    }
    return m;
  } catch (const kj::Exception& e) {
    return Failure{std::string("corrupt job record: ") + e.getDescription().cStr()};
  }
}

std::string pod_row_key(const std::string& job_key, const std::string& pod_name) {
  return job_key + "/" + pod_name;
}

std::string history_key(int64_t finished_ms, std::string_view job_key) {
  return fmt::format("{:016d}/{}", std::max<int64_t>(finished_ms, 0), job_key);
}

int64_t finished_ms(int64_t last_transition_ms) {
  return std::max<int64_t>(last_transition_ms, 1);
}

int64_t finished_ms(const JobModel& m) {
  return finished_ms(m.job.status.state.last_transition_ms);
}

std::optional<std::pair<int64_t, std::string>> parse_history_key(std::string_view key) {
  if (key.size() < 18 || key[16] != '/') return std::nullopt;
  int64_t ms = 0;
  for (size_t i = 0; i < 16; ++i) {
    if (key[i] < '0' || key[i] > '9') return std::nullopt;
    ms = ms * 10 + (key[i] - '0');
  }
  return std::pair<int64_t, std::string>{ms, std::string(key.substr(17))};
}

std::string_view job_key_of_pod_row(std::string_view key) {
  auto slash = key.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return {};
  return key.substr(0, slash);
}

std::string encode_pod_row(const Pod& p, const std::string& job_uid, bool in_flight) {
  SmallMessageBuilder b;
  auto rec = b.initRoot<store::PodRecord>();
  encode(p, rec.initPod());
  rec.setJobUid(job_uid);
  rec.setInFlight(in_flight);
  return to_bytes(b);
}

Result<Pod> decode_pod_row(std::string_view bytes, std::string* job_uid, bool* in_flight) {
  try {
    FlatReader reader(bytes, record_reader_options());
    auto rec = reader.root<store::PodRecord>();
    Pod p = decode(rec.getPod());
    if (job_uid) *job_uid = rec.getJobUid();
    if (in_flight) *in_flight = rec.getInFlight();
    if (p.name.empty()) return Failure{"corrupt pod record: no pod name"};
    return p;
  } catch (const kj::Exception& e) {
    return Failure{std::string("corrupt pod record: ") + e.getDescription().cStr()};
  }
}

namespace {

// A settled job has one History row, keyed by when it finished; a job that goes live again (a
// resume) or goes loses it.
void history_writes(JobModel& m, bool no_row, std::vector<Write>& out) {
  const int64_t want = no_row ? 0 : finished_ms(m);
  if (m.history_ms == want) return;
  if (m.history_ms != 0) {
    out.push_back({Family::History, history_key(m.history_ms, m.key()), std::nullopt});
    out.push_back(counter_add(kFinishedJobsCounter, -1));
  }
  if (want != 0) {
    out.push_back({Family::History, history_key(want, m.key()), m.job.uid});
    out.push_back(counter_add(kFinishedJobsCounter, 1));
  }
  m.history_ms = want;
}

}  // namespace

std::vector<Write> job_writes(JobModel& m, std::string* job_row, PodTable::Changes* taken,
                              bool* wrote_spec) {
  std::vector<Write> out;
  const auto key = m.key();
  auto row = encode_job_row(m);
  if (job_row) *job_row = row;
  out.push_back({Family::Jobs, key, std::move(row)});
  auto changes = m.pods.take_changes();
  // A pod waiting for a node has no row: it is made again after a restart (with the uid its
  // pending actions name), so pods that cannot be placed yet cost no writes.
  auto write = [&](const std::string& name, const Pod* p) {
    if (p && !is_waiting_for_node(*p)) {
      out.push_back({Family::Pods, pod_row_key(key, name),
                     encode_pod_row(*p, m.job.uid, m.creation.in_flight.count(name) > 0)});
      m.pods.set_stored(name, true);
    } else if (m.pods.stored(name)) {
      out.push_back({Family::Pods, pod_row_key(key, name), std::nullopt});
      m.pods.set_stored(name, false);
      changes.unstored.push_back(name);
    }
  };
  if (changes.all)
    for (const auto& [name, p] : std::as_const(m.pods)) write(name, &p);
  for (const auto& name : changes.names) {
    auto it = std::as_const(m.pods).find(name);
    if (it == m.pods.cend())
      write(name, nullptr);
    else if (!changes.all)
      write(name, &it->second);
  }
  // Until a write that holds it is durable (the caller sets spec_stored then), every write holds
  // it: a later write must not make a job row durable whose spec row is not.
  if (!m.spec_stored) {
    out.push_back({Family::Specs, key, encode_spec_row(m)});
    if (wrote_spec) *wrote_spec = true;
  }
  out.push_back({Family::Summaries, key, encode_summary_row(m)});
  const bool live = !is_settled(m);
  if (m.live_row != live) {
    out.push_back({Family::Live, key, live ? std::optional<std::string>(m.job.uid) : std::nullopt});
    m.live_row = live;
  }
  // A suspended Kubernetes Job is settled (nothing runs until a patch) but not finished: it is no
  // history for retention to delete.
  const bool unfinished = m.job.spec.batch && !batch_job_finished(m);
  history_writes(m, live || unfinished, out);
  if (taken) *taken = std::move(changes);
  return out;
}

std::vector<Write> job_erase_writes(JobModel& m, PodTable::Changes* taken) {
  const auto key = m.key();
  std::vector<Write> out{{Family::Jobs, key, std::nullopt},
                         {Family::Specs, key, std::nullopt},
                         {Family::Summaries, key, std::nullopt},
                         {Family::Live, key, std::nullopt}};
  m.live_row = false;
  history_writes(m, true, out);
  auto changes = m.pods.take_changes();
  for (const auto& name : m.pods.stored_names()) {
    out.push_back({Family::Pods, pod_row_key(key, name), std::nullopt});
    changes.unstored.push_back(name);
  }
  for (const auto& name : changes.unstored) m.pods.set_stored(name, false);
  if (taken) *taken = std::move(changes);
  return out;
}

std::string pod_page(const JobModel& m, const std::string& after, uint32_t limit) {
  limit = std::max<uint32_t>(limit, 1);
  SmallMessageBuilder b;
  auto r = b.initRoot<api::Response>();
  std::vector<const Pod*> page;
  bool more = false;
  for (auto it = m.pods.map().upper_bound(after); it != m.pods.end(); ++it) {
    if (is_discarded(it->second)) continue;
    if (page.size() == limit) {
      more = true;
      break;
    }
    page.push_back(&it->second);
  }
  auto list = r.initPods(static_cast<unsigned>(page.size()));
  for (unsigned i = 0; i < page.size(); ++i) encode(*page[i], list[i]);
  if (more) r.setContinue(page.back()->name);
  return to_bytes(b);
}

Result<JobModel> load_job(std::string_view job_row, const std::vector<std::string>& pod_rows,
                          std::vector<std::string>* stale,
                          std::optional<std::string_view> spec_row) {
  auto m = decode_job_row(job_row);
  if (!m) return m;
  // A spec always has a name: a row without one was written after specs had rows of their own.
  if (m->job.spec.name.empty()) {
    if (!spec_row) return Failure{"job record " + m->job.uid + " has no spec row"};
    try {
      FlatReader reader(*spec_row, record_reader_options());
      auto rec = reader.root<store::JobSpecRecord>();
      if (std::string_view(rec.getJobUid().cStr()) != m->job.uid)
        return Failure{"the spec row belongs to job " + std::string(rec.getJobUid().cStr()) +
                       ", not " + m->job.uid};
      Diagnostics ignored;  // our own data, admitted when the job was
      m->job.spec = decode(rec.getSpec(), ignored);
      if (rec.hasSshKeys())
        m->ssh_keys = SshKeyPair{rec.getSshKeys().getPrivateKey(), rec.getSshKeys().getPublicKey()};
    } catch (const kj::Exception& e) {
      return Failure{std::string("corrupt spec record: ") + e.getDescription().cStr()};
    }
    m->spec_stored = true;
  }
  const bool legacy = m->pods.changed();
  std::vector<std::string> stale_names;
  for (const auto& row : pod_rows) {
    std::string owner;
    bool flying = false;
    auto p = decode_pod_row(row, &owner, &flying);
    if (!p) return Failure{p.error()};
    m->pods.set_stored(p->name, true);  // its row is there, ours or stale
    if (owner != m->job.uid) {
      stale_names.push_back(p->name);
      continue;
    }
    if (flying) m->creation.in_flight.insert(p->name);
    auto name = p->name;
    m->pods.emplace(std::move(name), std::move(*p));
  }
  m->pods.take_changes();
  if (legacy) m->pods.mark_all_changed();
  for (const auto& name : stale_names) m->pods.erase(name);  // absent: the next write deletes it
  if (stale) *stale = std::move(stale_names);
  read_index_sets(*m);
  return m;
}

}  // namespace caldera
