// What preempt and reclaim share: a waiting pod is pipelined onto a node whose future idle room
// holds it, or onto one where evicting some running pods frees enough, never taking a victim's
// job below its minAvailable (the gang plugin's preemptable and reclaimable).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "actors/scheduler/core/statement.hpp"

namespace caldera::sched {

// A running pod, by its job's index in the snapshot and its index in the job.
struct Victim {
  size_t job, task;
};

struct EvictionRule {
  // The pods on `node` that may be evicted for `preemptor`, in the order they would go.
  std::function<std::vector<Victim>(const Snapshot&, const std::string& node,
                                    const JobInfo& preemptor)>
      candidates;
  // Whether `v` may go as well as those `chosen` before it on this node (e.g. its queue keeps
  // its share); unset: any candidate may.
  std::function<bool(const Snapshot&, const Victim& v, const std::vector<Victim>& chosen)> allow =
      {};
  std::string reason;        // the evictions' reason: "Preempted", "Reclaimed"
  bool keep_minimum = true;  // gang's preemptable: a victim's job keeps minAvailable ready pods
};

// Pipelines task `t` of job `j` by the rule, recording the evictions and the pipeline in `stmt`.
// Returns whether it found a node.
bool pipeline_with_evictions(Snapshot& s, Statement& stmt, size_t j, size_t t,
                             const EvictionRule& rule);

// For each job in job order that `wants` (starving, valid and admitted already checked), its
// waiting pods are pipelined by the rule, the pods each task's minimum lacks first; the gang's
// statement commits if it is then pipelined and is discarded, victims untouched, otherwise.
// `committed`, when set, sees each committed statement's operations as it commits.
void evict_for_starving(
    Snapshot& s, const EvictionRule& rule,
    const std::function<bool(const Snapshot&, const JobInfo&)>& wants, std::vector<Operation>& out,
    const std::function<void(Snapshot&, const std::vector<Operation>&)>& committed = {});

}  // namespace caldera::sched
