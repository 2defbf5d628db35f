#include "actors/store/pending_commits.hpp"

#include <utility>

#include "actors/store/commit_relay.hpp"

namespace caldera {

void PendingCommits::commit(const caf::actor& self, Store& store, std::vector<Write> writes,
                            std::function<void(const std::string& error)> then) {
  const uint64_t id = ++next_;
  waiting_.emplace(id, std::move(then));
  store.commit(std::move(writes),
               [self, id](std::string error) { notify_committed(self, id, std::move(error)); });
}

bool PendingCommits::done(uint64_t id, const std::string& error) {
  auto it = waiting_.find(id);
  if (it == waiting_.end()) return false;
  auto then = std::move(it->second);
  waiting_.erase(it);
  then(error);
  return true;
}

}  // namespace caldera
