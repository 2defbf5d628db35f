// The scheduler configuration a session runs with: its actions in order and what its plugins
// decide (scoring, the overcommit factor).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "actors/scheduler/actions/allocate/allocator.hpp"

namespace caldera::sched {

struct Policy {
  std::vector<std::string> actions{"enqueue", "allocate", "preempt", "reclaim", "backfill"};
  SessionOptions options;
  bool has(std::string_view action) const;
};

}  // namespace caldera::sched
