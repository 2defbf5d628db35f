// The job a flow entry creates: its name, its owner marks and its spec, read from the entry's
// JobTemplate at creation (a later change of the template does not touch it).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "messages/model/job_flow.hpp"
#include "messages/model/job_spec.hpp"
#include "messages/model/job_template.hpp"
#include "messages/model/result.hpp"

namespace caldera {

// Volcano's marks on a flow's jobs (labels and annotations, "<namespace>.<name>" values).
inline constexpr const char* kCreatedByJobFlow = "volcano.sh/createdByJobFlow";
inline constexpr const char* kCreatedByJobTemplate = "volcano.sh/createdByJobTemplate";
// caldera's own: which flow of that name (a flow deleted and submitted again is another flow).
inline constexpr const char* kJobFlowUid = "caldera.io/jobflow-uid";

// The template's spec with the entry's patch applied, named "<jobflow>-<entry>" in the flow's
// namespace, with the marks. A patch naming a task or container the template lacks fails.
Result<JobSpec> flow_job_spec(const JobFlow& flow, const std::string& entry,
                              const JobTemplate& tmpl);

// `patch` applied over `spec` (see Flow::patch for what it replaces and what it merges).
Result<JobSpec> apply_patch(JobSpec spec, const JobSpec& patch);

// The key ("namespace/name") of the flow that created the job, if a flow did.
std::optional<std::string> owner_flow_key(const JobSpec& job);

// Whether `flow` (this very flow, by uid) created the job.
bool created_by(const JobSpec& job, const JobFlow& flow);

// Each entry of `flow` by the name of its job ("<jobflow>-<entry>" -> entry).
std::map<std::string, std::string> job_entries(const JobFlowSpec& flow);

}  // namespace caldera
