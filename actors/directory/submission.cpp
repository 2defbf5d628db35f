#include "actors/directory/submission.hpp"

#include <algorithm>
#include <set>

#include <capnp/message.h>

#include "actors/api/responses.hpp"
#include "actors/jobflow/core/flow_submission.hpp"
#include "messages/admission/batch_job_validation.hpp"
#include "messages/codec/flat.hpp"

namespace caldera {
void admit_jobs(std::vector<Parsed<JobSpec>>& jobs, const AdmissionContext& ctx,
                const std::function<bool(const std::string&)>& job_taken, Diagnostics& diags) {
  std::set<std::string> seen;  // keys earlier in this submission
  for (auto& j : jobs) {
    apply_defaults(j.value);
    const auto key = j.value.key();
    const bool taken = job_taken(key) || !seen.insert(key).second;
    admit_one(
        j, taken, kJobResource, [&](const JobSpec& s, Diagnostics& d) { admit(s, ctx, d); }, diags);
  }
}

void admit_batch_jobs(const std::vector<Parsed<BatchJobSpec>>& jobs, Diagnostics& diags) {
  for (const auto& j : jobs) {
    validate_batch_job(j.value, diags, j.prefix);
    diags.error(prefixed(j.prefix, "kind"),
                "a Kubernetes Job (batch/v1) is read and checked, but caldera does not run this "
                "kind yet: write it as a Volcano Job (batch.volcano.sh/v1alpha1) with one task "
                "meanwhile");
  }
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
  if (!warnings.empty()) {
    auto w = r.initWarnings(static_cast<unsigned>(warnings.size()));
    for (unsigned i = 0; i < warnings.size(); ++i) w.set(i, warnings[i]);
  }
  std::stable_sort(created.begin(), created.end(),
                   [](const Created& a, const Created& b) { return a.document < b.document; });
  auto list = r.initSubmitted(static_cast<unsigned>(created.size()));
  for (unsigned i = 0; i < created.size(); ++i) {
    const auto& c = created[i];
    auto slash = c.key.find('/');
    list[i].setKind(c.kind);
    list[i].setNamespace(c.key.substr(0, slash));
    list[i].setName(c.key.substr(slash + 1));
    list[i].setUid(c.uid);
  }
  rp.deliver(to_bytes(b));
}

}  // namespace caldera
