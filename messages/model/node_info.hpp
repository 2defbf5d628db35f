// What a node offers the cluster: its name, address, readiness and resources.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "messages/model/resources.hpp"

namespace caldera {

// The label a node gives itself: "true" when its pods see their svc files at /etc/volcano.
inline constexpr const char* kPrivateEtcLabel = "caldera.io/private-etc";

struct NodeInfo {
  std::string name;
  std::string address;  // host:cluster-port
  bool ready = false;
  ResourceList capacity;
  ResourceList allocatable;  // capacity minus what placed pods hold
  int32_t pods = 0;
  bool coordinator = false;
  ResourceList allocated;    // what placed pods hold
  std::string reason;        // why it is NotReady
  uint64_t incarnation = 0;  // changes on every start of the node's process
  int64_t joined_ms = 0;     // when this incarnation registered
  int64_t last_heartbeat_ms = 0;
  std::map<std::string, std::string> labels;
  // What the node itself says it has, when that is not what the cluster config says (the config's
  // figures are `capacity`, and the ones the scheduler uses); empty when they agree.
  ResourceList presented;
  bool operator==(const NodeInfo&) const = default;
};

}  // namespace caldera
