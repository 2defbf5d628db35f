// The flow directory: owns the JobTemplates and JobFlows, and which flows have an actor. It
// admits and stores a submission's templates and flows, serves the client requests about them
// (read from the store), deletes them, and routes the status of a flow's jobs to the flow's
// actor, waking a finished flow whose actor has stopped.
#pragma once

#include <memory>

#include <caf/actor_system.hpp>

#include "actors/metrics/metrics.hpp"
#include "actors/protocol/flow_directory.hpp"
#include "actors/protocol/watch_hub.hpp"
#include "storage/store.hpp"

namespace caldera {

struct FlowDirectoryEnv {
  std::shared_ptr<Store> store;
  protocol::watch_hub watches;       // hears flows added, changed and deleted
  std::shared_ptr<Metrics> metrics;  // handed to the flow actors; unset: none
};

// Its messages are protocol::flow_directory. It waits for the job directory's handle
// (coordinator_atom) before anything else; then it starts an actor for every flow that is not
// finished, and goes on with the delete of any flow a stop left Terminating.
protocol::flow_directory spawn_flow_directory(caf::actor_system& sys, FlowDirectoryEnv env);

}  // namespace caldera
