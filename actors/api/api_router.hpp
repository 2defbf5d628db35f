// The API router: the entry point of every client request. It reads the request (within the
// client limits), refuses changes while the store cannot write, answers what needs no owner
// (ping, the scheduler conf) or asks the owners (nodes: the membership and the scheduler), and
// passes the rest to their owner: templates and flows to the flow directory, everything else to the
// job directory; an apply goes to each document's owner (actors/api/apply). It keeps no state of
// its own.
#pragma once

#include <memory>
#include <string>

#include <caf/actor.hpp>

#include "actors/protocol/directory.hpp"
#include "actors/protocol/flow_directory.hpp"
#include "actors/protocol/membership.hpp"
#include "actors/protocol/scheduler.hpp"
#include "actors/protocol/watch_hub.hpp"
#include "storage/store.hpp"

namespace caldera {

struct ApiRouterEnv {
  std::shared_ptr<Store> store;     // only asked whether it can write
  protocol::directory directory;    // jobs, pods, logs, submissions (actors/directory)
  protocol::flow_directory flows;   // JobTemplates and JobFlows (actors/jobflow)
  protocol::membership membership;  // who the nodes are and whether they are Ready
  protocol::scheduler scheduler;    // what their pods hold
  protocol::watch_hub watches;      // the clients' watches (actors/watch)
  caf::actor scheduling;            // the Queues and PriorityClasses (actors/scheduler)
  std::string node_name;            // the node it runs on, for `ping`
  std::string scheduler_conf;       // the scheduler's conf as Volcano's YAML, for getSchedulerConf
};

// Messages:
//   (api_atom, Request bytes) -> Response bytes    the client API (messages/api.capnp)
//   (halt_atom, why)                               from the membership: the coordinator's store
//                                                  was lost; from now on every request but ping,
//                                                  listNodes and getSchedulerConf is answered
//                                                  failedPrecondition with `why`
//   (watch_atom, Request bytes, stream, bridge)    a watch (Request.watch), passed to the watch
//       -> Response bytes                          hub with the client bridge that holds
//   (unwatch_atom, bridge, stream)                 its connection; and its end
caf::actor spawn_api_router(caf::actor_system& sys, ApiRouterEnv env);

}  // namespace caldera
