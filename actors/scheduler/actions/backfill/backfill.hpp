// The backfill action (Volcano's): the pods that ask for nothing at all (best effort), which
// allocate counts as ready but leaves pending, go onto any ready node that may host them.
#pragma once

#include "actors/scheduler/framework/session.hpp"

namespace caldera::sched {

// For each gang allocate looked at whose other pods are placed (it is ready), its pending
// best-effort pods, on the nodes in name order from where the last one went.
void backfill_action(Session& s);

}  // namespace caldera::sched
