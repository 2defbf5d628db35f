#include "actors/node/core/node_accounting.hpp"

#include <fmt/format.h>

namespace caldera {

ResourceList NodeAccounting::used() const {
  ResourceList out;
  for (const auto& [uid, h] : held_) out.add(h.requests);
  return out;
}

bool NodeAccounting::reserved(const std::string& uid) const {
  auto it = held_.find(uid);
  return it != held_.end() && it->second.expires_ms.has_value();
}

std::optional<std::string> NodeAccounting::fits(const ResourceList& more) const {
  auto total = used();
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
    auto [it, fresh] = held_.try_emplace(a.uid, Held{a.requests, expires_ms});
    if (!fresh && it->second.expires_ms) it->second.expires_ms = expires_ms;
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
  held_.emplace(ask.uid, Held{ask.requests, std::nullopt});
  return std::nullopt;
}

void NodeAccounting::adopt(const Ask& ask) {
  held_[ask.uid] = Held{ask.requests, std::nullopt};
}

void NodeAccounting::release(const std::string& uid) {
  held_.erase(uid);
}

std::vector<std::string> NodeAccounting::expire(int64_t now_ms) {
  std::vector<std::string> gone;
  for (auto it = held_.begin(); it != held_.end();) {
    if (it->second.expires_ms && *it->second.expires_ms <= now_ms) {
      gone.push_back(it->first);
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
