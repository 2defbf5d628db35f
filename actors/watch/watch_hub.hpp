// The watch hub: owns the clients' watches of jobs, pods and flows. It lists what a watch asks
// for as the store holds it, then passes on the changes the job actors and the job directory
// publish to it.
#pragma once

#include <memory>

#include <caf/fwd.hpp>

#include "actors/protocol/watch_hub.hpp"
#include "storage/store.hpp"

namespace caldera {

// Messages: protocol::watch_hub. Before any watch, (coordinator_atom, job directory): the
// directory tells which jobs are live, with their actors (live_jobs_atom), and names every job
// actor it starts while the hub says pods are watched (pods_watched_atom). A bridge's watches
// end with it (monitored). At most Watchers::kMaxWatchers watches at once.
protocol::watch_hub spawn_watch_hub(caf::actor_system& sys, std::shared_ptr<Store> store);

}  // namespace caldera
