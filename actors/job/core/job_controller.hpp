// Volcano's Job controller as a pure function of (model, event) -> effects, one step per event.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "actors/job/core/effects.hpp"
#include "actors/job/core/job_model.hpp"
#include "messages/model/lifecycle.hpp"

namespace caldera {

// What the controller needs from outside that is not part of its state: time and fresh uids.
struct Clock {
  int64_t now_ms = 0;
  std::function<std::string()> new_uid;
};

// A new job: status Pending with its first condition, version 0, no pods yet (a batch/v1 Job,
// spec.batch set, is new_batch_job's).
JobModel new_job(JobSpec spec, std::string uid, const Clock& clock);

// SyncJob: create the pods the spec wants, recount, and move the phase as seed 000's state table
// says for the job's current phase.
Effects sync_job(JobModel& m, const Clock& clock);

// A node reported a pod's current status (level-triggered: repeats and stale reports are
// harmless; one numbered (status_seq) at or below the status applied changes nothing, except
// that a pod evicted meanwhile and still live is killed). The change becomes a lifecycle event
// (PodRunning, PodFailed, PodEvicted, TaskCompleted, TaskFailed, OutOfSync) that the job's policies
// act on.
Effects on_pod_report(JobModel& m, const Pod& report, const Clock& clock);

// A client command (CommandIssued with `action`). A command id seen before acts no more. A
// command the job's phase ignores changes nothing and sets Effects::refused.
Effects on_command(JobModel& m, Action action, const std::string& command_id, const Clock& clock);

// The status reason while the scheduler cannot place the job's gang.
inline constexpr const char* kUnschedulable = "Unschedulable";

// The scheduler could not place the job's gang, for the reason `message`: a Pending job shows it
// as its status reason Unschedulable, and its pod group as Inqueue if the enqueue action admitted
// it (`enqueued`), else Pending. Repeats (and reports in other phases) change nothing.
Effects on_unschedulable(JobModel& m, const std::string& message, bool enqueued,
                         const Clock& clock);

// Time passed: fires the delayed actions that are due, enforces activeDeadlineSeconds, and
// marks the job expired once ttlSecondsAfterFinished has passed.
Effects on_tick(JobModel& m, const Clock& clock);

// When on_tick next has something to do; nullopt when nothing waits on time.
std::optional<int64_t> next_due_ms(const JobModel& m);

// Finished for good until a client acts on it: a final phase (or Aborted), no pod that holds or
// may still hold resources, nothing waiting on time (a TTL still to pass, a delayed action).
// Its rows then say all there is: its actor may stop, and a restart need not recreate it.
bool is_settled(const JobModel& m);

// Where the scheduler put a pod.
struct Placement {
  std::string node;
  std::string host_ip;
};

// The scheduler bound pods (by uid) to nodes; bindings the job no longer wants are released.
Effects on_pods_placed(JobModel& m, const std::map<std::string, Placement>& by_uid,
                       const Clock& clock);

// A node (re)registered holding these pod uids. Launched pods it does not hold never started there:
// they are launched again, or, if the controller had killed them, they are over. Pods it holds
// that the controller killed are killed again (the earlier kill may have been lost in a crash).
Effects on_node_up(JobModel& m, const std::string& node, const std::set<std::string>& present,
                   const Clock& clock);

// The node went NotReady (heartbeats stopped, or its process died): every live pod on it is
// evicted (reason NodeLost), so PodEvicted policies run, e.g. RestartJob elsewhere. Pods the
// controller was killing just end. A running gang left with fewer than minAvailable running
// pods raises the Unknown event (Volcano's pod group going Unknown). When the node comes back,
// a report of an evicted pod still running gets it killed (on_pod_report): no evicted pod
// runs beside its replacement.
Effects on_node_lost(JobModel& m, const std::string& node, const std::string& why,
                     const Clock& clock);
// Whether the job has a NotReady node's pods replaced before the node's lease is over
// (kReplaceLostPodsAnnotation: "immediately"); by default only after, when they are surely dead.
bool replaces_lost_pods_at_once(const JobSpec& spec);
// Once a lost node's lease is over its supervisors have sent its pods SIGTERM; they are surely
// dead this much later: the longest lease-stop grace period among the job's live pods on it
// (lease_stop_grace_ms; 0 when it has none there).
int64_t lost_pods_stop_ms(const JobModel& m, const std::string& node);

// The scheduler evicts pod `uid` (preemption or reclaim, `reason` "Preempted" or "Reclaimed"):
// a pod on its node is killed there and ends with that reason; one not launched yet ends here.
// Either way its job hears PodEvicted. Unknown or ended pods are left alone.
Effects on_pod_evicted(JobModel& m, const std::string& uid, const std::string& reason,
                       const std::string& why, const Clock& clock);

// Recount status from the pod table (pending, running, ..., taskStatusCount, runningDuration).
void update_counts(JobModel& m, int64_t now_ms);

}  // namespace caldera
