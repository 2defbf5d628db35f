// History retention's decision: which settled jobs go, oldest first, by count and by age.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "actors/history/core/retention.hpp"

namespace caldera {
namespace {

constexpr int64_t kDay = int64_t{24} * 3600 * 1000;

// The reasons the pass gives for rows that finished at these times, until the first that stays.
std::vector<std::string> decide(const RetentionPolicy& p, int64_t kept, int64_t now,
                                const std::vector<int64_t>& finished) {
  RetentionPass pass(p, kept, now);
  std::vector<std::string> out;
  for (auto ms : finished) {
    auto r = pass.next(ms);
    if (!r) break;
    out.push_back(to_string(*r));
  }
  return out;
}

TEST(Retention, ByCountTheOldestBeyondTheLimitGo) {
  RetentionPolicy p{3, 0};
  EXPECT_EQ(decide(p, 5, 100 * kDay, {1, 2, 3, 4, 5}),
            (std::vector<std::string>{"count", "count"}));
  EXPECT_TRUE(decide(p, 3, 100 * kDay, {1, 2, 3}).empty());  // at the limit: all stay
  EXPECT_TRUE(decide(p, 0, 100 * kDay, {}).empty());
}

TEST(Retention, ByAgeThoseThatFinishedLongerAgoGo) {
  RetentionPolicy p{0, 30 * kDay};
  const int64_t now = 100 * kDay;
  EXPECT_EQ(decide(p, 4, now, {60 * kDay, 70 * kDay, 71 * kDay, 99 * kDay}),
            (std::vector<std::string>{"age", "age"}));
  // Exactly maxAge ago: it has had its time.
  EXPECT_EQ(decide(p, 1, now, {70 * kDay}), (std::vector<std::string>{"age"}));
  EXPECT_TRUE(decide(p, 1, now, {70 * kDay + 1}).empty());
}

TEST(Retention, BothLimitsCountFirstThenAge) {
  RetentionPolicy p{2, 30 * kDay};
  const int64_t now = 100 * kDay;
  // Five kept: three over the count; of the rest, the one older than 30 days goes for its age.
  EXPECT_EQ(decide(p, 5, now, {10 * kDay, 20 * kDay, 30 * kDay, 40 * kDay, 90 * kDay}),
            (std::vector<std::string>{"count", "count", "count", "age"}));
}

TEST(Retention, ZeroKeepsEverything) {
  RetentionPolicy p{0, 0};
  EXPECT_TRUE(decide(p, 1'000'000, 100 * kDay, {1, 2, 3}).empty());
}

TEST(Retention, MaxAgeIsAGoDurationOrWholeDays) {
  EXPECT_EQ(parse_history_age_ms("30d"), 30 * kDay);
  EXPECT_EQ(parse_history_age_ms("720h"), 30 * kDay);
  EXPECT_EQ(parse_history_age_ms("90m"), int64_t{90} * 60 * 1000);
  EXPECT_EQ(parse_history_age_ms("0"), 0);
  EXPECT_EQ(parse_history_age_ms("0d"), 0);
  EXPECT_FALSE(parse_history_age_ms("d"));
  EXPECT_FALSE(parse_history_age_ms("1.5d"));
  EXPECT_FALSE(parse_history_age_ms("-1h"));
  EXPECT_FALSE(parse_history_age_ms("99999999d"));
  EXPECT_FALSE(parse_history_age_ms("week"));
}

}  // namespace
}  // namespace caldera
