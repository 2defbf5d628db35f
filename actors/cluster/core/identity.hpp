// Which cluster a store belongs to, and what a coordinator does when its store and a node's
// disagree: a coordinator whose store was lost must not take the nodes' pods for strays. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace caldera {

// Made at a cluster's first start and kept in every store of it (the coordinator's, and each
// node's once it joined). The generation goes up when a coordinator's store is restored from a
// backup or replaced by an empty one an operator accepted.
struct ClusterIdentity {
  std::string id;  // empty: none yet (a new store)
  uint64_t generation = 0;
  bool operator==(const ClusterIdentity&) const = default;
};

// Where a store keeps it (Family::Meta): the coordinator's, and each node's. A coordinator's own
// node shares its store, and so its identity.
inline constexpr const char* kClusterIdKey = "cluster_id";
inline constexpr const char* kClusterGenerationKey = "cluster_generation";

// What becomes of a node's registration, as far as identities go.
enum class IdentityVerdict {
  Admit,    // the node is (or now joins) this cluster
  Halt,     // our store is new, but the node's is of a cluster: ours was lost. Act on nothing.
  Foreign,  // the node belongs to another cluster: refuse it
};

// A coordinator's view of its cluster's identity.
class IdentityKeeper {
 public:
  // `stored`: what its store holds (an empty id for a new store). `candidate`: the id it takes
  // when a new store turns out to be a new cluster's. `alone`: no node but its own is configured
  // (nobody else could hold the cluster's id). `accept_empty_store`: the operator said a new
  // store is to carry on the cluster the nodes hold. `restored`: the store was copied from a
  // backup, and carries on its cluster in the next generation.
  IdentityKeeper(ClusterIdentity stored, std::string candidate, bool alone, bool accept_empty_store,
                 bool restored);

  // A node that is not the coordinator's own presents the identity its store holds.
  IdentityVerdict on_node(const std::string& node, const ClusterIdentity& presented);

  // The identity to tell nodes; empty while a new store is not yet confirmed.
  const ClusterIdentity& identity() const { return current_; }
  // Set once when the identity was first settled (confirmed or adopted): to be written to the
  // store. Cleared by taking it.
  std::optional<ClusterIdentity> take_to_store();
  bool halted() const { return !halt_reason_.empty(); }
  // Why it acts on nothing: which store is missing, what the nodes hold, how to restore.
  const std::string& halt_reason() const { return halt_reason_; }
  // Why a foreign node was refused (set by on_node).
  const std::string& refusal() const { return refusal_; }

 private:
  ClusterIdentity current_;
  std::string candidate_;
  bool accept_empty_store_;
  bool settled_;  // the store has (or is writing) an identity
  std::optional<ClusterIdentity> to_store_;
  std::string halt_reason_, refusal_;
};

}  // namespace caldera
