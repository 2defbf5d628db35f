// Writes an actor waits for before it acts: each commit's outcome comes back to the actor as a
// message, (committed_atom, id, error), which it hands to done() to run what waited.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <caf/actor.hpp>

#include "storage/store.hpp"

namespace caldera {

class PendingCommits {
 public:
  // Queues `writes` on `store`; once they are durable (error "") or not, `self` gets
  // (committed_atom, id, error) and done(id, error) runs `then`.
  void commit(const caf::actor& self, Store& store, std::vector<Write> writes,
              std::function<void(const std::string& error)> then);
  // Runs the `then` of commit `id`; false when it is not one of these.
  bool done(uint64_t id, const std::string& error);

 private:
  std::map<uint64_t, std::function<void(const std::string&)>> waiting_;
  uint64_t next_ = 0;
};

}  // namespace caldera
