// The job actor: one per Job. Its mailbox serializes everything that happens to the job; it feeds
// events to the pure controller core and carries the effects out once the new state is durable.
#pragma once

#include <memory>

#include <caf/actor.hpp>

#include "actors/job/core/job_model.hpp"
#include "actors/metrics/metrics.hpp"
#include "actors/protocol/directory.hpp"
#include "actors/protocol/flow_directory.hpp"
#include "actors/protocol/job.hpp"
#include "actors/protocol/membership.hpp"
#include "actors/protocol/scheduler.hpp"
#include "actors/protocol/watch_hub.hpp"
#include "common/clock.hpp"
#include "storage/store.hpp"

namespace caldera {

struct JobActorEnv {
  std::shared_ptr<Store> store;
  protocol::directory coordinator;  // the job directory: deletes expired jobs, stops settled ones
  protocol::scheduler scheduler;
  caf::actor timer;  // wakes the actor for its ticks (actors/timer); unset: CAF's own clock
  protocol::membership
      nodes;  // routes launches, kills and removals to the pods' nodes (the membership)
  // The flow that created the job (key and uid), told of its status through the flow
  // directory (`flows`); empty for a client's job.
  protocol::flow_directory flows;
  std::string owner = {};
  std::string owner_uid = {};
  std::shared_ptr<Metrics> metrics;  // phases entered; unset: not counted
  protocol::watch_hub watches;       // hears every durable change; unset: nobody watches
  bool watch_pods = false;           // publish pod changes from the start (a pods watch may)
  WallClock clock;                   // the controller's time (a test may drive it)
};

// Its messages are protocol::job (actors/protocol/job.hpp). Beyond what that says: once what a
// report changed is durable (or it was applied already) the job sends (ack_atom, node, uid,
// status seq) to `nodes`; (job_event_atom, key, type, job row) to `watches` after every durable
// change (Deleted with the last row once its erase is), and (expire_atom, key, uid) to the
// coordinator once ttlSecondsAfterFinished has passed. For its owner flow, if any, `flows` gets
// (job_status_atom, flow key, flow uid, ...) after every durable change of the status and
// (job_gone_atom, flow key, flow uid, ...) once the job is deleted.
protocol::job spawn_job_actor(caf::actor_system& sys, JobModel model, JobActorEnv env);

}  // namespace caldera
