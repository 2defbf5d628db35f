// CAF's work stealing, with what a worker's actors schedule queued behind what it already has, and
// handed to a sleeping worker when it would otherwise wait behind a backlog.
#pragma once

#include <cstddef>
#include <mutex>

#include <caf/policy/work_stealing.hpp>
#include <caf/resumable.hpp>
#include <caf/scheduler/coordinator.hpp>

namespace caldera {

// CAF 0.17's work stealing puts an actor that a worker's own actors schedule at the front of that
// worker's queue: the actor scheduled last runs first, and an actor is resumed for each message
// sent to it instead of finding several in its mailbox. This keeps each queue in FIFO order.
//
// A worker with nothing to do sleeps, and steals only when its sleep times out (every 10 ms): it
// is woken early only for actors scheduled from outside the workers. Meanwhile the other worker's
// actors may schedule a long queue of work. So an actor scheduled behind a backlog goes to a
// sleeping worker instead, if there is one: an idle machine pays nothing for it (the queue is
// empty, the actor runs next where it was scheduled), a busy one uses every worker.
class FifoStealing : public caf::policy::work_stealing {
 public:
  template <class Worker>
  void internal_enqueue(Worker* self, caf::resumable* job) {
    if (!d(self).queue.empty() && hand_to_sleeper(self, job)) return;
    d(self).queue.append(job);
  }

 private:
  // One other worker is looked at per call, in turn: the cost stays flat with many workers.
  template <class Worker>
  bool hand_to_sleeper(Worker* self, caf::resumable* job) {
    auto* parent = self->parent();
    const size_t n = parent->num_workers();
    if (n < 2) return false;
    size_t other = next_other_++ % (n - 1);
    if (other >= self->id()) ++other;  // any worker but this one
    auto& target = d(parent->worker_by_id(other));
    // Its lock held (it is about to sleep, waking up, or being given work from outside): the job
    // stays here, as with CAF's own policy.
    std::unique_lock<std::mutex> guard(target.waitdata.lock, std::try_to_lock);
    if (!guard.owns_lock() || !target.waitdata.sleeping) return false;
    // Under its lock: its wait checks its queue under the same lock, so the wake is not missed.
    target.queue.append(job);
    target.waitdata.cv.notify_one();
    return true;
  }

  size_t next_other_ = 0;  // each worker has its own policy object
};

using FifoStealingCoordinator = caf::scheduler::coordinator<FifoStealing>;

}  // namespace caldera
