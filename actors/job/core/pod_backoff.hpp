// A Kubernetes Job's pod failure back-off: after a failure, a new pod waits 10 s, doubled with
// each failure since the last success, at most 6 min.
#pragma once

#include <cstdint>

namespace caldera {

inline constexpr int64_t kPodBackoffBaseMs = 10'000;
inline constexpr int64_t kPodBackoffMaxMs = 360'000;

struct PodBackoff {
  int32_t failures_since_success = 0;
  int64_t last_failure_ms = 0;
  bool operator==(const PodBackoff&) const = default;
};

// A pod of the job ended (in the order they ended): a success resets the back-off.
void record_pod_end(PodBackoff& b, bool succeeded, int64_t ended_ms);

// The wait after `failures` failures since the last success: 0, 10 s, 20 s, 40 s, ... 6 min.
int64_t pod_backoff_delay_ms(int32_t failures);

// When the job may create a pod again: at once (<= now) or at the time returned.
int64_t pod_allowed_at_ms(const PodBackoff& b);

}  // namespace caldera
