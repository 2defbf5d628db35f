// A job's pod group as `caldera get podgroups` shows it (Volcano's scheduling.volcano.sh
// PodGroup), read off the job: its gang's minimums, its queue, and the scheduler's verdict.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "messages/model/job.hpp"
#include "messages/model/resources.hpp"

namespace caldera {

struct PodGroupView {
  std::string name, namespace_, queue;
  std::string priority_class;  // the job's priorityClassName
  // What the enqueue action admits against: the least the first gang asks (only when the job's
  // tasks are known: a list's summaries have none).
  std::optional<ResourceList> min_resources;
  int64_t created_ms = 0;
  int32_t min_member = 0;
  std::map<std::string, int32_t> min_task_member;  // only when the job's tasks are known
  // Pending (the enqueue action has not admitted it), Inqueue (admitted, waiting to be placed),
  // Running (minMember of its pods run or have succeeded), Unknown (some run, the gang is not
  // whole and does not fit), Completed (the job has finished).
  std::string phase;
  int32_t running = 0, succeeded = 0, failed = 0;
  // "Unschedulable" with the scheduler's message, "Scheduled" once the gang is in, "" before.
  std::string condition;
  std::string message;
};

PodGroupView pod_group_of(const Job& job);

// scheduling.volcano.sh/v1beta1 PodGroup.
nlohmann::json pod_group_to_json(const PodGroupView& pg);

}  // namespace caldera
