// The allocate action (Volcano's): each gang that is Inqueue, and the stragglers of gangs that are
// in, in job order, get nodes through a statement committed only when the gang is then ready.
#pragma once

#include "actors/scheduler/framework/session.hpp"

namespace caldera::sched {

// Walks the queue in job order until no pod slot is left; a gang the enqueue action left Pending
// for want of budget is dry-run instead, to say why it would not fit (the first few only).
void allocate_action(Session& s);

// Gives the session's bindings for the operations from `first_op` on of s.result (the gang of
// `queued`'s): reserved in the cache, handed to the actor, and taken off the gang's request.
void record_bound(Session& s, Cache::Queued& queued, size_t first_op);

}  // namespace caldera::sched
