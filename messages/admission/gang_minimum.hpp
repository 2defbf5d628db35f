// The least a gang's minimum asks per resource, however its pods are chosen: what the enqueue
// action admits against, and a pod group's minResources.
#pragma once

#include <cstdint>
#include <vector>

#include "messages/model/job_spec.hpp"
#include "messages/model/resources.hpp"

namespace caldera {

// `count` pods asking `requests` each, `required` of which every placement of the gang holds (a
// task's minimum).
struct AskGroup {
  ResourceList requests;
  int32_t count = 0;
  int32_t required = 0;
};

// Per resource, the least any `min_count` of the pods (the required ones among them) ask in all:
// a cluster with less of some resource can never hold the gang, however its pods are spread.
ResourceList gang_minimum(const std::vector<AskGroup>& groups, int32_t min_count);

// The same for a job's first gang: minAvailable pods (each with its pod slot), leaving out tasks
// that wait on others, each task's minimum among them when minAvailable covers their sum.
ResourceList first_gang_minimum(const JobSpec& spec);

}  // namespace caldera
