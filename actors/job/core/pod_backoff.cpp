#include "actors/job/core/pod_backoff.hpp"

#include <algorithm>

namespace caldera {

void record_pod_end(PodBackoff& b, bool succeeded, int64_t ended_ms) {
  if (succeeded) {
    b = PodBackoff{};
    return;
  }
  ++b.failures_since_success;
  b.last_failure_ms = std::max(b.last_failure_ms, ended_ms);
}

int64_t pod_backoff_delay_ms(int32_t failures) {
  if (failures <= 0) return 0;
  int64_t delay = kPodBackoffBaseMs;
  // Doubled until the cap: past it more doublings change nothing (and would overflow).
  for (int32_t i = 1; i < failures && delay < kPodBackoffMaxMs; ++i) delay *= 2;
  return std::min(delay, kPodBackoffMaxMs);
}

int64_t pod_allowed_at_ms(const PodBackoff& b) {
  if (b.failures_since_success == 0) return 0;
  return b.last_failure_ms + pod_backoff_delay_ms(b.failures_since_success);
}

}  // namespace caldera
