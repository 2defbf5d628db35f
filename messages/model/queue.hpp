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
// A queue's states, as Volcano's: Open takes new jobs; Closed takes none, and its jobs go on;
// Closing is what a Closed queue reports while pod groups still wait or run in it.
inline constexpr const char* kQueueOpen = "Open";
inline constexpr const char* kQueueClosed = "Closed";
inline constexpr const char* kQueueClosing = "Closing";

struct QueueSpec {
  std::string name;
  std::map<std::string, std::string> labels = {};
  std::map<std::string, std::string> annotations = {};
  int32_t weight = 1;                           // 1..65535 (Volcano's webhook bounds)
  std::optional<ResourceList> capability = {};  // a hard cap on what its pods hold; unset: none
  bool reclaimable = true;  // whether others may take back what it holds past its share
  // Open or Closed as asked (Volcano's status.state, set by a file or `caldera queue close`);
  // "" only as read from a file that names none: Open at create, as it was at an update.
  std::string state = {};
  bool operator==(const QueueSpec&) const = default;
};

struct Queue {
  std::string uid;
  int64_t created_ms = 0;
  QueueSpec spec = {};
  int64_t generation = 1;  // metadata.generation: one more at each change of its spec
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
  std::string state = {};       // as a client reads it: observed_state (empty in the scheduler)
  bool operator==(const QueueStatus&) const = default;
};

// The state a queue reports: a Closed one is Closing while pod groups wait or run in it.
std::string observed_state(const QueueSpec& spec, const QueueStatus& status);

}  // namespace caldera
