// A job's durable form: one row in "jobs" (the Job and the controller's bookkeeping) and one row
// per pod in "pods", so that what a pod event writes does not grow with the job.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <capnp/message.h>

#include "messages/codec/flat.hpp"
#include "messages/store.capnp.h"

#include "actors/job/core/job_model.hpp"
#include "messages/model/result.hpp"
#include "storage/store.hpp"

namespace caldera {

// Our own records are bounded by admission (request size, replicas), not by a reader default:
// a record that was written can always be read back.
inline constexpr uint64_t kRecordTraversalWords = uint64_t{1} << 26;  // 512 MiB
capnp::ReaderOptions record_reader_options();

// The "jobs" row: everything but the pods and the spec.
std::string encode_job_row(const JobModel& m);
// The "specs" row (store::JobSpecRecord): the job's spec, written once.
std::string encode_spec_row(const JobModel& m);
// The "summaries" row: an api::Job with what a table of jobs shows (uid, creation, the status's
// state and counts without conditions or per-task counts, and the spec's name, namespace,
// labels, queue and minAvailable; no events). Lists of jobs are read from these rows, a page at
// a time.
std::string encode_summary_row(const JobModel& m);
// Fails (never throws) on bytes that are not a JobRecord. A record written before pods had rows
// of their own still carries them: they are loaded and marked changed, so that the next commit
// moves them into rows. Likewise a record written before specs had rows carries its spec; other
// rows have none, and load_job takes it from the spec row.
Result<JobModel> decode_job_row(std::string_view bytes);

// "namespace/job/pod": a job's pod rows sort together, right after nothing else.
std::string pod_row_key(const std::string& job_key, const std::string& pod_name);
// The job key of a pod row key, or "" for a key that is not one.
std::string_view job_key_of_pod_row(std::string_view key);
std::string encode_pod_row(const Pod& p, const std::string& job_uid, bool in_flight = false);
Result<Pod> decode_pod_row(std::string_view bytes, std::string* job_uid = nullptr,
                           bool* in_flight = nullptr);

// "<finished ms, 16 digits>/namespace/name": a settled job's History row, oldest first.
std::string history_key(int64_t finished_ms, std::string_view job_key);
// When a settled job finished (its last transition, at least 1): its History row's time.
int64_t finished_ms(const JobModel& m);
int64_t finished_ms(int64_t last_transition_ms);
// The finish time and job key of a History key; nullopt for a key that is not one.
std::optional<std::pair<int64_t, std::string>> parse_history_key(std::string_view key);

// The writes that bring the store up to `m`: its job row, its summary row, its entry in the
// live index while it is not settled (is_settled), else its History row (keyed by its last
// transition, and counted in kFinishedJobsCounter), and a put or delete for every pod changed
// since the last call. The changes are taken from m.pods (into `taken`, so that a write
// that fails can give them back with PodTable::restore).
// The spec row goes with every write until one that holds it is durable (`wrote_spec` says a
// write holds it; the caller then sets m.spec_stored).
std::vector<Write> job_writes(JobModel& m, std::string* job_row = nullptr,
                              PodTable::Changes* taken = nullptr, bool* wrote_spec = nullptr);
// The writes that remove the job: its job, spec, summary, live and History rows and every pod
// row it has or had.
std::vector<Write> job_erase_writes(JobModel& m, PodTable::Changes* taken = nullptr);

// A Response with up to `limit` of the pods a user sees (Volcano deletes the ones the controller
// killed), by name after `after`; `continue` names the last one when more follow.
std::string pod_page(const JobModel& m, const std::string& after, uint32_t limit);

// A model from its job row and pod rows (the recovery path; also a test's round trip). Rows
// that belong to another job of the same name (an earlier one whose rows outlived it) are left
// out, their pod names in `stale`.
// `spec_row`: the job's row in "specs", if there is one.
Result<JobModel> load_job(std::string_view job_row, const std::vector<std::string>& pod_rows,
                          std::vector<std::string>* stale = nullptr,
                          std::optional<std::string_view> spec_row = std::nullopt);

// Reads a job's two rows in place: fn(the job row's Job, the spec row's spec, or a default
// reader when there is no spec row).
template <class Fn>
void read_rows(const std::string& record, const std::string& spec, Fn&& fn) {
  FlatReader job(FlatReader::Borrow{}, record, record_reader_options());
  std::optional<FlatReader> spec_row;
  if (!spec.empty()) spec_row.emplace(FlatReader::Borrow{}, spec, record_reader_options());
  fn(job.root<store::JobRecord>().getJob(),
     spec_row ? spec_row->root<store::JobSpecRecord>().getSpec() : api::JobSpec::Reader());
}

// A client's Job: the durable job row's Job, copied where `place` puts it (it returns the
// copy), with the spec from its own row.
template <class Place>
void fill_job(const std::string& record, const std::string& spec, Place&& place) {
  read_rows(record, spec, [&](api::Job::Reader job, api::JobSpec::Reader from) {
    api::Job::Builder out = place(job);
    if (!spec.empty()) out.setSpec(from);
  });
}

// The same as a message of its own, for watch events.
inline void fill_job(capnp::MessageBuilder& b, const std::string& record, const std::string& spec) {
  fill_job(record, spec, [&](api::Job::Reader in) {
    b.setRoot(in);
    return b.getRoot<api::Job>();
  });
}

}  // namespace caldera
