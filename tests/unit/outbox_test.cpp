// The node's outbox: what is sent again, when, and what an acknowledgement takes out.
#include "actors/node/core/outbox.hpp"

#include <gtest/gtest.h>

namespace caldera {
namespace {

using Due = std::vector<std::pair<std::string, uint64_t>>;

TEST(Outbox, AStatusNotYetDurableIsNeverDue) {
  Outbox o;
  o.recorded("u1", 1);
  EXPECT_TRUE(o.due(100000, 2000).empty());
  EXPECT_EQ(o.size(), 1u);
}

TEST(Outbox, AnUnacknowledgedStatusIsDueAfterTheIntervalThenLessAndLessOften) {
  Outbox o;
  o.recorded("u1", 1);
  o.stored("u1", 1, 1000);
  EXPECT_TRUE(o.due(2999, 2000).empty());
  EXPECT_EQ(o.resent(), 0u);
  EXPECT_EQ(o.due(3000, 2000), (Due{{"u1", 1}}));
  EXPECT_EQ(o.resent(), 1u);
  EXPECT_TRUE(o.due(6999, 2000).empty()) << "sent again at 3000: next after 4 s";
  EXPECT_EQ(o.due(7000, 2000), (Due{{"u1", 1}}));
  int64_t t = 7000;
  for (int64_t wait : {8000, 16000, 32000, 32000}) {
    EXPECT_TRUE(o.due(t + wait - 1, 2000).empty()) << wait;
    EXPECT_EQ(o.due(t + wait, 2000), (Due{{"u1", 1}})) << wait;
    t += wait;
  }
  // A new status starts over.
  o.recorded("u1", 2);
  o.stored("u1", 2, t);
  EXPECT_EQ(o.due(t + 2000, 2000), (Due{{"u1", 2}}));
}

TEST(Outbox, OnlyTheLatestStatusOfAPodWaits) {
  Outbox o;
  o.recorded("u1", 1);
  o.stored("u1", 1, 1000);
  o.recorded("u1", 2);
  o.stored("u1", 1, 1500);  // the older write's completion: not the latest
  EXPECT_TRUE(o.due(9000, 2000).empty()) << "status 2 is not durable yet";
  o.stored("u1", 2, 2000);
  EXPECT_EQ(o.due(9000, 2000), (Due{{"u1", 2}}));
}

TEST(Outbox, AnAcknowledgementOfAnOlderStatusKeepsTheNewerOne) {
  Outbox o;
  o.recorded("u1", 2);
  o.stored("u1", 2, 1000);
  o.acknowledged("u1", 1);
  EXPECT_EQ(o.size(), 1u);
  o.acknowledged("u1", 2);
  EXPECT_TRUE(o.empty());
  o.acknowledged("u1", 3);  // a late repeat
  EXPECT_TRUE(o.empty());
}

TEST(Outbox, ARemovedPodIsForgotten) {
  Outbox o;
  o.recorded("u1", 1);
  o.recorded("u2", 1);
  o.forget("u1");
  EXPECT_EQ(o.size(), 1u);
  o.stored("u2", 1, 0);
  EXPECT_EQ(o.due(5000, 2000), (Due{{"u2", 1}}));
}

}  // namespace
}  // namespace caldera
