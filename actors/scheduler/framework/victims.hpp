// What the preempt and reclaim actions share: the running pods they may take, brought into the
// session's snapshot once, and their evictions handed to the actor.
#pragma once

#include "actors/scheduler/framework/session.hpp"

namespace caldera::sched {

// Adds the running pods of the jobs that a starving gang could take from (by preemption in its
// queue, or by reclaim from a queue above its share, as the configured actions allow), with the
// room being freed for earlier preemptors; false when there are none.
bool add_victims(Session& s);

// The evictions of a committed preempt or reclaim: the pods leave, their queue lets go of what
// they hold, and the room they free is kept for the gang each was evicted for.
void record_evictions(Session& s, const SessionResult& result);

}  // namespace caldera::sched
