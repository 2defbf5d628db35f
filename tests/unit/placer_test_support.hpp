// Gangs, queues and classes as the placer's tests ask for them.
#pragma once

#include <optional>
#include <string>

#include "actors/scheduler/core/placer.hpp"

namespace caldera::testing {

// A node's: `m` milli-cpus and 110 pod slots.
inline ResourceList cpu(MilliValue m) {
  return ResourceList{{{"cpu", m}, {"pods", 110 * 1000}}};
}

// A pod's: `m` milli-cpus and one pod slot.
inline ResourceList pod_cpu(MilliValue m) {
  return ResourceList{{{"cpu", m}, {"pods", 1000}}};
}

// `n` pods of `each` milli-cpus (one pod slot each), `min` of them at once.
inline GangRequest gang(const std::string& job, int n, MilliValue each, int min,
                        const std::string& queue = kDefaultQueue, const std::string& klass = "",
                        int64_t created = 0) {
  GangRequest r;
  r.job_key = job;
  for (int i = 0; i < n; ++i)
    r.pods.push_back({job + "-" + std::to_string(i), pod_cpu(each), "main"});
  r.min_count = min;
  r.created_ms = created;
  r.group = {queue, klass, min};
  return r;
}

inline Queue queue(const std::string& name, int32_t weight = 1,
                   std::optional<ResourceList> capability = std::nullopt) {
  Queue q;
  q.spec.name = name;
  q.spec.weight = weight;
  q.spec.capability = std::move(capability);
  return q;
}

inline PriorityClass klass(const std::string& name, int32_t value, const std::string& policy = "") {
  PriorityClass c;
  c.name = name;
  c.value = value;
  if (!policy.empty()) c.preemption_policy = policy;
  return c;
}

}  // namespace caldera::testing
