// Admission: Volcano's defaults and validation rules for a Job, with every violation reported.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "messages/model/diagnostic.hpp"
#include "messages/model/job_spec.hpp"
#include "messages/model/resources.hpp"

namespace caldera {

// The most pods (replicas over all tasks) one job may have; see admission.cpp for why.
inline constexpr int64_t kMaxJobReplicas = 10'000;

struct AdmissionContext {
  // The largest amount of each resource any single node offers; a pod asking more never fits.
  ResourceList largest_node;
};

// Fills what Volcano's mutating webhook fills: namespace "default", queue "default", task names
// "default<i>" when empty, container names "<task>-<i>"... when empty, and the plugins others
// need (svc for mpi, pytorch, tensorflow and ray; ssh for mpi).
void apply_defaults(JobSpec& spec);

// The same for a job (not a JobTemplate, whose job is defaulted when it is made): first, as
// Volcano's webhook, a minAvailable that is the sum of the tasks' minAvailable (or replicas)
// when some task names one and the job does not.
void apply_job_defaults(JobSpec& spec);

// The plugins others need, as Volcano's webhook adds them (apply_defaults' part): svc for mpi,
// pytorch, tensorflow and ray; ssh for mpi (at mpi's --port).
void add_plugin_dependencies(JobSpec& spec);

// Checks the (defaulted) spec; appends every violation found to diags.errors with its field path.
void admit(const JobSpec& spec, const AdmissionContext& ctx, Diagnostics& diags);

// A task's pod template: its containers (a command each, no NUL, ...), requests a node can
// hold, the simulation annotations and the grace period; paths under `path` + ".template"
// ("spec" for a Kubernetes Job, whose template is spec.template).
// `spec` (may be null): the job, whose plugins may give a container its command.
void admit_pod_template(const TaskSpec& task, const std::string& path, const AdmissionContext& ctx,
                        Diagnostics& d, const JobSpec* spec = nullptr);

// A pod's total requests: the sum over its containers.
ResourceList pod_requests(const TaskSpec& task);

// What a pod asks of its node: its requests and one pod slot.
ResourceList pod_resource_request(const TaskSpec& task);

// Shared with other kinds' admission (JobFlow):
// an error at `path` unless `value` is a non-empty DNS-1123 label; `what` names it ("job name").
void check_dns_label(Diagnostics& d, const std::string& path, const std::string& what,
                     const std::string& value);
// Every cycle of a dependency graph (edges[u]: the nodes u depends on), each once, rotated to
// start at its lowest node.
std::vector<std::vector<size_t>> find_cycles(const std::vector<std::vector<size_t>>& edges);

}  // namespace caldera
