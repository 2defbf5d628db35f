// A node as a scheduling session sees it (Volcano's NodeInfo): what it offers, what is taken,
// and what is on its way out.
#pragma once

#include <map>
#include <string>

#include "messages/model/resources.hpp"
#include "messages/model/taint.hpp"

namespace caldera::sched {

struct NodeState {
  std::string name;
  bool ready = false;
  std::map<std::string, std::string> labels;  // from the cluster config, for nodeSelector
  ResourceList allocatable;                   // what pods may take in all
  ResourceList idle;                          // allocatable minus what pods hold
  ResourceList releasing;                     // held by pods being evicted, soon idle
  ResourceList pipelined;                     // promised to pipelined pods out of `releasing`
  std::vector<Taint> taints = {};  // the cluster config's: pods that do not tolerate them stay off

  // What a pipelined pod may count on: idle now, plus what evictions free, less what is promised.
  ResourceList future_idle() const;
  bool operator==(const NodeState&) const = default;
};

// A node of `allocatable` with nothing placed on it.
NodeState empty_node(std::string name, ResourceList allocatable, bool ready = true);

}  // namespace caldera::sched
