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
  // The node's lease (actors/node/core/lease.hpp); 0: it holds none.
  std::chrono::milliseconds lease_timeout{0};
};

// States: unconnected (waiting out a backoff) -> connecting -> registering -> running, and back
// to unconnected when the coordinator's process is gone, has answered no heartbeat for a whole
// lease (a paused coordinator is waited for: its late answers renew the lease), or refuses the
// node. Reconnects back off from 100 ms to 1 s, with jitter, so that every worker is back
// within about a second of the coordinator's return, not all at the same instant.
// The lease: every answer the coordinator gives to a registration or a heartbeat renews it, from
// when that was sent, and the node actor is told (lease_atom, deadline). So does a connection the
// coordinator's host refuses (no coordinator runs, so nobody replaces the node's pods, and one that
// starts waits a whole lease before it does): the pods run on through a coordinator's restart.
// A firewall that rejects (rather than drops) the cluster port would pass for that: drop it.
// Messages:
//   (register_atom, NodeRegistration bytes, node actor)  from the node at its start; the link
//                     registers it anew (fresh bytes, every pod) on every (re)connect
//   (report_atom, PodReport bytes)   to the coordinator while running; dropped otherwise, as
//                     the next registration carries every pod's status
//   (api_atom, Request bytes) -> Response bytes: the coordinator's answer, or `unavailable`
//                     while it cannot be reached
caf::actor spawn_coordinator_link(caf::actor_system& sys, CoordinatorLinkEnv env);

}  // namespace caldera
