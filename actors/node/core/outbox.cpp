#include "actors/node/core/outbox.hpp"

#include <algorithm>

namespace caldera {

void Outbox::recorded(const std::string& uid, uint64_t seq) {
  entries_[uid] = Entry{seq, false, 0, 0};
}

void Outbox::stored(const std::string& uid, uint64_t seq, int64_t now_ms) {
  auto it = entries_.find(uid);
  if (it == entries_.end() || it->second.seq != seq) return;
  it->second.durable = true;
  it->second.sent_ms = now_ms;
}

void Outbox::acknowledged(const std::string& uid, uint64_t seq) {
  auto it = entries_.find(uid);
  if (it != entries_.end() && it->second.seq <= seq) entries_.erase(it);
}

void Outbox::forget(const std::string& uid) {
  entries_.erase(uid);
}

size_t Outbox::resent() const {
  size_t n = 0;
  for (const auto& [uid, e] : entries_) n += e.resends > 0;
  return n;
}

std::vector<std::pair<std::string, uint64_t>> Outbox::due(int64_t now_ms, int64_t after_ms) {
  std::vector<std::pair<std::string, uint64_t>> out;
  for (auto& [uid, e] : entries_) {
    constexpr int kMaxDoublings = 4;
    if (!e.durable || now_ms - e.sent_ms < (after_ms << std::min(e.resends, kMaxDoublings)))
      continue;
    e.sent_ms = now_ms;
    ++e.resends;
    out.emplace_back(uid, e.seq);
  }
  return out;
}

}  // namespace caldera
