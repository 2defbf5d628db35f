// The preempt action (seed 004 section 11.2): a starving gang may evict pods of lower-priority
// jobs to make room, through a statement committed only if the gang is then pipelined.
#pragma once

#include "actors/scheduler/actions/allocate/allocator.hpp"
#include "actors/scheduler/framework/session.hpp"

namespace caldera::sched {

// Each admitted gang that starves (its ready and pipelined pods fewer than minAvailable) and may
// preempt (its class's preemptionPolicy is not Never), highest
// priority first, gets its waiting pods pipelined onto nodes: where a node's future idle room
// (idle, plus what evictions free, less what is promised) holds the pod, else on the first node,
// in name order, where evicting running pods of lower-priority jobs of its queue (the lowest
// priority first) frees enough, never taking a victim's job below its minAvailable (gang's
// preemptable). The statement commits (Evict with reason "Preempted", then
// Pipeline) if the gang is then pipelined, and is discarded, victims untouched, otherwise.
SessionResult preempt(Snapshot& snapshot, const SessionOptions& options);

// The action in a session: the running pods it may take are brought into the snapshot, and
// its evictions handed to the actor.
void preempt_action(Session& s);

}  // namespace caldera::sched
