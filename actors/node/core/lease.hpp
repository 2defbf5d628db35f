// A worker's lease: until when its pods may run, renewed by what the coordinator answers. Pure:
// times are ms of a monotonic clock, given.
#pragma once

#include <cstdint>

namespace caldera {

// The coordinator replaces a lost worker's pods only once their lease is surely over (see
// actors/cluster/core/membership.hpp). The worker counts its lease from when it *sent* what the
// coordinator answered, which is never later than when the coordinator counts it from (when it
// took the message in), so the worker's lease ends first.
class Lease {
 public:
  explicit Lease(int64_t timeout_ms) : timeout_ms_(timeout_ms) {}

  // An answer to a request sent at `sent_ms` (a heartbeat, a registration): the lease runs to
  // sent_ms + timeout, never shorter than it ran. True when the deadline moved.
  bool renew(int64_t sent_ms) {
    if (sent_ms + timeout_ms_ <= deadline_ms_) return false;
    deadline_ms_ = sent_ms + timeout_ms_;
    return true;
  }
  // 0: never held.
  int64_t deadline_ms() const { return deadline_ms_; }
  bool held(int64_t now_ms) const { return now_ms < deadline_ms_; }
  int64_t timeout_ms() const { return timeout_ms_; }

 private:
  int64_t timeout_ms_;
  int64_t deadline_ms_ = 0;
};

}  // namespace caldera
