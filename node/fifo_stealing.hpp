// CAF's work stealing, with what a worker's actors schedule queued behind what it already has.
#pragma once

#include <caf/policy/work_stealing.hpp>
#include <caf/resumable.hpp>
#include <caf/scheduler/coordinator.hpp>

namespace caldera {

// CAF 0.17's work stealing puts an actor that a worker's own actors schedule at the front of that
// worker's queue: the actor scheduled last runs first, and an actor is resumed for each message
// sent to it instead of finding several in its mailbox. This keeps each queue in FIFO order.
class FifoStealing : public caf::policy::work_stealing {
 public:
  template <class Worker>
  void internal_enqueue(Worker* self, caf::resumable* job) {
    d(self).queue.append(job);
  }
};

using FifoStealingCoordinator = caf::scheduler::coordinator<FifoStealing>;

}  // namespace caldera
