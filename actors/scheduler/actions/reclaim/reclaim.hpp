// The reclaim action (Volcano's reclaim with the proportion and gang plugins): a starving gang of
// a queue below its share takes room back from queues that hold more than theirs.
#pragma once

#include "actors/scheduler/actions/allocate/allocator.hpp"
#include "actors/scheduler/framework/session.hpp"

namespace caldera::sched {

// Each admitted gang that starves, in a queue of s.queues that does not hold its share, gets its
// waiting pods pipelined: onto future idle room, else by evicting running pods of other,
// reclaimable queues that hold more than their deserved share, as long as each such queue keeps
// at least its share (proportion's reclaimable) and each victim's job its minAvailable (gang's).
// The statement commits (Evict with reason "Reclaimed", then Pipeline) if the gang is then
// pipelined and is discarded otherwise. Queue shares must be set (queue_shares, deal_shares).
SessionResult reclaim(Snapshot& snapshot, const SessionOptions& options);

// The action in a session: the running pods it may take are brought into the snapshot, and
// its evictions handed to the actor.
void reclaim_action(Session& s);

}  // namespace caldera::sched
