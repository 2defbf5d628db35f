// One clock for many actors: wakes each at the time it asked for, with one CAF timer in all.
#pragma once

#include <caf/fwd.hpp>

namespace caldera {

// Why: CAF 0.17's clock wakes its thread on every delayed_send. A job actor arms a timer for
// each launch it waits on, so a busy node paid a thread wake-up per job. This actor keeps the
// due times in order and arms CAF's clock only when the earliest one changes.
//
// Messages:
//   (tick_atom, due ms since the epoch, actor)   -> later (tick_atom, due ms) to that actor, at
//                                                   or a hair after `due`; never before
//   (timer_atom, due ms)                            its own wake-up
caf::actor spawn_timer(caf::actor_system& sys);

}  // namespace caldera
