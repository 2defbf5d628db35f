// The flow actor: one per JobFlow. It hears its jobs' status from their actors, feeds the DAG
// core (actors/jobflow/core) and carries out what it decides: create the jobs that are due
// through the job directory, create a failed one again while `retry` allows, delete the jobs
// once the flow Succeeds under jobRetainPolicy delete, and keep the flow's record durable.
#pragma once

#include <memory>

#include <caf/actor.hpp>

#include "actors/metrics/metrics.hpp"
#include "actors/protocol/jobflow.hpp"
#include "messages/job_flow.hpp"
#include "storage/store.hpp"

namespace caldera {

struct FlowActorEnv {
  std::shared_ptr<Store> store;
  caf::actor directory;  // creates and deletes the flow's jobs; caches its record for reads
  std::shared_ptr<Metrics> metrics;  // flows finished, DAG step latency; unset: none
};

// `flow` is its stored record. After a restart it learns its jobs' phases again from their
// actors (each tells its owner on recovery), and asks for the creation of whatever is due: the
// directory answers for a job that exists already, so nothing is created twice.
protocol::jobflow spawn_flow_actor(caf::actor_system& sys, JobFlow flow, FlowActorEnv env);

}  // namespace caldera
