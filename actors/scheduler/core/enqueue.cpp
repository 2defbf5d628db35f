#include "actors/scheduler/core/enqueue.hpp"

#include <cmath>

#include <fmt/format.h>

#include "actors/scheduler/core/statement.hpp"

namespace caldera::sched {

ResourceList overcommit_budget(const Snapshot& s, double factor) {
  // Saturating, as ResourceList's own sums: a huge capacity is not an overflow.
  constexpr double kMax = 9.0e18;
  ResourceList budget;
  for (const auto& [name, node] : s.nodes) {
    if (!node.ready) continue;
    for (const auto& [res, amount] : node.allocatable.values) {
      const double scaled = static_cast<double>(amount) * factor;
      const MilliValue add = scaled >= kMax ? static_cast<MilliValue>(kMax) : std::llround(scaled);
      auto& sum = budget.values[res];
      if (__builtin_add_overflow(sum, add, &sum)) sum = static_cast<MilliValue>(kMax);
    }
    budget.subtract(node.allocatable);
    budget.add(node.idle);
  }
  return budget;
}

std::optional<std::string> budget_refusal(const ResourceList& budget, const ResourceList& minimum) {
  ResourceList asks;  // the resources it is short of
  for (const auto& [name, amount] : minimum.values)
    if (amount > budget.get(name)) asks.values[name] = amount;
  if (asks.values.empty()) return std::nullopt;
  // Not what is left: that changes with every pod, and each change would be a write of the job.
  return fmt::format("not enqueued: its minimum ({}) is more than the cluster has left to admit",
                     resource_text(asks));
}

std::optional<std::string> capability_refusal(const QueueInfo& q, const ResourceList& inqueue,
                                              const ResourceList& minimum) {
  ResourceList held = q.allocated;
  held.add(inqueue);
  if (within_capability(q, held, minimum)) return std::nullopt;
  return fmt::format("queue {} is at its capability ({})", q.name, resource_text(*q.capability));
}

std::optional<std::string> queue_refusal(const QueueInfo& q, const ResourceList& inqueue,
                                         const ResourceList& minimum) {
  if (auto why = capability_refusal(q, inqueue, minimum)) return why;
  return share_refusal(q, inqueue);
}

std::optional<std::string> share_refusal(const QueueInfo& q, const ResourceList& inqueue) {
  QueueInfo with = q;
  with.allocated.add(inqueue);
  if (!overused(with)) return std::nullopt;
  return share_message(q);
}

}  // namespace caldera::sched
