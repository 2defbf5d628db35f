// The scheduler configuration a session runs with: its actions in order and what its plugins
// decide, resolved once from the scheduler conf (Volcano's volcano-scheduler.conf).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "actors/scheduler/actions/allocate/allocator.hpp"
#include "actors/scheduler/framework/scheduler_conf.hpp"
#include "messages/model/diagnostic.hpp"

namespace caldera::sched {

struct Policy {
  std::vector<std::string> actions{"enqueue", "allocate", "preempt", "reclaim", "backfill"};
  SessionOptions options;         // scoring (nodeorder, binpack), overcommit factor, gang
  bool priority = true;           // jobs and tasks go in their PriorityClass's order
  bool priority_preempts = true;  // ... and a higher one may evict a lower one (preempt)
  bool conformance = true;        // critical pods are never evicted
  bool overcommit = true;         // enqueue admits up to the overcommit budget only
  bool proportion = true;         // queues' shares, capability and reclaim
  bool predicates = true;         // node selectors
  bool drf = true;                // a queue's running jobs take turns by dominant share
  bool has(std::string_view action) const;
  bool operator==(const Policy&) const = default;
};

// The policy of a scheduler conf: its actions, and what its plugins decide with their arguments.
// A switch turned on or an argument that the plugin here does not apply gets a warning under
// `path`.
Policy policy_from(const SchedulerConf& conf, const std::string& path, Diagnostics& diags);

// Whether a pod group is one Volcano's conformance plugin never evicts: of a system-critical
// PriorityClass, or in the kube-system namespace.
bool is_critical(const std::string& job_key, const std::string& priority_class);

}  // namespace caldera::sched
