#include "messages/model/queue.hpp"

namespace caldera {

std::string observed_state(const QueueSpec& spec, const QueueStatus& status) {
  if (spec.state != kQueueClosed) return kQueueOpen;
  return status.pending + status.inqueue + status.running > 0 ? kQueueClosing : kQueueClosed;
}

}  // namespace caldera
