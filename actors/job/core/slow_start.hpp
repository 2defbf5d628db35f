// Slow-start pod creation (seed 003, manageJob): a job's placed pods go to their nodes in
// batches of 1, 2, 4, ..., each batch once the nodes have created every pod of the one before.
// A creation that fails stops the round; the pods left wait for the next round, after a backoff.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace caldera {

struct JobModel;
struct Pod;
struct Clock;
struct Effects;

struct SlowStart {
  int32_t next_batch = 1;           // the size of the round's next batch
  std::set<std::string> in_flight;  // pods (by name) sent to their nodes, not yet created there
  int32_t round_created = 0;        // pods the nodes created in this round, for its event
  int32_t round_batches = 0;
  int64_t resume_at_ms = 0;    // a stopped round starts again then; 0: none is stopped
  int32_t stopped_rounds = 0;  // in a row, since the last pod a node created
  int64_t batch_sent_ms = 0;   // when the pods in flight were (last) sent
  bool operator==(const SlowStart&) const = default;
};

// A batch not created in this long is sent again (a launch or its answer may have been lost on
// the way; the node answers a repeated launch with the pod's status).
inline constexpr int64_t kRelaunchAfterMs = 10000;

// The wait after `stopped_rounds` stopped rounds in a row: 1 s, doubling, at most a minute.
int64_t slow_start_backoff_ms(int32_t stopped_rounds);

// Whether the pod was sent to its node. A placed pod that waits for its batch was not: nothing
// of it runs, so killing it needs no node.
bool launched(const JobModel& m, const Pod& p);

// Sends the round's next batch once the batch before is created and no stopped round waits
// for its backoff; a round with nothing left to send ends (the next one starts at 1 again).
void launch_next_batch(JobModel& m, const Clock& clock, Effects& fx);

// Sends the pods in flight again once they are overdue (kRelaunchAfterMs); when that is.
void relaunch_overdue(JobModel& m, const Clock& clock, Effects& fx);
std::optional<int64_t> relaunch_due_ms(const JobModel& m);

// The node created the pod (it reported it Running, or already ended): it leaves its batch,
// and the backoff starts over.
void pod_created(JobModel& m, const Pod& p);

// The node could not create the pod (reason FailedCreate): the pod is dropped, to be made again
// and placed anew, the round stops, and the next starts after a backoff.
void pod_creation_failed(JobModel& m, const Pod& p, const Clock& clock, Effects& fx);

}  // namespace caldera
