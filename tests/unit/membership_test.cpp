// The membership core: who may join, heartbeats, timeouts and incarnation fencing.
#include "actors/cluster/core/membership.hpp"

#include <gtest/gtest.h>

namespace caldera {
namespace {

Registration reg(const std::string& name, uint64_t incarnation, const std::string& token = "",
                 const std::string& address = "127.0.0.1:7172") {
  return Registration{name, address, incarnation, token, false};
}

TEST(Membership, ARegisteredNodeIsReady) {
  Membership m({2000, "", {}});
  auto a = m.on_register(reg("n2", 7), 1000);
  EXPECT_TRUE(a.accepted);
  EXPECT_FALSE(a.restarted);
  ASSERT_NE(m.find("n2"), nullptr);
  EXPECT_TRUE(m.find("n2")->ready);
  EXPECT_EQ(m.find("n2")->incarnation, 7u);
}

TEST(Membership, AWrongOrMissingTokenIsRefused) {
  Membership m({2000, "secret", {}});
  auto none = m.on_register(reg("n2", 1), 0);
  EXPECT_FALSE(none.accepted);
  EXPECT_EQ(none.refusal, "the cluster needs a token and the node sent none");
  auto wrong = m.on_register(reg("n2", 1, "guess"), 0);
  EXPECT_FALSE(wrong.accepted);
  EXPECT_EQ(wrong.refusal, "the node's token is not the cluster's");
  EXPECT_EQ(m.find("n2"), nullptr);
  EXPECT_TRUE(m.on_register(reg("n2", 1, "secret"), 0).accepted);
}

TEST(Membership, ANodeNotInTheConfigIsRefused) {
  Membership m({2000, "", {"n1", "n2"}});
  auto a = m.on_register(reg("n9", 1), 0);
  EXPECT_FALSE(a.accepted);
  EXPECT_EQ(a.refusal, "node 'n9' is not in the cluster config");
}

TEST(Membership, ASecondProcessCannotTakeTheNameOfAReadyNode) {
  Membership m({2000, "", {}});
  ASSERT_TRUE(m.on_register(reg("n2", 1, "", "127.0.0.1:7172"), 0).accepted);
  auto a = m.on_register(reg("n2", 2, "", "127.0.0.1:9999"), 10);
  EXPECT_FALSE(a.accepted);
  EXPECT_EQ(m.find("n2")->incarnation, 1u);
}

TEST(Membership, HeartbeatsKeepANodeReadyPastTheTimeout) {
  Membership m({2000, "", {}});
  m.on_register(reg("n2", 1), 0);
  for (int64_t t = 500; t <= 5000; t += 500) {
    EXPECT_EQ(m.on_heartbeat("n2", 1, t), Heartbeat::Ok);
    EXPECT_TRUE(m.expire(t).empty());
  }
  EXPECT_TRUE(m.find("n2")->ready);
  EXPECT_EQ(m.next_expiry_ms(), 7000);
}

TEST(Membership, ASilentNodeIsNotReadyAtTheTimeoutAndNotBefore) {
  Membership m({2000, "", {}});
  m.on_register(reg("n2", 1), 1000);
  EXPECT_TRUE(m.expire(2999).empty());
  EXPECT_EQ(m.expire(3000), std::vector<std::string>{"n2"});
  EXPECT_FALSE(m.find("n2")->ready);
  EXPECT_EQ(m.find("n2")->reason, "no heartbeat for 2000ms");
  EXPECT_TRUE(m.expire(9000).empty()) << "reported once";
  EXPECT_EQ(m.lose(9000).size(), 1u);  // without leases, lost as soon as it is looked at
  EXPECT_FALSE(m.next_expiry_ms());
}

TEST(Membership, ANodeBackFromNotReadyMustRegisterAgain) {
  Membership m({2000, "", {}});
  m.on_register(reg("n2", 1), 0);
  m.expire(5000);
  EXPECT_EQ(m.on_heartbeat("n2", 1, 5100), Heartbeat::Reregister);
  EXPECT_FALSE(m.find("n2")->ready) << "a heartbeat alone does not make it Ready";
  auto a = m.on_register(reg("n2", 1), 5200);
  EXPECT_TRUE(a.accepted);
  EXPECT_TRUE(a.was_not_ready);
  EXPECT_FALSE(a.restarted);
  EXPECT_TRUE(m.find("n2")->ready);
}

TEST(Membership, AnUnknownNodesHeartbeatAsksForARegistration) {
  Membership m({2000, "", {}});
  EXPECT_EQ(m.on_heartbeat("ghost", 1, 0), Heartbeat::Reregister);
}

TEST(Membership, ANewIncarnationFencesTheOldOne) {
  Membership m({2000, "", {}});
  m.on_register(reg("n2", 1), 0);
  auto a = m.on_register(reg("n2", 2), 100);  // restarted: same address, new incarnation
  EXPECT_TRUE(a.accepted);
  EXPECT_TRUE(a.restarted);
  EXPECT_EQ(m.on_heartbeat("n2", 1, 200), Heartbeat::Stale);
  EXPECT_FALSE(m.on_disconnect("n2", 1, "connection lost")) << "the old process's connection";
  EXPECT_TRUE(m.find("n2")->ready);
  EXPECT_EQ(m.on_heartbeat("n2", 2, 300), Heartbeat::Ok);
}

TEST(Membership, ALostConnectionMakesTheNodeNotReadyOnce) {
  Membership m({2000, "", {}});
  m.on_register(reg("n2", 1), 0);
  EXPECT_TRUE(m.on_disconnect("n2", 1, "connection lost"));
  EXPECT_FALSE(m.find("n2")->ready);
  EXPECT_EQ(m.find("n2")->reason, "connection lost");
  EXPECT_FALSE(m.on_disconnect("n2", 1, "connection lost"));
}

TEST(Membership, TheCoordinatorsOwnNodeNeverTimesOut) {
  Membership m({2000, "", {}});
  m.on_register(Registration{"n1", "127.0.0.1:7171", 1, "", true}, 0);
  EXPECT_TRUE(m.expire(60000).empty());
  EXPECT_TRUE(m.find("n1")->ready);
  EXPECT_FALSE(m.next_expiry_ms());
}

// Leases of 5 s: the pods have surely been told to stop 5000 + 50 + 200 ms after the last
// renewal.
MembershipOptions leased() {
  MembershipOptions o;
  o.heartbeat_timeout_ms = 2000;
  o.lease_ms = 5000;
  return o;
}

TEST(Membership, ALeaseIsOverAfterItsTimeAndItsMargins) {
  EXPECT_EQ(lease_over_after_ms(leased()), 5250);
  MembershipOptions none;
  EXPECT_EQ(lease_over_after_ms(none), 0);
}

TEST(Membership, ANotReadyNodeIsLostOnlyOnceItsLeaseIsSurelyOver) {
  Membership m(leased());
  m.on_register(reg("n2", 1), 0);
  EXPECT_EQ(m.on_heartbeat("n2", 1, 1000), Heartbeat::Ok);  // the lease runs from here
  EXPECT_EQ(m.expire(3000), std::vector<std::string>{"n2"});
  EXPECT_FALSE(m.find("n2")->ready);
  EXPECT_TRUE(m.lose(3000).empty());
  EXPECT_EQ(m.next_expiry_ms(), 6250);
  EXPECT_TRUE(m.lose(6249).empty());
  EXPECT_EQ(m.lose(6250), std::vector<std::string>{"n2"});
  EXPECT_TRUE(m.find("n2")->lost);
  EXPECT_TRUE(m.lose(9000).empty());  // once per outage
  EXPECT_FALSE(m.next_expiry_ms());
}

TEST(Membership, ADisconnectedNodeIsLostAtItsLeasesEndNotAtTheDisconnect) {
  Membership m(leased());
  m.on_register(reg("n2", 1), 500);
  ASSERT_TRUE(m.on_disconnect("n2", 1, "connection lost"));
  EXPECT_TRUE(m.lose(501).empty());
  EXPECT_EQ(m.lose(5750), std::vector<std::string>{"n2"});
}

TEST(Membership, ANodeBackBeforeItsLeaseIsOverIsNeverLost) {
  Membership m(leased());
  m.on_register(reg("n2", 1), 0);
  EXPECT_EQ(m.expire(2000).size(), 1u);
  EXPECT_EQ(m.on_heartbeat("n2", 1, 4000), Heartbeat::Reregister);
  EXPECT_TRUE(m.on_register(reg("n2", 1), 4100).accepted);
  EXPECT_TRUE(m.lose(6250).empty());
  EXPECT_TRUE(m.find("n2")->ready);
  // Lost in a later outage: counted from the registration, its renewal.
  EXPECT_EQ(m.expire(6100).size(), 1u);
  EXPECT_TRUE(m.lose(9349).empty());
  EXPECT_EQ(m.lose(9350).size(), 1u);
}

TEST(Membership, WithoutLeasesANotReadyNodeIsLostAtOnce) {
  Membership m({2000, "", {}});
  m.on_register(reg("n2", 1), 0);
  EXPECT_EQ(m.expire(2000).size(), 1u);
  EXPECT_EQ(m.lose(2000), std::vector<std::string>{"n2"});
}

TEST(Membership, AStallOfOursGivesEveryReadyNodeAFreshTimeoutButNoLongerLease) {
  Membership m(leased());
  m.on_register(reg("n2", 1), 0);
  m.on_register(reg("n3", 1), 0);
  ASSERT_TRUE(m.on_disconnect("n3", 1, "connection lost"));
  // Paused from 100 to 4100: n2's heartbeats were not taken in.
  m.on_stall(4100);
  EXPECT_TRUE(m.expire(4100).empty());
  EXPECT_TRUE(m.find("n2")->ready);
  EXPECT_EQ(m.find("n2")->last_renewal_ms, 0);
  EXPECT_TRUE(m.expire(6099).empty());
  EXPECT_EQ(m.expire(6100), std::vector<std::string>{"n2"});
  // Its lease still runs from its last renewal: lost at once now.
  EXPECT_EQ(m.lose(5250), (std::vector<std::string>{"n2", "n3"}));
}

TEST(Membership, AfterAStartTheConfigsNodesAreWaitedForAWholeLease) {
  EXPECT_EQ(startup_wait_ms(leased()), 5250);
  EXPECT_EQ(startup_wait_ms({2000, "", {}}), 4000);
}

}  // namespace
}  // namespace caldera
