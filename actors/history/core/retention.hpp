// History retention: which settled jobs go, oldest first, so that the store keeps at most
// maxFinishedJobs of them and none that finished more than maxAge ago.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace caldera {

// cluster.history in the cluster config. 0: no limit of that kind.
struct RetentionPolicy {
  int64_t max_finished_jobs = 1'000'000;
  int64_t max_age_ms = int64_t{30} * 24 * 3600 * 1000;  // 30 days
  bool operator==(const RetentionPolicy&) const = default;
};

enum class PurgeReason { Count, Age };
const char* to_string(PurgeReason r);

// One pass over the History rows, oldest first: says of each row whether it goes, and why,
// until the first that stays (every later one finished later, and is within the count).
class RetentionPass {
 public:
  // `kept`: how many settled jobs the store holds (rows that are already being deleted count:
  // they are still there, and they go).
  RetentionPass(const RetentionPolicy& policy, int64_t kept, int64_t now_ms);
  std::optional<PurgeReason> next(int64_t finished_ms);

 private:
  RetentionPolicy policy_;
  int64_t excess_ = 0;
  int64_t going_ = 0;
  int64_t now_ms_ = 0;
};

// cluster.history.maxAge: a Go duration ("720h", "90m") or whole days ("30d"); "0": no limit.
// nullopt when it is not one, or negative.
std::optional<int64_t> parse_history_age_ms(const std::string& text);

}  // namespace caldera
