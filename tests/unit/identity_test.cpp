// A coordinator's cluster identity: a new store confirmed by new nodes, a lost store noticed by
// nodes that know the cluster, foreign nodes refused.
#include "actors/cluster/core/identity.hpp"

#include <gtest/gtest.h>

namespace caldera {
namespace {

TEST(Identity, ANewClustersFirstNewNodeConfirmsTheCandidate) {
  IdentityKeeper k({}, "c-new", false, false, false);
  EXPECT_EQ(k.identity().id, "") << "unconfirmed: nothing to tell nodes yet";
  EXPECT_FALSE(k.take_to_store());
  EXPECT_EQ(k.on_node("node-2", {}), IdentityVerdict::Admit);
  EXPECT_EQ(k.identity(), (ClusterIdentity{"c-new", 0}));
  EXPECT_EQ(k.take_to_store(), (ClusterIdentity{"c-new", 0}));
  EXPECT_FALSE(k.take_to_store()) << "written once";
  EXPECT_EQ(k.on_node("node-3", {"c-new", 0}), IdentityVerdict::Admit);
}

TEST(Identity, ANewStoreWhoseNodesKnowTheClusterHaltsAndSaysHowToRestore) {
  IdentityKeeper k({}, "c-new", false, false, false);
  EXPECT_EQ(k.on_node("node-2", {"c-old", 3}), IdentityVerdict::Halt);
  EXPECT_TRUE(k.halted());
  for (const char* says : {"store is new", "node-2", "c-old", "generation 3", "--restore-from",
                           "caldera admin backup", "--accept-empty-store"})
    EXPECT_NE(k.halt_reason().find(says), std::string::npos) << says << ": " << k.halt_reason();
  EXPECT_FALSE(k.take_to_store()) << "the new store stays without an identity";
  // Halted for good: a new node changes nothing.
  EXPECT_EQ(k.on_node("node-4", {}), IdentityVerdict::Halt);
  EXPECT_EQ(k.identity().id, "");
}

TEST(Identity, AnAcceptedEmptyStoreCarriesOnTheNodesClusterInANewGeneration) {
  IdentityKeeper k({}, "c-new", false, true, false);
  EXPECT_EQ(k.on_node("node-2", {"c-old", 3}), IdentityVerdict::Admit);
  EXPECT_EQ(k.identity(), (ClusterIdentity{"c-old", 4}));
  EXPECT_EQ(k.take_to_store(), (ClusterIdentity{"c-old", 4}));
  EXPECT_EQ(k.on_node("node-3", {"c-old", 3}), IdentityVerdict::Admit);
}

TEST(Identity, AnEstablishedClusterRefusesANodeOfAnother) {
  IdentityKeeper k({"c-1", 2}, "unused", false, false, false);
  EXPECT_EQ(k.on_node("node-2", {"c-1", 2}), IdentityVerdict::Admit);
  EXPECT_EQ(k.on_node("node-3", {}), IdentityVerdict::Admit);
  EXPECT_EQ(k.on_node("node-4", {"c-9", 0}), IdentityVerdict::Foreign);
  EXPECT_NE(k.refusal().find("belongs to cluster c-9"), std::string::npos) << k.refusal();
  EXPECT_FALSE(k.halted());
  EXPECT_FALSE(k.take_to_store());
}

TEST(Identity, ARestoredStoreCarriesOnItsClusterInTheNextGeneration) {
  IdentityKeeper k({"c-1", 2}, "unused", false, false, true);
  EXPECT_EQ(k.identity(), (ClusterIdentity{"c-1", 3}));
  EXPECT_EQ(k.take_to_store(), (ClusterIdentity{"c-1", 3}));
  EXPECT_EQ(k.on_node("node-2", {"c-1", 2}), IdentityVerdict::Admit);
}

TEST(Identity, ACoordinatorAloneSettlesItsIdentityAtOnce) {
  IdentityKeeper k({}, "c-solo", true, false, false);
  EXPECT_EQ(k.identity(), (ClusterIdentity{"c-solo", 0}));
  EXPECT_EQ(k.take_to_store(), (ClusterIdentity{"c-solo", 0}));
}

}  // namespace
}  // namespace caldera
