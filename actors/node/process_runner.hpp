// Runs pods as real processes under a per-pod supervisor (caldera-shim), on its own libuv thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "messages/model/job_spec.hpp"
#include "messages/model/pod.hpp"

namespace caldera {

struct PodProcessSpec {
  std::string uid;
  std::string pod_dir;                 // created by the runner; logs: <pod_dir>/<container>.log*
  std::vector<Container> containers;   // command+args is argv; env is the complete extra env
  int64_t grace_ms = 10000;            // SIGTERM -> SIGKILL
  int64_t lease_stop_grace_ms = 1000;  // the same when the shim stops it at the lease's end
  std::map<std::string, std::string> files;  // written into pod_dir first (relative paths)
  // The shim rotates <container>.log past this size into .log.1, .log.2, ..., keeping this many
  // files in all (the kubelet's containerLogMaxSize and containerLogMaxFiles, same defaults).
  int64_t log_max_bytes = 10 * 1024 * 1024;
  int32_t log_max_files = 5;
  // The soft RLIMIT_NOFILE the containers start with; 0: the node's own. calderad raises its own
  // for client connections, and many programs walk or size tables by it.
  uint64_t open_files_limit = 0;
  // The node's lease (actors/node/lease_file.hpp): the shim stops the pod once it is over. Empty:
  // the pod runs on whatever becomes of the node's link to the coordinator.
  std::string lease_file;
  // Directories of pod_dir shown to the containers at other paths, e.g. ("/etc/volcano",
  // "volcano"): the shim's VIEWS (a private mount namespace; the host's mounts stay as they are).
  std::vector<std::pair<std::string, std::string>> views;
};

// A running pod's plugin file `rel` (below pod_dir) replaced whole: written aside, then renamed
// into place, so that a container reading it sees the old or the new content. Why not, or nullopt.
std::optional<std::string> replace_pod_file(const std::string& pod_dir, const std::string& rel,
                                            const std::string& content);

// Whether this machine lets a pod's supervisor show a view at /etc/volcano: "" when it does, else
// why not. Runs the shim once (`--probe-views`) in `scratch_dir`, which it leaves as it found it.
std::string probe_views(const std::string& shim_path, const std::string& scratch_dir);

// What the runner knows about one pod's processes: one status per container, in spec order.
struct PodProcessStatus {
  std::string uid;
  std::vector<ContainerStatus> containers;
  int32_t shim_pid = 0;
  uint64_t shim_start_ticks = 0;  // from /proc/<pid>/stat, to recognise the pid after a restart
  std::string create_error;       // non-empty: the pod could not be set up, nothing of it ran
};

class ProcessRunner {
 public:
  // Called on the runner's thread whenever a pod's statuses change (started, each container
  // ended). Keep it quick: hand the value to an actor.
  using OnChange = std::function<void(PodProcessStatus)>;

  // shim_path: the caldera-shim executable. Starts the loop thread.
  static std::unique_ptr<ProcessRunner> create(std::string shim_path, OnChange on_change);
  virtual ~ProcessRunner() = default;  // stops the loop; supervised pods keep running

  // All thread-safe. launch() of a uid already known is ignored.
  virtual void launch(PodProcessSpec spec) = 0;
  // SIGTERM to the pod's processes, SIGKILL after its grace period; reported as they end.
  virtual void kill(const std::string& uid, int64_t grace_ms) = 0;
  // After a node restart: watch a supervisor started by an earlier calderad. If it is gone, the
  // statuses it recorded in pod_dir are reported (or Failed with reason "SupervisorLost").
  virtual void adopt(const std::string& uid, const std::string& pod_dir, size_t container_count,
                     int32_t shim_pid, uint64_t shim_start_ticks) = 0;
};

}  // namespace caldera
