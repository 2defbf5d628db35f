// The scheduler actor: owns the Placer and binds waiting pods to nodes whenever room appears:
// each session is the gang scheduler's (actors/scheduler/actions/allocate/allocator.hpp).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <caf/fwd.hpp>

#include "actors/metrics/metrics.hpp"
#include "actors/protocol/scheduler.hpp"
#include "actors/scheduler/core/placer.hpp"

namespace caldera {

// Its messages are protocol::scheduler (actors/protocol/scheduler.hpp), all local to the
// coordinator process. With a membership, every placed gang is reserved on its nodes (prepare)
// and bound only when all confirm; on a refusal or silence it is released and queued again, and
// its job told why (unsched_atom).
// `metrics`: session times; may be null. `policy`: the actions and plugins each session runs
// (the cluster config's scheduler conf). `taints`: each node's, by name (the cluster config's).
using NodeTaints = std::map<std::string, std::vector<Taint>>;
protocol::scheduler spawn_scheduler(caf::actor_system& sys,
                                    std::shared_ptr<Metrics> metrics = nullptr,
                                    sched::Policy policy = {}, NodeTaints taints = {});

}  // namespace caldera
