// A Kubernetes Job (apiVersion batch/v1): its spec as its users write it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "messages/model/batch_job_fields.hpp"
#include "messages/model/job_spec.hpp"

namespace caldera {

// Everything a user writes in a batch/v1 Job: its metadata and template, and the fields of its
// own (BatchJobFields) that a Volcano Job has no place for.
struct BatchJobSpec : BatchJobFields {
  std::string name;
  std::string namespace_;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::optional<int64_t> active_deadline_seconds;
  std::optional<int64_t> ttl_seconds_after_finished;
  PodTemplate template_;
  std::string priority_class_name;  // its template's spec.priorityClassName

  std::string key() const { return namespace_ + "/" + name; }
  bool operator==(const BatchJobSpec&) const = default;
};

// The job a batch/v1 Job runs as: its metadata, deadline and TTL in the JobSpec's own fields,
// its template as the one task (named kBatchJobTask), placed one pod at a time (minAvailable 1),
// in the queue its scheduling.volcano.sh/queue-name annotation names; the rest in `batch`.
JobSpec to_job_spec(BatchJobSpec spec);
// The batch/v1 Job `spec` runs (spec.batch set): what `get jobs.batch -o yaml` shows.
BatchJobSpec to_batch_job_spec(const JobSpec& spec);

// The volcano.sh annotation a batch/v1 Job names its queue with.
inline constexpr const char* kQueueNameAnnotation = "scheduling.volcano.sh/queue-name";

}  // namespace caldera
