// A job's pod group in a scheduling session, and seed 004's gang checks over it: valid, ready,
// pipelined and starving.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/scheduler/core/task_info.hpp"

namespace caldera::sched {

// Volcano's pod group phases: Pending until the enqueue action admits it (Inqueue), Running once
// minMember of its pods hold nodes or have succeeded, Unknown when some run but its gang could not
// be made whole again.
enum class PodGroupPhase { Pending, Inqueue, Running, Unknown };
std::string_view to_string(PodGroupPhase p);

struct JobInfo {
  std::string uid;  // the job's key, namespace/name
  std::string queue = "default";
  int32_t priority = 0;     // from its PriorityClass
  bool may_preempt = true;  // its class's preemptionPolicy is not Never
  int64_t created_ms = 0;
  PodGroupPhase phase = PodGroupPhase::Pending;
  int32_t min_available = 0;                          // the pod group's minMember
  std::map<std::string, int32_t> task_min_available;  // minTaskMember, per task
  // Per task: the pods that whole partitions must bring in this session (GangRequest's).
  std::map<std::string, int32_t> partition_min;
  ResourceList min_resources;  // what its first minAvailable pods ask in all (enqueue's check)
  std::vector<TaskInfo> tasks;

  int32_t task_min_available_total() const;
  // Counts by status (seed 004 section 1.2).
  int32_t ready_task_num() const;    // allocated statuses
  int32_t waiting_task_num() const;  // Pipelined
  int32_t valid_task_num() const;    // allocated statuses, Succeeded, Pipelined, Pending
  int32_t pending_best_effort_task_num() const;

  // Per task: each task's minimum is met by pods counted so. All three pass when minAvailable is
  // below the sum of the task minimums (Volcano skips the task check then).
  bool check_task_valid() const;
  bool check_task_ready() const;
  bool check_task_pipelined() const;

  bool is_ready() const;      // ReadyTaskNum + best effort >= minAvailable
  bool is_pipelined() const;  // WaitingTaskNum + ReadyTaskNum + best effort >= minAvailable
  bool is_starving() const;   // WaitingTaskNum + ReadyTaskNum < minAvailable
  bool operator==(const JobInfo&) const = default;
};

// Why a job may not be scheduled at all in this session (gang's validJobFn); nullopt: valid.
struct Invalid {
  std::string reason;  // NotEnoughPodsOfTask or NotEnoughPods
  std::string message;
};
std::optional<Invalid> job_valid(const JobInfo& job);

// The session's gang verdicts: the task check and the count check together.
bool job_ready(const JobInfo& job);
bool job_pipelined(const JobInfo& job);
bool job_starving(const JobInfo& job);

// Job order: higher priority first; then a job that is not ready before one that is (gang's
// jobOrderFn); then the older; then the smaller uid. A job that asks again keeps its creation
// time, so it keeps its place.
bool job_before(const JobInfo& l, const JobInfo& r);

// job_before as a value: sort by it to count each job's readiness once, not at every comparison.
struct JobOrderKey {
  int32_t neg_priority = 0;
  bool ready = false;
  int64_t created_ms = 0;
  std::string_view uid;
  auto operator<=>(const JobOrderKey&) const = default;
};
JobOrderKey job_order_key(const JobInfo& job);

// Task order within a job: higher task priority first, then by name.
bool task_before(const TaskInfo& l, const TaskInfo& r);

// Of `preemptees` (running pods of other jobs, in the order they would go), those that may be
// evicted without taking any job below its minAvailable of ready pods (gang's preemptableFn).
std::vector<const TaskInfo*> preemptable(
    const std::map<std::string, const JobInfo*>& jobs_by_uid,
    const std::vector<std::pair<std::string, const TaskInfo*>>& preemptees);

}  // namespace caldera::sched
