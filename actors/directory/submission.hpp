// A client submission (YAML or structured): admission of everything in it before anything is
// stored, and its answer once everything it created is durable.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <caf/response_promise.hpp>

#include "messages/admission/admission.hpp"
#include "messages/yaml/job_yaml.hpp"

namespace caldera {

// Defaults and admits every job; a name taken (`job_taken(key)`: a job of that namespace/name
// exists, or earlier in the submission) is an "already exists" error. Every problem lands in
// diags under its document's prefix. (The templates and flows are the flow directory's:
// actors/jobflow/core/flow_submission.)
void admit_jobs(std::vector<Parsed<JobSpec>>& jobs, const AdmissionContext& ctx,
                const std::function<bool(const std::string&)>& job_taken, Diagnostics& diags);

// Kubernetes Jobs (batch/v1): each checked as the API server checks it, a name taken (by a
// batch/v1 Job: the kinds have names of their own) an "already exists" error; every problem
// under its document. The admitted ones, as the jobs they run as (to_job_spec).
std::vector<Parsed<JobSpec>> admit_batch_jobs(
    std::vector<Parsed<BatchJobSpec>>& jobs, const AdmissionContext& ctx,
    const std::function<bool(const std::string&)>& job_taken, Diagnostics& diags);

// Said at submit of a job whose svc, mpi or ssh plugin writes files, when ready nodes (`without`)
// cannot show them to their pods where Volcano mounts them, /etc/volcano and /root/.ssh (node
// label caldera.io/private-etc=false): pods placed there find them in $VC_POD_DIR/volcano and
// $VC_POD_DIR/.ssh only. nullopt otherwise.
std::optional<std::string> etc_volcano_warning(const JobSpec& spec,
                                               const std::vector<std::string>& without);

// A rejected submission's answer: "already exists" errors as alreadyExists, others invalidArgument.
std::string rejection_response(uint64_t id, const Diagnostics& diags);

struct Created {
  size_t document;  // for the answer's order: the order of the file
  std::string kind, key, uid;
};

// What is still in flight for an accepted submission; the last `finish` answers the client.
struct PendingSubmit {
  caf::response_promise rp;
  uint64_t id = 0;
  size_t left = 0;
  std::vector<Created> created;
  std::vector<std::string> failures;
  std::vector<std::string> warnings;

  void finish();
};

}  // namespace caldera
