// The membership actor: the coordinator's registry of nodes. It admits nodes, watches their
// heartbeats and connections, and routes what the coordinator's actors send to a node.
#pragma once

#include <map>
#include <memory>
#include <string>

#include <caf/actor.hpp>

#include "messages/model/resources.hpp"
#include "storage/store.hpp"

#include "actors/cluster/core/identity.hpp"
#include "actors/cluster/core/membership.hpp"
#include "actors/protocol/membership.hpp"
#include "actors/protocol/scheduler.hpp"

namespace caldera {

struct MembershipEnv {
  protocol::scheduler scheduler;  // told each node's capacity and readiness
  MembershipOptions options;
  // Each node's resources as the cluster config says: what the scheduler is told, whatever a
  // node presents (logged, and shown as `presented`). A node not in it is believed.
  std::map<std::string, ResourceList> resources;
  // The cluster's identity (actors/cluster/core/identity.hpp): what the store holds, the id a new
  // store takes, whether the coordinator's node is the only one, and --accept-empty-store.
  ClusterIdentity identity;
  std::string candidate_id;
  bool alone = false;
  bool accept_empty_store = false;
  bool restored = false;         // --restore-from: the store is a backup's, the next generation
  std::shared_ptr<Store> store;  // where a settled identity is written (Family::Meta)
};

// Messages (registrations and heartbeats come from other processes through the membership port,
// actors/cluster/membership_port; the rest only from this process):
//   (coordinator_atom, job directory, API router, report port)   first: whom admitted
//                                           registrations and node events go to, and whom links
//                                           send client requests and pod reports
//   (listen_atom)                           the cluster port is open: a config's node that has
//                                           not registered startup_wait_ms() later is lost
//   (register_atom, NodeRegistration bytes, node actor) -> (refusal, report port, router,
//                                           cluster id, generation): an empty refusal when
//                                           admitted. A node of another cluster is refused; one
//                                           that knows the cluster while this coordinator's
//                                           store is new halts it: every node is then admitted
//                                           for its heartbeats only (their leases hold, their
//                                           pods run on), and nothing else is decided
//   (heartbeat_atom, node, incarnation) -> bool: false when the node must register again
//   (launch_atom | kill_atom, node, bytes), (remove_atom, node, uid)   passed on to the node
//   (prepare_atom, node, PodReservations bytes) -> the node's answer (per gang "" or why not);
//                                           a node that is not Ready refuses all at once
//   (cancel_atom, node, PodReservation bytes)          passed on to the node
//   (ack_atom, node, uid, status seq)       a job holds this status: gathered, and passed on to
//                                           the node as (ack_atom, PodAcks bytes) per node
//   (log_atom, node, uid, container, offset, max_bytes) -> the node's answer
//   (nodes_atom) -> vector<NodeInfo>: every node it knows, with readiness, reason, incarnation,
//                                           heartbeat and labels
// It sends the scheduler and the job directory (capacity_atom, node, capacity, ready, host) on
// every change of a node's readiness, and the job directory (register_atom, bytes, node actor)
// for every admitted registration, (node_lost_atom, node, reason, false) when a node goes NotReady
// (with leases) and (node_lost_atom, node, reason, true) once its pods are surely dead: its lease
// is over (MembershipOptions::lease_ms).
protocol::membership spawn_membership(caf::actor_system& sys, MembershipEnv env);

}  // namespace caldera
