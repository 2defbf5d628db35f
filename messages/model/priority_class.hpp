// Kubernetes' PriorityClass (scheduling.k8s.io/v1): a named priority for the jobs that name it in
// priorityClassName. Cluster-scoped.
#pragma once

#include <cstdint>
#include <string>

namespace caldera {

inline constexpr const char* kPriorityApiVersion = "scheduling.k8s.io/v1";
inline constexpr const char* kPreemptLowerPriority = "PreemptLowerPriority";
inline constexpr const char* kPreemptNever = "Never";
// User classes stay at or below this; higher values are Kubernetes' system classes.
inline constexpr int32_t kMaxUserPriority = 1000000000;

struct PriorityClass {
  std::string uid;
  int64_t created_ms = 0;
  std::string name;
  int32_t value = 0;
  // PreemptLowerPriority (default): its jobs may evict lower-priority pods; Never: they wait.
  std::string preemption_policy = kPreemptLowerPriority;
  bool global_default = false;  // the priority of jobs that name no class
  std::string description;
  bool operator==(const PriorityClass&) const = default;
};

}  // namespace caldera
