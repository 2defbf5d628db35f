#include "actors/scheduler/core/queue_share.hpp"

#include <algorithm>
#include <set>

#include "actors/scheduler/core/statement.hpp"

namespace caldera::sched {

namespace {

// A pod slot is a node's limit, not a share of the cluster: Volcano's proportion deals cpu,
// memory and scalar resources only.
constexpr std::string_view kPodSlots = "pods";

// Each resource of `a` no more than in `b` (names absent from `b` count as 0).
ResourceList min_each(const ResourceList& a, const ResourceList& b) {
  ResourceList out;
  for (const auto& [name, amount] : a.values) out.values[name] = std::min(amount, b.get(name));
  return out;
}

// Each resource of `a` no more than its cap, where `cap` names one (others are not capped).
ResourceList cap_each(ResourceList a, const std::optional<ResourceList>& cap) {
  if (!cap) return a;
  for (auto& [name, amount] : a.values) {
    auto c = cap->values.find(name);
    if (c != cap->values.end()) amount = std::min(amount, c->second);
  }
  return a;
}

}  // namespace

void queue_shares(Snapshot& s) {
  if (s.queues.empty()) return;
  ResourceList total;
  for (const auto& [name, node] : s.nodes)
    if (node.ready) total.add(node.allocatable);
  for (auto& [name, q] : s.queues) q.allocated = q.request = q.deserved = {};
  for (const auto& job : s.jobs) {
    auto q = s.queues.find(job.queue);
    if (q == s.queues.end()) continue;
    for (const auto& t : job.tasks) {
      if (allocated_status(t.status)) q->second.allocated.add(t.requests);
      if (allocated_status(t.status) || t.status == TaskStatus::Pending ||
          t.status == TaskStatus::Pipelined)
        q->second.request.add(t.requests);
    }
  }
  deal_shares(s.queues, total);
}

void deal_shares(std::map<std::string, QueueInfo>& queues, const ResourceList& total) {
  for (auto& [name, q] : queues) q.deserved = {};
  // A queue is met once it deserves all it asks for, or all its capability lets it hold.
  std::map<std::string, ResourceList> limit;
  for (const auto& [name, q] : queues) {
    limit[name] = cap_each(q.request, q.capability);
    limit[name].values.erase(std::string(kPodSlots));
  }
  std::set<std::string> met;
  ResourceList remaining = total;
  // Each round deals out what is left by weight among the queues still short; it ends when
  // every queue is met or a round changes nothing (with several resources the shares approach
  // their limits round after round, and whole milli-units make the steps end).
  constexpr int kMaxRounds = 256;
  auto weight = [](const QueueInfo& q) { return static_cast<int64_t>(std::max(1, q.weight)); };
  for (int round = 0; round < kMaxRounds; ++round) {
    int64_t weights = 0;
    for (const auto& [name, q] : queues)
      if (!met.count(name)) weights += weight(q);
    if (weights == 0) break;
    bool changed = false;
    for (auto& [name, q] : queues) {
      if (met.count(name)) continue;
      ResourceList share = q.deserved;
      for (const auto& [res, amount] : remaining.values) {
        if (amount <= 0 || res == kPodSlots) continue;
        // In 128 bits: a large cluster's memory in milli-units times a weight overflows 64.
        // Rounded up, so that the last milli-units are dealt out too (a queue is capped by its
        // limit anyway; the shares may pass the total by a milli-unit per queue).
        share.values[res] += static_cast<MilliValue>(
            (static_cast<__int128>(amount) * weight(q) + weights - 1) / weights);
      }
      share = min_each(share, limit[name]);
      changed = changed || share != q.deserved;
      q.deserved = std::move(share);
      if (q.deserved.fits(limit[name])) met.insert(name);
    }
    remaining = total;
    for (const auto& [name, q] : queues) remaining.subtract(q.deserved);
    if (!changed) break;
  }
}

bool overused(const QueueInfo& q) {
  bool deserves_some = false;
  for (const auto& [name, amount] : q.deserved.values) {
    if (amount <= 0 || name == kPodSlots) continue;
    deserves_some = true;
    if (q.allocated.get(name) < amount) return false;
  }
  // A queue that deserves nothing (it asks nothing) is not held back by its share.
  return deserves_some;
}

bool above_share(const QueueInfo& q) {
  for (const auto& [name, amount] : q.allocated.values)
    if (name != kPodSlots && amount > q.deserved.get(name)) return true;
  return false;
}

bool at_capability(const QueueInfo& q) {
  if (!q.capability) return false;
  for (const auto& [name, cap] : q.capability->values)
    if (q.allocated.get(name) >= cap) return true;
  return false;
}

bool within_capability(const QueueInfo& q, const ResourceList& held, const ResourceList& ask) {
  if (!q.capability) return true;
  for (const auto& [name, amount] : ask.values) {
    if (amount <= 0) continue;
    auto cap = q.capability->values.find(name);
    if (cap == q.capability->values.end()) continue;  // not capped
    if (held.get(name) + amount > cap->second) return false;
  }
  return true;
}

std::string share_text(ResourceList r) {
  r.values.erase(std::string(kPodSlots));
  return resource_text(r);
}

std::string share_message(const QueueInfo& q) {
  return "queue " + q.name + " holds its share (" + share_text(q.deserved) + ")";
}

}  // namespace caldera::sched
