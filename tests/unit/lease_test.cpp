// A worker's lease: counted from when it sent what the coordinator answered, never shortened.
#include "actors/node/core/lease.hpp"

#include <gtest/gtest.h>

namespace caldera {
namespace {

TEST(Lease, RunsFromTheSendingOfTheAnsweredRequest) {
  Lease lease(5000);
  EXPECT_FALSE(lease.held(0)) << "never held before a first answer";
  EXPECT_TRUE(lease.renew(1000));
  EXPECT_EQ(lease.deadline_ms(), 6000);
  EXPECT_TRUE(lease.held(5999));
  EXPECT_FALSE(lease.held(6000));
}

TEST(Lease, ALateAnswerToAnOlderRequestNeverShortensIt) {
  Lease lease(5000);
  EXPECT_TRUE(lease.renew(3000));
  EXPECT_FALSE(lease.renew(2500)) << "an answer overtaken by a newer one";
  EXPECT_EQ(lease.deadline_ms(), 8000);
  EXPECT_TRUE(lease.renew(3500));
  EXPECT_EQ(lease.deadline_ms(), 8500);
}

}  // namespace
}  // namespace caldera
