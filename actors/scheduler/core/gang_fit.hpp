// Why a gang does not fit: the least its minimum must hold, compared with what the nodes have.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "messages/admission/gang_minimum.hpp"
#include "messages/model/gang_request.hpp"
#include "messages/model/resources.hpp"

namespace caldera {

// The same for a queued request: its min_count pods, task_min of each task among them.
ResourceList gang_minimum(const GangRequest& r);

// What a gang that cannot fit the ready nodes even when they are empty needs beyond them, e.g.
// "minAvailable 3 needs cpu 3, the ready nodes have 2 in all"; "" when they could hold it. It
// depends on the nodes' capacity only, not on what is free, so it does not change (and cause a
// write of the job) as pods come and go.
std::string capacity_hint(const GangRequest& r, const ResourceList& total);

}  // namespace caldera
