// How many pods a Kubernetes Job keeps running, and which indexes they take (its manageJob).
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "messages/model/batch_job_fields.hpp"

namespace caldera {

// The pods the job wants active: none while suspended; with completions, parallelism at most
// and never more than the completions still missing; without (a work queue), parallelism until
// the first success, then those running (none is started, none stopped).
int32_t wanted_active(const BatchJobFields& spec, int32_t active, int32_t succeeded);

// The lowest indexes below `completions` that have neither succeeded, failed for good, nor a pod
// running: at most `count` of them, in increasing order.
std::vector<int32_t> first_pending_indexes(int32_t completions, const std::set<int32_t>& succeeded,
                                           const std::set<int32_t>& failed,
                                           const std::set<int32_t>& active, int32_t count);

}  // namespace caldera
