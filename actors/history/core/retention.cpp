#include "actors/history/core/retention.hpp"

#include "messages/yaml/yaml_duration.hpp"

namespace caldera {

const char* to_string(PurgeReason r) {
  return r == PurgeReason::Age ? "age" : "count";
}

RetentionPass::RetentionPass(const RetentionPolicy& policy, int64_t kept, int64_t now_ms)
    : policy_(policy),
      excess_(policy.max_finished_jobs > 0 ? kept - policy.max_finished_jobs : 0),
      now_ms_(now_ms) {}

std::optional<PurgeReason> RetentionPass::next(int64_t finished_ms) {
  if (going_ < excess_) {
    ++going_;
    return PurgeReason::Count;
  }
  if (policy_.max_age_ms > 0 && finished_ms <= now_ms_ - policy_.max_age_ms) {
    ++going_;
    return PurgeReason::Age;
  }
  return std::nullopt;
}

std::optional<int64_t> parse_history_age_ms(const std::string& text) {
  if (text.size() > 1 && text.back() == 'd') {
    int64_t days = 0;
    for (size_t i = 0; i + 1 < text.size(); ++i) {
      if (text[i] < '0' || text[i] > '9') return std::nullopt;
      days = days * 10 + (text[i] - '0');
      if (days > 1'000'000) return std::nullopt;
    }
    return days * 24 * 3600 * 1000;
  }
  auto ms = parse_go_duration_ms(text);
  if (!ms || *ms < 0) return std::nullopt;
  return ms;
}

}  // namespace caldera
