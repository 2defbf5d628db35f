// The job directory: owns which jobs exist (their actors while they are live). It creates and
// deletes jobs, serves the client requests about them that the API router passes on, and routes
// node reports and node events to the job actors. JobTemplates and JobFlows are the flow
// directory's (actors/jobflow), Queues and PriorityClasses the scheduling objects' actor's.
#pragma once

#include <chrono>
#include <memory>
#include <set>
#include <string>

#include <caf/actor.hpp>

#include "actors/metrics/metrics.hpp"
#include "actors/protocol/directory.hpp"
#include "actors/protocol/flow_directory.hpp"
#include "actors/protocol/membership.hpp"
#include "actors/protocol/scheduler.hpp"
#include "actors/protocol/watch_hub.hpp"
#include "storage/store.hpp"

namespace caldera {

struct JobDirectoryEnv {
  std::shared_ptr<Store> store;
  protocol::scheduler scheduler;
  caf::actor scheduling;  // the Queues and PriorityClasses (actors/scheduler/scheduling_objects)
  caf::actor timer;       // the job actors' clock (actors/timer)
  protocol::membership
      membership;  // the nodes: routes to them, knows who is Ready (actors/cluster)
  std::shared_ptr<Metrics> metrics;  // handed to the job actors; unset: none
  // The JobTemplates and JobFlows: admits and stores a submission's, hears of flows' jobs.
  protocol::flow_directory flows;
  // Where job and flow changes are published for the clients' watches (actors/watch).
  protocol::watch_hub watches;
  // The nodes of the cluster's config. A recovered pod bound to any other node is lost: that
  // node can never register again. Empty: not known, nothing is checked.
  std::set<std::string> nodes;
  // How long after the coordinator's start such a node's pods are surely dead: it may have held
  // a lease renewed just before (MembershipOptions, startup_wait_ms). Only then are they lost.
  std::chrono::milliseconds dropped_node_wait{0};
};

// Its messages are protocol::directory (actors/protocol/directory.hpp). On start it respawns the
// actor of every live job (the live index). A recovered job whose pods are bound to a node the
// config no longer has hears at once that the node is lost.
protocol::directory spawn_job_directory(caf::actor_system& sys, JobDirectoryEnv env);

}  // namespace caldera
