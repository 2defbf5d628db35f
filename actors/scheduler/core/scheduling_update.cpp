#include "actors/scheduler/core/scheduling_update.hpp"

#include <utility>

namespace caldera {

Change<Queue> update_queue(const Queue& stored, QueueSpec applied) {
  Change<Queue> out{stored};
  if (applied.state.empty())
    applied.state = stored.spec.state.empty() ? kQueueOpen : stored.spec.state;
  if (applied == stored.spec) return out;
  out.next.spec = std::move(applied);
  out.next.generation = stored.generation + 1;
  out.changed = true;
  return out;
}

Change<PriorityClass> update_priority_class(const PriorityClass& stored,
                                            const PriorityClass& applied,
                                            const std::string& other_default) {
  Change<PriorityClass> out{stored};
  if (applied.value != stored.value)
    out.diags.error("value", "a PriorityClass's value cannot change (" +
                                 std::to_string(stored.value) + " -> " +
                                 std::to_string(applied.value) +
                                 "): create a class with another name, as Kubernetes asks");
  if (applied.preemption_policy != stored.preemption_policy)
    out.diags.error("preemptionPolicy", "a PriorityClass's preemptionPolicy cannot change (" +
                                            stored.preemption_policy + " -> " +
                                            applied.preemption_policy + ")");
  if (applied.global_default && !other_default.empty() && other_default != stored.name)
    out.diags.error("globalDefault", "PriorityClass \"" + other_default +
                                         "\" is already marked as the global default");
  if (!out.diags.ok()) return out;
  if (applied.global_default == stored.global_default && applied.description == stored.description)
    return out;
  out.next.global_default = applied.global_default;
  out.next.description = applied.description;
  out.changed = true;
  return out;
}

Change<Queue> operate_queue(const Queue& stored, const std::string& action) {
  QueueSpec spec = stored.spec;
  if (action == "open") {
    spec.state = kQueueOpen;
  } else if (action == "close") {
    spec.state = kQueueClosed;
  } else {
    Change<Queue> out{stored};
    out.diags.error("action", "unknown queue action \"" + action + "\": open or close");
    return out;
  }
  return update_queue(stored, std::move(spec));
}

}  // namespace caldera
