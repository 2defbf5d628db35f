// The enqueue action's checks (Volcano's overcommit and proportion plugins): whether a pod group
// may go from Pending to Inqueue, after which allocate gives it nodes.
#pragma once

#include <optional>
#include <string>

#include "actors/scheduler/core/queue_share.hpp"
#include "messages/model/resources.hpp"

namespace caldera::sched {

struct Snapshot;

// The ready nodes' allocatable times `factor`, less what their pods hold (allocatable less
// idle): what the enqueue action may admit before the pod groups admitted already are counted.
ResourceList overcommit_budget(const Snapshot& s, double factor);

// Why the cluster admits no pod group whose minimum is `minimum` out of `budget` (the resources
// it is short of, not the budget left, which changes with every pod); nullopt when it does.
std::optional<std::string> budget_refusal(const ResourceList& budget, const ResourceList& minimum);

// Why `q` admits no pod group whose minimum is `minimum` while the pod groups it has admitted and
// that are not in yet still lack `inqueue`: its capability would be passed (Volcano's proportion
// check); nullopt when it admits it.
std::optional<std::string> capability_refusal(const QueueInfo& q, const ResourceList& inqueue,
                                              const ResourceList& minimum);

// Why `q` admits no more pod groups: it holds its deserved share counting what those it has
// admitted still lack (`inqueue`). Volcano checks the capability only; the share is checked too
// so that a queue held back at its share does not keep the budget from the others.
std::optional<std::string> share_refusal(const QueueInfo& q, const ResourceList& inqueue);

// Both, the capability first.
std::optional<std::string> queue_refusal(const QueueInfo& q, const ResourceList& inqueue,
                                         const ResourceList& minimum);

}  // namespace caldera::sched
