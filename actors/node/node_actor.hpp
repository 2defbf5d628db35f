// The node actor: one per node. Runs the pods bound to its node (processes, or timers when
// simulated), keeps them in its own column family, and reports their status to the coordinator.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include <caf/actor.hpp>

#include "actors/metrics/metrics.hpp"
#include "actors/protocol/node.hpp"
#include "messages/model/resources.hpp"
#include "storage/store.hpp"

namespace caldera {

struct NodeActorEnv {
  std::string name;
  std::string address;  // host:cluster-port, for `get nodes`
  ResourceList capacity;
  std::map<std::string, std::string> labels;
  std::string data_dir;   // pods live in <data_dir>/pods/<uid>
  std::string shim_path;  // the caldera-shim executable
  // Whether pods see their svc files at /etc/volcano (the shim's views; probe_views said this
  // machine allows them). Else they find them in $VC_POD_DIR/volcano only.
  bool etc_volcano = false;
  // Where it keeps its lease (actors/node/lease_file.hpp), which its link renews while the
  // coordinator answers: a worker's pods run only while it holds one. Empty: no lease (the
  // coordinator's own node, where nobody could replace its pods; a hollow node).
  std::string lease_file;
  std::shared_ptr<Store> store;
  caf::actor coordinator;  // takes pod reports
  caf::actor membership;   // takes its registration; unset: the coordinator does
  std::string token;       // the cluster's, sent with the registration
  bool is_coordinator = false;
  // Rotation of each container's log (see node/shim/shim.c).
  int64_t container_log_max_size = 10 * 1024 * 1024;
  int32_t container_log_max_files = 5;
  // The soft RLIMIT_NOFILE containers start with (0: the node's own): calderad's before it
  // raised its own.
  uint64_t container_open_files_limit = 0;
  // A pod report its job has not acknowledged this long after it was sent is sent again.
  std::chrono::milliseconds report_resend_after{2000};
  std::shared_ptr<Metrics> metrics;  // pods started and failed; unset: not counted
  // A hollow node (cluster config `count`): one of many in one process, sharing its store. Every
  // pod is simulated (its caldera.io/sim-duration-ms, else it succeeds at once), no process runs,
  // and its records are keyed "<name>/<uid>" so that each node re-adopts only its own.
  bool hollow = false;
  // Its pod records (key, value), read by whoever hosts it: a host of many hollow nodes scans the
  // store once for all of them. Unset: the node scans the store itself.
  std::shared_ptr<const std::vector<std::pair<std::string, std::string>>> records = {};
};

// Its messages are protocol::node (actors/protocol/node.hpp). Beyond what that says:
//   remove: the logs go only once the removal of the pod's record is durable.
//   log: from <container>.log, the newest file only, as kubectl logs shows (rotated ones,
//        .log.1 ..., stay on the node's disk). An offset past the file's end means it was rotated
//        since: the chunk is the new file's from its start (next offset < offset).
// It sends (report_atom, PodReport bytes) to the coordinator once a pod's status is durable, and
// again every report_resend_after until the pod's job acknowledges it. On start it re-adopts the
// pods of an earlier run and sends (register_atom, NodeRegistration bytes, itself) to the
// membership.
protocol::node spawn_node_actor(caf::actor_system& sys, NodeActorEnv env);

}  // namespace caldera
