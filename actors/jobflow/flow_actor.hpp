// The flow actor: one per JobFlow. It hears its jobs' status from their actors, feeds the DAG
// core (actors/jobflow/core) and carries out what it decides: create the jobs that are due
// through the flow directory, create a failed one again while `retry` allows, delete the jobs
// once the flow Succeeds under jobRetainPolicy delete, and keep the flow's record durable. Once
// the flow is finished and nothing is left to do it offers to stop (passivation): its record
// stays in the store, and the flow directory wakes it when one of its jobs changes again.
#pragma once

#include <memory>

#include <caf/actor.hpp>

#include "actors/metrics/metrics.hpp"
#include "actors/protocol/directory.hpp"
#include "actors/protocol/flow_directory.hpp"
#include "actors/protocol/jobflow.hpp"
#include "actors/protocol/watch_hub.hpp"
#include "messages/model/job_flow.hpp"
#include "storage/store.hpp"

namespace caldera {

struct FlowActorEnv {
  std::shared_ptr<Store> store;
  protocol::flow_directory flows;    // creates the flow's jobs; stops the actor once it is done
  protocol::directory jobs;          // the job directory: deletes the flow's jobs
  protocol::watch_hub watches;       // hears every durable change of the record
  std::shared_ptr<Metrics> metrics;  // flows finished, DAG step latency; unset: none
};

// `flow` is its stored record. After a restart it learns its jobs' phases again from their
// actors (each tells its owner on recovery), and asks for the creation of whatever is due: the
// job directory answers for a job that exists already, so nothing is created twice.
protocol::jobflow spawn_flow_actor(caf::actor_system& sys, JobFlow flow, FlowActorEnv env);

}  // namespace caldera
