// History retention: deletes settled jobs, oldest first, past cluster.history's limits.
#pragma once

#include <chrono>
#include <memory>

#include <caf/actor.hpp>

#include "actors/history/core/retention.hpp"
#include "actors/metrics/metrics.hpp"
#include "actors/protocol/directory.hpp"
#include "common/clock.hpp"
#include "storage/store.hpp"

namespace caldera {

struct RetentionEnv {
  std::shared_ptr<Store> store;
  protocol::directory directory;     // deletes the jobs: (purge_atom, key, uid) -> why not
  std::shared_ptr<Metrics> metrics;  // unset: none
  RetentionPolicy policy;
  std::chrono::milliseconds interval{1000};  // how often it looks at the History
  WallClock clock;                           // what maxAge is measured against
};

// A detached actor (it reads the store): first it counts the History rows and corrects the
// counter if a failed write left it off, then every interval it deletes what the policy says,
// through the directory, a bounded number at a time. One log line per pass that deleted jobs.
caf::actor spawn_retention(caf::actor_system& sys, RetentionEnv env);

}  // namespace caldera
