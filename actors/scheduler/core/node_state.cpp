#include "actors/scheduler/core/node_state.hpp"

namespace caldera::sched {

ResourceList NodeState::future_idle() const {
  ResourceList out = idle;
  out.add(releasing);
  out.subtract(pipelined);
  return out;
}

NodeState empty_node(std::string name, ResourceList allocatable, bool ready) {
  NodeState n;
  n.name = std::move(name);
  n.ready = ready;
  n.idle = allocatable;
  n.allocatable = std::move(allocatable);
  return n;
}

}  // namespace caldera::sched
