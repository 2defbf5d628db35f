// The cluster config file: the cluster's name, its coordinator, auth token and every node.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "actors/history/core/retention.hpp"
#include "actors/scheduler/core/scoring.hpp"
#include "actors/scheduler/framework/scheduler_conf.hpp"
#include "messages/model/diagnostic.hpp"
#include "messages/model/resources.hpp"
#include "messages/model/result.hpp"
#include "messages/model/taint.hpp"

namespace caldera {

struct NodeConfig {
  std::string name;
  std::string host = "127.0.0.1";
  uint16_t cluster_port = 7170;  // CAF middleman, node <-> coordinator
  uint16_t client_port = 7070;   // the Cap'n Proto gateway
  uint16_t metrics_port = 0;     // Prometheus /metrics over HTTP; 0: not served
  std::string data_dir;
  ResourceList resources;                     // capacity offered to pods
  std::map<std::string, std::string> labels;  // for nodeSelector and `get nodes`
  std::vector<Taint> taints;                  // keep off the pods that do not tolerate them
  // Client gateway limits. Unset: calderad's flags, else its defaults; a timeout of 0: never.
  std::optional<uint32_t> max_connections;
  // At most max_connections (the node's, else calderad's default).
  std::optional<uint32_t> max_connections_per_address;
  std::optional<std::chrono::milliseconds> idle_timeout;
  std::optional<std::chrono::milliseconds> frame_timeout;
  // Container log rotation, as the kubelet's containerLogMaxSize and containerLogMaxFiles:
  // <container>.log is rotated past this many bytes, and this many files are kept in all.
  int64_t container_log_max_size = 10 * 1024 * 1024;
  int32_t container_log_max_files = 5;
  // Hollow nodes (Kubernetes' kubemark): set, the process started for this entry hosts this many
  // simulated nodes, <name>-0 ... <name>-(count-1), each with the entry's resources and labels,
  // whose pods are all simulated. Unset: one node, <name>.
  std::optional<uint32_t> count;

  // The names of the nodes this entry stands for.
  std::vector<std::string> node_names() const;
};

// Hollow nodes per entry at most: a process hosts them all, with a heartbeat each.
inline constexpr uint32_t kMaxHollowNodes = 5000;

struct ClusterConfig {
  std::string name = "caldera";
  std::string coordinator;  // the name of the node that runs the coordinator actors
  std::string token;        // when set, every client request and node registration must carry it
  // Node <-> coordinator liveness: each side sends a heartbeat this often, and a node not heard
  // from for heartbeat_timeout is NotReady (as is a coordinator, for its nodes).
  std::chrono::milliseconds heartbeat_interval{500};
  std::chrono::milliseconds heartbeat_timeout{2000};
  // A worker stops its pods once it has not heard from the coordinator for this long (its lease
  // is over), and the coordinator replaces a lost worker's pods only after that (plus margins and
  // each pod's grace period for that stop), so that no pod runs twice at once. Default: the
  // larger of 5 s and heartbeatTimeout; never less than heartbeatTimeout.
  std::chrono::milliseconds lease_timeout{5000};
  // How the scheduler ranks the nodes a pod fits: least-allocated spreads pods, binpack fills
  // nodes up and keeps others empty for large gangs.
  sched::Scoring scoring = sched::Scoring::LeastAllocated;
  // cluster.scheduler: Volcano's scheduler conf, written in place or in a file of its own.
  // Without one, the default; `scoring: binpack` puts binpack where the default has nodeorder.
  sched::SchedulerConf scheduler = sched::default_scheduler_conf();
  // cluster.history: how many settled jobs the coordinator keeps, and for how long (their
  // records and logs); the oldest go first.
  RetentionPolicy history;
  std::vector<NodeConfig> nodes;

  const NodeConfig* find(const std::string& node) const;
};

// Reads and checks a cluster config; errors carry field paths ("nodes[1].resources.cpu"). A
// scheduler conf file named by a relative path is looked for in `base_dir`: the config file's
// directory for load_cluster_config; "" is the working directory.
Result<ClusterConfig> load_cluster_config(const std::string& path, Diagnostics& diags);
Result<ClusterConfig> parse_cluster_config(const std::string& text, Diagnostics& diags,
                                           const std::string& base_dir = "");

// Volcano's scheduler conf from a file of its own (the conf, or a ConfigMap holding it), at most
// sched::kMaxSchedulerConfBytes; problems go to diags under `path`, and a file that cannot be
// read is an error there that names it.
Result<sched::SchedulerConf> load_scheduler_conf(const std::string& file, const std::string& path,
                                                 Diagnostics& diags);

// containerLogMaxSize: a quantity of whole bytes, at least 1Ki ("10Mi"); else why not.
Result<int64_t> parse_container_log_max_size(const std::string& text);
// containerLogMaxFiles: 2..1000 (the current file and at least one rotated, as the kubelet
// requires); why not, or nullopt.
std::optional<std::string> check_container_log_max_files(int64_t files);

// A gateway timeout, from the config or a flag: a Go duration ("10s", "5m"; "0": never), not
// negative; nullopt when it is not one.
std::optional<std::chrono::milliseconds> parse_timeout(const std::string& text);

// Kubernetes' ephemeral-storage, where `resources` does not name it: the size of the file system
// pods write to, the data dir's.
inline constexpr const char* kEphemeralStorage = "ephemeral-storage";
void offer_ephemeral_storage(ResourceList& resources, const std::string& data_dir);

// The embedded single-node default: one node on 127.0.0.1:7070 using this machine's cores,
// memory and data dir's file system, with its data in `data_dir`.
ClusterConfig embedded_cluster_config(const std::string& data_dir, uint16_t client_port,
                                      uint16_t cluster_port);

}  // namespace caldera
