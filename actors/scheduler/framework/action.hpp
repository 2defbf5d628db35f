// The actions a scheduler configuration may name (Volcano's enqueue, allocate, preempt, reclaim
// and backfill), each run once per session in the configured order.
#pragma once

#include <optional>
#include <string_view>

namespace caldera::sched {

class Session;
using Action = void (*)(Session&);

// The action called `name`; nullopt for one the scheduler does not have.
std::optional<Action> find_action(std::string_view name);

}  // namespace caldera::sched
