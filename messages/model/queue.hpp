// Volcano's Queue (scheduling.volcano.sh/v1beta1): a share of the cluster by weight, capped by
// its capability. Cluster-scoped: a name, no namespace.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "messages/model/resources.hpp"

namespace caldera {

inline constexpr const char* kSchedulingApiVersion = "scheduling.volcano.sh/v1beta1";
// The queue of a job that names none; it exists without a document (Volcano creates it).
inline constexpr const char* kDefaultQueue = "default";

struct QueueSpec {
  std::string name;
  std::map<std::string, std::string> labels = {};
  std::map<std::string, std::string> annotations = {};
  int32_t weight = 1;                           // 1..65535 (Volcano's webhook bounds)
  std::optional<ResourceList> capability = {};  // a hard cap on what its pods hold; unset: none
  bool reclaimable = true;  // whether others may take back what it holds past its share
  bool operator==(const QueueSpec&) const = default;
};

struct Queue {
  std::string uid;
  int64_t created_ms = 0;
  QueueSpec spec = {};
  bool operator==(const Queue&) const = default;
};

// What the scheduler reports per queue (Volcano's QueueStatus, and proportion's view).
struct QueueStatus {
  std::string name;
  ResourceList allocated = {};  // what its pods hold
  ResourceList deserved = {};   // its share of the cluster, dealt as a session would now
  int32_t pending = 0;          // pod groups waiting to be admitted (enqueued)
  int32_t inqueue = 0;          // pod groups admitted, waiting for their gang to be placed
  int32_t running = 0;          // pod groups whose gang holds nodes
  bool operator==(const QueueStatus&) const = default;
};

}  // namespace caldera
