// Everything the job controller knows about one job: the Job itself, its pod table, and the
// controller's own bookkeeping (delayed actions, task retries, command ids).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/job/core/delayed_action.hpp"
#include "actors/job/core/pod_backoff.hpp"
#include "actors/job/core/pod_table.hpp"
#include "actors/job/core/slow_start.hpp"
#include "actors/job/core/ssh_key_pair.hpp"
#include "messages/model/job.hpp"
#include "messages/model/pod.hpp"

namespace caldera {

// What a batch/v1 Job's controller keeps beside the status it shows.
struct BatchBookkeeping {
  std::set<int32_t> succeeded_indexes;  // status.completedIndexes, as a set
  std::set<int32_t> failed_indexes;     // status.failedIndexes, as a set
  // The pod failure back-off: the job's (under kJobWideBackoff), or with backoffLimitPerIndex
  // each index's, whose failures also count against that limit.
  std::map<int32_t, PodBackoff> backoff;
  std::map<int32_t, int32_t> ignored_failures;  // by index: failures a policy ignored
  int64_t create_at_ms = 0;  // pods wanted wait for the back-off until then; 0: none waits
  // Pods being deleted that were counted as failed before they ended (Kubernetes counts a pod
  // being deleted as a failure unless only failed pods are replaced): their ends count no more.
  std::set<std::string> counted_terminating;
  bool operator==(const BatchBookkeeping&) const = default;
};

inline constexpr int32_t kJobWideBackoff = -1;

struct JobModel {
  Job job;
  PodTable pods;                                // by pod name: {job}-{task}-{index}
  std::vector<std::string> command_ids;         // recent client command ids, newest last
  std::vector<DelayedAction> delayed;           // policy actions waiting for their timeout
  std::map<std::string, int32_t> task_retries;  // pod restarts per task, against task maxRetry
  // A restart found the job's retries used up: Restarting ends Failed instead of Pending.
  bool retries_exhausted = false;
  SlowStart creation;  // the pods being launched on their nodes, batch by batch
  // The store holds the spec in a row of its own (written once, with the job's first write): the
  // job row, written on every change, does not repeat it.
  bool spec_stored = false;
  // Whether the store's live index (the jobs a restart recreates) holds the job, as far as the
  // writes that were sent say; nullopt: not known (loaded, or a write failed), the next one says.
  std::optional<bool> live_row;
  // The finish time (ms) that keys the job's row in the store's History (the settled jobs, for
  // retention), as far as the writes that were sent say; 0: it has none. A settled job loaded
  // from the store has the row of its last transition.
  int64_t history_ms = 0;
  // The svc and mpi files its running pods were last given (not stored: after a restart they are
  // given once more); refresh_plugin_files sends them again when they change.
  std::map<std::string, std::string> plugin_files;
  // The ssh plugin's keys (stored in the spec row): set before any pod is launched.
  std::optional<SshKeyPair> ssh_keys;
  // A batch/v1 Job's controller bookkeeping (unused by a Volcano Job).
  BatchBookkeeping batch;

  const std::string& name() const { return job.spec.name; }
  std::string key() const { return job.spec.key(); }
};

// Volcano's pod name: {job}-{task}-{index}.
std::string pod_name(const std::string& job, const std::string& task, int32_t index);

// The pod was killed by the controller itself and has ended: Volcano deletes such pods, so
// they no longer count in the job's status.
inline bool is_discarded(const Pod& p) {
  return p.out_of_sync && is_terminal(p.phase);
}

}  // namespace caldera
