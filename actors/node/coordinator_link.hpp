// A worker node's link to the coordinator: connects over the cluster port, registers the node,
// keeps heartbeats going both ways, and reconnects with backoff when the coordinator is lost.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <caf/fwd.hpp>

namespace caldera {

struct CoordinatorLinkEnv {
  std::string node_name;
  std::string host;  // the coordinator's cluster endpoint
  uint16_t port = 0;
  std::chrono::milliseconds heartbeat_interval{500};
  std::chrono::milliseconds heartbeat_timeout{2000};
};

// States: unconnected (waiting out a backoff) -> connecting -> registering -> running, and back
// to unconnected when the coordinator's process is gone, stops answering heartbeats, or refuses
// the node.
// Messages:
//   (register_atom, NodeRegistration bytes, node actor)  from the node at its start; the link
//                     registers it anew (fresh bytes, every pod) on every (re)connect
//   (report_atom, PodReport bytes)   to the coordinator while running; dropped otherwise, as
//                     the next registration carries every pod's status
//   (api_atom, Request bytes) -> Response bytes: the coordinator's answer, or `unavailable`
//                     while it cannot be reached
caf::actor spawn_coordinator_link(caf::actor_system& sys, CoordinatorLinkEnv env);

}  // namespace caldera
