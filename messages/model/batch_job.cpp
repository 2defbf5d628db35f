#include "messages/model/batch_job.hpp"

#include <algorithm>
#include <utility>

namespace caldera {

JobSpec to_job_spec(BatchJobSpec spec) {
  JobSpec out;
  out.name = std::move(spec.name);
  out.namespace_ = spec.namespace_.empty() ? "default" : std::move(spec.namespace_);
  out.labels = std::move(spec.labels);
  out.annotations = std::move(spec.annotations);
  if (auto q = out.annotations.find(kQueueNameAnnotation);
      q != out.annotations.end() && !q->second.empty())
    out.queue = q->second;
  out.active_deadline_seconds = spec.active_deadline_seconds;
  out.ttl_seconds_after_finished = spec.ttl_seconds_after_finished;
  out.priority_class_name = std::move(spec.priority_class_name);
  // No gang: each pod is placed when it fits, as Kubernetes' default scheduler places them.
  out.min_available = 1;
  TaskSpec task;
  task.name = kBatchJobTask;
  task.replicas = std::max(spec.parallelism.value_or(1), 0);
  task.min_available = 1;
  task.template_ = std::move(spec.template_);
  out.tasks.push_back(std::move(task));
  out.batch = static_cast<BatchJobFields&&>(std::move(spec));
  return out;
}

BatchJobSpec to_batch_job_spec(const JobSpec& spec) {
  BatchJobSpec out;
  if (spec.batch) static_cast<BatchJobFields&>(out) = *spec.batch;
  out.name = spec.name;
  out.namespace_ = spec.namespace_;
  out.labels = spec.labels;
  out.annotations = spec.annotations;
  out.active_deadline_seconds = spec.active_deadline_seconds;
  out.ttl_seconds_after_finished = spec.ttl_seconds_after_finished;
  if (!spec.tasks.empty()) out.template_ = spec.tasks.front().template_;
  out.priority_class_name = spec.priority_class_name;
  return out;
}

}  // namespace caldera
