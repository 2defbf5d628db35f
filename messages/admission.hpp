// Admission: Volcano's defaults and validation rules for a Job, with every violation reported.
#pragma once

#include "messages/diagnostic.hpp"
#include "messages/job_spec.hpp"
#include "messages/resources.hpp"

namespace caldera {

struct AdmissionContext {
  // The largest amount of each resource any single node offers; a pod asking more never fits.
  ResourceList largest_node;
};

// Fills what Volcano's mutating webhook fills: namespace "default", queue "default", task names
// "default<i>" when empty, container names "<task>-<i>"... when empty.
void apply_defaults(JobSpec& spec);

// Checks the (defaulted) spec; appends every violation found to diags.errors with its field path.
void admit(const JobSpec& spec, const AdmissionContext& ctx, Diagnostics& diags);

// A pod's total requests: the sum over its containers.
ResourceList pod_requests(const TaskSpec& task);

}  // namespace caldera
