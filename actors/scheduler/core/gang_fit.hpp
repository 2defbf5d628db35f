// Why a gang does not fit: the least its minimum must hold, compared with what the nodes have.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "actors/scheduler/core/placer.hpp"
#include "messages/resources.hpp"

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

// The same for a queued request: its min_count pods, task_min of each task among them.
ResourceList gang_minimum(const GangRequest& r);

// Why the gang of `r` was not placed, for the job's status: the resources it needs beyond what
// the ready nodes have free, e.g. "0/3 pods placed: minAvailable 3 needs cpu 3, the ready nodes
// have 2 in all". `free` and `total` are sums over the ready nodes; the message names the total
// only, so that it stays the same while pods elsewhere come and go.
std::string unplaced_message(const GangRequest& r, const ResourceList& free,
                             const ResourceList& total);

}  // namespace caldera
