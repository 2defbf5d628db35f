#include "actors/directory/submission.hpp"

#include <algorithm>
#include <set>

#include <capnp/message.h>
#include <fmt/format.h>

#include "actors/api/responses.hpp"
#include "actors/jobflow/core/flow_submission.hpp"
#include "messages/admission/batch_job_validation.hpp"
#include "messages/codec/flat.hpp"
#include "messages/model/batch_job.hpp"
#include "messages/model/node_info.hpp"

namespace caldera {
void admit_jobs(std::vector<Parsed<JobSpec>>& jobs, const AdmissionContext& ctx,
                const std::function<bool(const std::string&)>& job_taken, Diagnostics& diags) {
  std::set<std::string> seen;  // keys earlier in this submission
  for (auto& j : jobs) {
    apply_job_defaults(j.value);
    const auto key = j.value.key();
    const bool taken = job_taken(key) || !seen.insert(key).second;
    admit_one(
        j, taken, kJobResource, [&](const JobSpec& s, Diagnostics& d) { admit(s, ctx, d); }, diags);
  }
}

namespace {

// What caldera itself takes besides what the API server checks: a template it can run, pods it
// can keep (every pod of a job stays in its table), times it can count in milliseconds.
void check_caldera_limits(const BatchJobSpec& job, const JobSpec& spec, const AdmissionContext& ctx,
                          Diagnostics& d) {
  if (!spec.tasks.empty()) admit_pod_template(spec.tasks.front(), "spec", ctx, d);
  auto at_most = [&](const char* field, std::optional<int64_t> v, int64_t most, const char* why) {
    if (v && *v > most)
      d.error(std::string("spec.") + field,
              std::to_string(*v) + " is more than " + std::to_string(most) + " (" + why + ")");
  };
  const char* kept = "caldera keeps every pod of a job";
  at_most("parallelism", job.parallelism, kMaxJobReplicas, kept);
  at_most("completions", job.completions, kMaxJobReplicas, kept);
  const char* ms = "caldera counts it in milliseconds";
  at_most("activeDeadlineSeconds", job.active_deadline_seconds, INT64_MAX / 1000, ms);
  at_most("ttlSecondsAfterFinished", job.ttl_seconds_after_finished, INT32_MAX,
          "Kubernetes' limit");
}

}  // namespace

std::vector<Parsed<JobSpec>> admit_batch_jobs(
    std::vector<Parsed<BatchJobSpec>>& jobs, const AdmissionContext& ctx,
    const std::function<bool(const std::string&)>& job_taken, Diagnostics& diags) {
  std::vector<Parsed<JobSpec>> out;
  std::set<std::string> seen;  // keys earlier in this submission
  for (auto& j : jobs) {
    if (j.value.namespace_.empty()) j.value.namespace_ = "default";
    // The API server's default: a Job that says neither is one pod that must succeed once.
    if (!j.value.completions && !j.value.parallelism) j.value.completions = j.value.parallelism = 1;
    Diagnostics one;
    validate_batch_job(j.value, one, j.prefix);
    auto spec = to_job_spec(j.value);  // the document stays whole: scheduling names are read next
    Diagnostics limits;
    check_caldera_limits(j.value, spec, ctx, limits);
    for (auto& e : limits.errors) one.error(prefixed(j.prefix, e.path), std::move(e.message));
    for (auto& w : limits.warnings) one.warn(prefixed(j.prefix, w.path), std::move(w.message));
    const auto key = spec.key();
    if (job_taken(key) || !seen.insert(key).second)
      one.error(prefixed(j.prefix, "metadata.name"),
                std::string(kBatchJobResource) + " \"" + spec.name + "\" already exists");
    for (auto& e : one.errors) diags.errors.push_back(std::move(e));
    for (auto& w : one.warnings) diags.warnings.push_back(std::move(w));
    if (one.ok()) out.push_back({std::move(spec), j.prefix, j.document});
  }
  return out;
}

std::optional<std::string> etc_volcano_warning(const JobSpec& spec,
                                               const std::vector<std::string>& without) {
  if (spec.batch || without.empty()) return std::nullopt;
  // What Volcano mounts where, and where a pod here finds it instead.
  std::vector<std::string> what, where;
  for (const auto& p : spec.plugins) {
    if ((p.name == "svc" || p.name == "mpi") &&
        std::find(where.begin(), where.end(), "$VC_POD_DIR/volcano") == where.end()) {
      what.push_back("their svc files at /etc/volcano");
      where.push_back("$VC_POD_DIR/volcano");
    }
    if (p.name == "ssh") {
      what.push_back("their ssh keys at " + plugin_arg(p, "ssh-key-file-path", kSshKeyFilePath));
      where.push_back("$VC_POD_DIR/.ssh");
    }
  }
  if (what.empty()) return std::nullopt;
  std::string nodes = without.front();
  if (without.size() > 1) nodes += " and " + std::to_string(without.size() - 1) + " more";
  return fmt::format(
      "node {} cannot show pods {} (its label {} is false): pods placed there "
      "find them in {}",
      nodes, fmt::join(what, " or "), kPrivateEtcLabel, fmt::join(where, " and "));
}

std::string rejection_response(uint64_t id, const Diagnostics& diags) {
  std::vector<ApiError> errors;
  for (const auto& e : diags.errors) {
    bool exists = e.message.find("already exists") != std::string::npos;
    errors.push_back(
        {exists ? api::Error::Code::ALREADY_EXISTS : api::Error::Code::INVALID_ARGUMENT, e.message,
         e.path});
  }
  return error_response(id, errors, warning_lines(diags));
}

void PendingSubmit::finish() {
  if (--left > 0) return;
  if (!failures.empty()) {
    rp.deliver(error_response(id, api::Error::Code::INTERNAL, failures.front()));
    return;
  }
  SmallMessageBuilder b;
  auto r = b.initRoot<api::Response>();
  r.setId(id);
  set_warnings(r, warnings);
  std::stable_sort(created.begin(), created.end(),
                   [](const Created& a, const Created& b) { return a.document < b.document; });
  auto list = r.initSubmitted(static_cast<unsigned>(created.size()));
  for (unsigned i = 0; i < created.size(); ++i) {
    const auto& c = created[i];
    // A key is namespace/name, or namespace/jobs.batch/name (JobSpec::key).
    list[i].setKind(c.kind);
    list[i].setNamespace(c.key.substr(0, c.key.find('/')));
    list[i].setName(c.key.substr(c.key.rfind('/') + 1));
    list[i].setUid(c.uid);
  }
  rp.deliver(to_bytes(b));
}

}  // namespace caldera
