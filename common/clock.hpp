// The wall clock (milliseconds since the Unix epoch): one definition for every part, and a value
// an actor's environment carries, so that a test can hand an actor a clock it drives.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <utility>

namespace caldera {

inline int64_t system_now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

class WallClock {
 public:
  WallClock() = default;  // the system's
  explicit WallClock(std::function<int64_t()> now) : now_(std::move(now)) {}
  int64_t now_ms() const { return now_ ? now_() : system_now_ms(); }

 private:
  std::function<int64_t()> now_;
};

}  // namespace caldera
