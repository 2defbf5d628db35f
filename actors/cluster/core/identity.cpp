#include "actors/cluster/core/identity.hpp"

#include <utility>

namespace caldera {

IdentityKeeper::IdentityKeeper(ClusterIdentity stored, std::string candidate, bool alone,
                               bool accept_empty_store, bool restored)
    : current_(std::move(stored)),
      candidate_(std::move(candidate)),
      accept_empty_store_(accept_empty_store),
      settled_(!current_.id.empty()) {
  if (settled_ && restored) {
    ++current_.generation;
    to_store_ = current_;
  }
  // A cluster of one node, or an embedded one: no other store could know better.
  if (!settled_ && alone) {
    current_ = {candidate_, 0};
    settled_ = true;
    to_store_ = current_;
  }
}

IdentityVerdict IdentityKeeper::on_node(const std::string& node, const ClusterIdentity& presented) {
  refusal_.clear();
  if (halted()) return IdentityVerdict::Halt;
  if (settled_) {
    if (presented.id.empty() || presented.id == current_.id) return IdentityVerdict::Admit;
    refusal_ = "node '" + node + "' belongs to cluster " + presented.id + ", not to this one (" +
               current_.id + "): its data dir is another cluster's; give it an empty one to join";
    return IdentityVerdict::Foreign;
  }
  if (presented.id.empty()) {  // a new node of a new cluster: this is that cluster
    current_ = {candidate_, 0};
  } else if (accept_empty_store_) {  // the operator's word: carry on the nodes' cluster
    current_ = {presented.id, presented.generation + 1};
  } else {
    halt_reason_ = "the coordinator's store is new (empty), but node '" + node +
                   "' belongs to cluster " + presented.id + " (generation " +
                   std::to_string(presented.generation) +
                   "): the coordinator's data dir was lost or replaced. Its nodes' pods run on "
                   "and nothing is decided. Restore the store (calderad --restore-from BACKUP, "
                   "from `caldera admin backup`), or start over with this empty store "
                   "(calderad --accept-empty-store: the nodes' pods of jobs it does not know "
                   "are then stopped)";
    return IdentityVerdict::Halt;
  }
  settled_ = true;
  to_store_ = current_;
  return IdentityVerdict::Admit;
}

std::optional<ClusterIdentity> IdentityKeeper::take_to_store() {
  return std::exchange(to_store_, std::nullopt);
}

}  // namespace caldera
