// What a node offers the cluster: its name, address, readiness and resources.
#pragma once

#include <cstdint>
#include <string>

#include "messages/resources.hpp"

namespace caldera {

struct NodeInfo {
  std::string name;
  std::string address;  // host:cluster-port
  bool ready = false;
  ResourceList capacity;
  ResourceList allocatable;  // capacity minus what placed pods hold
  int32_t pods = 0;
  bool coordinator = false;
  bool operator==(const NodeInfo&) const = default;
};

}  // namespace caldera
