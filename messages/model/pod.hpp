// A pod: one replica of a task, run on a node as processes (or as a timer when simulated).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "messages/model/resources.hpp"

namespace caldera {

enum class PodPhase { Pending, Running, Succeeded, Failed, Unknown };

std::string_view to_string(PodPhase p);
std::optional<PodPhase> parse_pod_phase(std::string_view s);
inline bool is_terminal(PodPhase p) {
  return p == PodPhase::Succeeded || p == PodPhase::Failed;
}

enum class ContainerState { Waiting, Running, Terminated };

std::string_view to_string(ContainerState s);
std::optional<ContainerState> parse_container_state(std::string_view s);

struct ContainerStatus {
  std::string name;
  ContainerState state = ContainerState::Waiting;
  int32_t exit_code = 0;
  int32_t signal = 0;
  std::string reason;
  int64_t started_ms = 0;
  int64_t finished_ms = 0;
  bool operator==(const ContainerStatus&) const = default;
};

struct Pod {
  std::string name;  // {job}-{task}-{index}
  std::string uid;
  std::string namespace_;
  std::string job_name;
  std::string task_name;
  int32_t index = 0;
  int32_t job_version = 0;
  std::string node;
  std::string host_ip;  // the node's address, as Kubernetes' status.hostIP
  PodPhase phase = PodPhase::Pending;
  std::string reason;
  std::string message;
  std::vector<ContainerStatus> containers;
  int64_t created_ms = 0;
  int64_t started_ms = 0;
  int64_t finished_ms = 0;
  bool out_of_sync = false;
  int32_t partition = -1;  // -1: the task has no partition policy
  // The node numbers each status of a pod it makes durable (1, 2, ...; 0: none reported yet),
  // so that a repeated or reordered report is recognised (DESIGN rule 5).
  uint64_t status_seq = 0;
  bool batch_job = false;  // its job is a Kubernetes Job (batch/v1), not a Volcano Job
  bool operator==(const Pod&) const = default;
};

// The node could not create the pod (its record, directory, files or supervisor): nothing of it
// ran. Kubernetes' FailedCreate; the job controller makes the pod again instead of failing it.
inline constexpr std::string_view kFailedCreate = "FailedCreate";
// The reason of a pod whose node was lost (NotReady) while it was live: the pod is evicted, as the
// Kubernetes node controller marks the pods of an unresponsive node.
inline constexpr std::string_view kNodeLost = "NodeLost";
// A pod's grace period between SIGTERM and SIGKILL when it is stopped and its template sets no
// terminationGracePeriodSeconds (cluster.capnp's PodLaunch graceMs default).
inline constexpr int64_t kPodGraceMs = 10000;
// The same when its supervisor stops it because its node's lease ran out: its replacement waits
// for it, so a pod that asks for nothing gets a short one (LEASE_STOP_GRACE_MS in
// node/shim/shim.c, PodLaunch leaseStopGraceMs).
inline constexpr int64_t kLeaseStopGraceMs = 1000;
// terminationGracePeriodSeconds at most: a lost node's pods are replaced only after it.
inline constexpr int64_t kMaxTerminationGraceSeconds = 3600;
// A container's reason when its node's lease ran out (the node was cut off from the coordinator):
// its pod ends Failed with kNodeLost.
inline constexpr std::string_view kLeaseExpired = "LeaseExpired";
// The reason of a pod the scheduler evicted to make room for a higher-priority gang: as a lost
// node's pods, its job hears PodEvicted.
inline constexpr std::string_view kPreempted = "Preempted";
// Likewise for a pod of a queue over its share evicted for a gang of a queue below its own.
inline constexpr std::string_view kReclaimed = "Reclaimed";

// A pod still holds (or may soon hold) resources on a node.
inline bool is_live(const Pod& p) {
  return !is_terminal(p.phase);
}

// Kubernetes' rule: Succeeded when every container exited 0, Failed when all ended and one did
// not, Running while any runs, Pending before any started.
PodPhase derive_pod_phase(const std::vector<ContainerStatus>& containers);

}  // namespace caldera
