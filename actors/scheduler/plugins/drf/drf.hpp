// Volcano's drf plugin (dominant resource fairness): a job's share is the largest fraction of any
// one resource of the cluster that its pods hold, and the job with the least goes next.
#pragma once

#include "messages/model/resources.hpp"

namespace caldera::sched {

// The largest, over the resources `total` has (a pod slot aside), of allocated / total.
double dominant_share(const ResourceList& allocated, const ResourceList& total);

}  // namespace caldera::sched
