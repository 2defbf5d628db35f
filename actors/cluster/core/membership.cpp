#include "actors/cluster/core/membership.hpp"

#include <algorithm>

namespace caldera {

int64_t lease_over_after_ms(const MembershipOptions& o) {
  if (o.lease_ms <= 0) return 0;
  return o.lease_ms + (o.lease_ms * kLeaseRateMarginPercent + 99) / 100 + kLeaseNoticeMarginMs;
}

Admission Membership::on_register(const Registration& r, int64_t now_ms) {
  Admission a;
  if (!options_.token.empty() && r.token != options_.token) {
    a.refusal = r.token.empty() ? "the cluster needs a token and the node sent none"
                                : "the node's token is not the cluster's";
    return a;
  }
  if (!options_.allowed.empty() && !options_.allowed.count(r.name)) {
    a.refusal = "node '" + r.name + "' is not in the cluster config";
    return a;
  }
  auto it = members_.find(r.name);
  if (it != members_.end() && r.incarnation != it->second.incarnation && !r.local &&
      it->second.ready && !it->second.local && r.address != it->second.address) {
    // Two live processes claim one name: the second is a misconfiguration, not a restart.
    a.refusal = "node '" + r.name + "' is already registered from " + it->second.address;
    return a;
  }
  a.accepted = true;
  if (it == members_.end()) {
    it = members_.emplace(r.name, Member{}).first;
    it->second.joined_ms = now_ms;
  } else {
    a.restarted = it->second.incarnation != r.incarnation;
    a.was_not_ready = !it->second.ready;
    if (a.restarted) it->second.joined_ms = now_ms;
  }
  Member& m = it->second;
  m.name = r.name;
  m.address = r.address;
  m.incarnation = r.incarnation;
  m.local = r.local;
  m.ready = true;
  m.lost = false;
  m.reason.clear();
  m.last_heartbeat_ms = now_ms;
  m.last_renewal_ms = now_ms;
  return a;
}

Heartbeat Membership::on_heartbeat(const std::string& name, uint64_t incarnation, int64_t now_ms) {
  auto it = members_.find(name);
  if (it == members_.end()) return Heartbeat::Reregister;
  Member& m = it->second;
  if (incarnation != m.incarnation) return Heartbeat::Stale;
  if (!m.ready) return Heartbeat::Reregister;
  m.last_heartbeat_ms = now_ms;
  m.last_renewal_ms = now_ms;
  return Heartbeat::Ok;
}

bool Membership::on_disconnect(const std::string& name, uint64_t incarnation,
                               const std::string& why) {
  auto it = members_.find(name);
  if (it == members_.end() || it->second.incarnation != incarnation || !it->second.ready)
    return false;
  it->second.ready = false;
  it->second.reason = why;
  return true;
}

std::vector<std::string> Membership::expire(int64_t now_ms) {
  std::vector<std::string> lost;
  for (auto& [name, m] : members_) {
    if (!m.ready || m.local) continue;
    if (now_ms - m.last_heartbeat_ms >= options_.heartbeat_timeout_ms) {
      m.ready = false;
      m.reason = "no heartbeat for " + std::to_string(now_ms - m.last_heartbeat_ms) + "ms";
      lost.push_back(name);
    }
  }
  return lost;
}

std::vector<std::string> Membership::lose(int64_t now_ms) {
  std::vector<std::string> lost;
  for (auto& [name, m] : members_) {
    if (m.ready || m.lost || m.local) continue;
    if (now_ms < lease_over_ms(m)) continue;
    m.lost = true;
    lost.push_back(name);
  }
  return lost;
}

void Membership::on_stall(int64_t now_ms) {
  for (auto& [name, m] : members_)
    if (m.ready && !m.local) m.last_heartbeat_ms = std::max(m.last_heartbeat_ms, now_ms);
}

std::optional<int64_t> Membership::next_expiry_ms() const {
  std::optional<int64_t> next;
  for (const auto& [name, m] : members_) {
    if (m.local || m.lost) continue;
    auto due = m.ready ? m.last_heartbeat_ms + options_.heartbeat_timeout_ms : lease_over_ms(m);
    if (!next || due < *next) next = due;
  }
  return next;
}

int64_t Membership::lease_over_ms(const Member& m) const {
  return m.last_renewal_ms + lease_over_after_ms(options_);
}

int64_t startup_wait_ms(const MembershipOptions& o) {
  return std::max(2 * o.heartbeat_timeout_ms, lease_over_after_ms(o));
}

const Member* Membership::find(const std::string& name) const {
  auto it = members_.find(name);
  return it == members_.end() ? nullptr : &it->second;
}

}  // namespace caldera
