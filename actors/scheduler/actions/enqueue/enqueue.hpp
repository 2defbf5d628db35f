// The enqueue action (Volcano's, with the overcommit and proportion plugins): a gang whose minimum
// is not in goes from Pending to Inqueue when the cluster's overcommit budget and its queue can
// take its minimum; allocate gives nodes only to gangs that are Inqueue.
#pragma once

#include <optional>

#include "actors/scheduler/framework/session.hpp"

namespace caldera::sched {

// Every queued gang whose minimum is not in, in job order.
void enqueue_action(Session& s);

// The action for one gang: nullopt when it is admitted (or was, and stays so), else why not.
std::optional<Refusal> enqueue_gang(Session& s, Cache::Queued& queued);

}  // namespace caldera::sched
