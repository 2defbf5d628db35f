#include "actors/node/core/node_accounting.hpp"

#include <fmt/format.h>

namespace caldera {

void NodeAccounting::take(const std::string& uid, Held h) {
  used_.add(h.requests);
  held_.emplace(uid, std::move(h));
}

bool NodeAccounting::reserved(const std::string& uid) const {
  auto it = held_.find(uid);
  return it != held_.end() && it->second.expires_ms.has_value();
}

std::optional<std::string> NodeAccounting::fits(const ResourceList& more) const {
  auto total = used_;
  total.add(more);
  for (const auto& [name, want] : total.values) {
    if (want <= 0) continue;
    auto have = capacity_.get(name);
    if (want > have)
      return fmt::format("insufficient {}: {} held or reserved of {} with the new pods", name,
                         format_quantity(want), format_quantity(have));
  }
  return std::nullopt;
}

std::optional<std::string> NodeAccounting::reserve(const std::vector<Ask>& asks,
                                                   int64_t expires_ms) {
  ResourceList more;
  for (const auto& a : asks)
    if (!held_.count(a.uid)) more.add(a.requests);
  if (auto why = fits(more)) return why;
  for (const auto& a : asks) {
    auto it = held_.find(a.uid);
    if (it == held_.end())
      take(a.uid, Held{a.requests, expires_ms});
    else if (it->second.expires_ms)
      it->second.expires_ms = expires_ms;
  }
  return std::nullopt;
}

std::optional<std::string> NodeAccounting::bind(const Ask& ask) {
  auto it = held_.find(ask.uid);
  if (it != held_.end()) {
    it->second.expires_ms.reset();
    return std::nullopt;
  }
  if (auto why = fits(ask.requests)) return why;
  take(ask.uid, Held{ask.requests, std::nullopt});
  return std::nullopt;
}

void NodeAccounting::adopt(const Ask& ask) {
  release(ask.uid);
  take(ask.uid, Held{ask.requests, std::nullopt});
}

void NodeAccounting::release(const std::string& uid) {
  auto it = held_.find(uid);
  if (it == held_.end()) return;
  used_.subtract(it->second.requests);
  held_.erase(it);
}

std::vector<std::string> NodeAccounting::expire(int64_t now_ms) {
  std::vector<std::string> gone;
  for (auto it = held_.begin(); it != held_.end();) {
    if (it->second.expires_ms && *it->second.expires_ms <= now_ms) {
      gone.push_back(it->first);
      used_.subtract(it->second.requests);
      it = held_.erase(it);
    } else {
      ++it;
    }
  }
  return gone;
}

std::optional<int64_t> NodeAccounting::next_expiry_ms() const {
  std::optional<int64_t> next;
  for (const auto& [uid, h] : held_)
    if (h.expires_ms && (!next || *h.expires_ms < *next)) next = h.expires_ms;
  return next;
}

}  // namespace caldera
