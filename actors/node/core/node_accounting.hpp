// A node's own count of what it has promised: the pods it runs and the reservations it holds,
// against its capacity. It accepts a gang's reservation only if all of it fits. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "messages/model/resources.hpp"

namespace caldera {

// Why: the coordinator's view of a node can be stale (a restart, a lost message); the node
// itself refuses what would over-commit it (DESIGN rule 6).
class NodeAccounting {
 public:
  struct Ask {
    std::string uid;
    ResourceList requests;
  };

  explicit NodeAccounting(ResourceList capacity) : capacity_(std::move(capacity)) {}

  // Reserves every pod of `asks` until `expires_ms`, or none: nullopt when done, else why not.
  // Idempotent per uid: a pod reserved or running already counts once (and a repeat extends
  // its reservation).
  std::optional<std::string> reserve(const std::vector<Ask>& asks, int64_t expires_ms);
  // The pod starts: its reservation becomes a running pod. Without a reservation (it expired,
  // or a pod recovered after a restart) it is taken if it fits; nullopt when held, else why not.
  std::optional<std::string> bind(const Ask& ask);
  // Holds a pod that runs already (re-adopted at start), whether or not it fits.
  void adopt(const Ask& ask);
  // The pod ended, was removed, or its reservation was cancelled: its room is free again.
  void release(const std::string& uid);
  // Reservations never bound by `now_ms` are dropped; returns their uids.
  std::vector<std::string> expire(int64_t now_ms);
  std::optional<int64_t> next_expiry_ms() const;

  const ResourceList& used() const { return used_; }  // running plus reserved
  bool holds(const std::string& uid) const { return held_.count(uid) > 0; }
  bool reserved(const std::string& uid) const;

 private:
  struct Held {
    ResourceList requests;
    std::optional<int64_t> expires_ms;  // set: a reservation not bound yet
  };
  std::optional<std::string> fits(const ResourceList& more) const;

  void take(const std::string& uid, Held h);

  ResourceList capacity_;
  ResourceList used_;  // the sum of held_, kept as it changes: a node may hold many pods
  std::unordered_map<std::string, Held> held_;  // by pod uid
};

}  // namespace caldera
