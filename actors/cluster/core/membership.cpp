#include "actors/cluster/core/membership.hpp"

namespace caldera {

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
  m.reason.clear();
  m.last_heartbeat_ms = now_ms;
  return a;
}

Heartbeat Membership::on_heartbeat(const std::string& name, uint64_t incarnation, int64_t now_ms) {
  auto it = members_.find(name);
  if (it == members_.end()) return Heartbeat::Reregister;
  Member& m = it->second;
  if (incarnation != m.incarnation) return Heartbeat::Stale;
  if (!m.ready) return Heartbeat::Reregister;
  m.last_heartbeat_ms = now_ms;
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

std::optional<int64_t> Membership::next_expiry_ms() const {
  std::optional<int64_t> next;
  for (const auto& [name, m] : members_) {
    if (!m.ready || m.local) continue;
    auto due = m.last_heartbeat_ms + options_.heartbeat_timeout_ms;
    if (!next || due < *next) next = due;
  }
  return next;
}

const Member* Membership::find(const std::string& name) const {
  auto it = members_.find(name);
  return it == members_.end() ? nullptr : &it->second;
}

}  // namespace caldera
