// What a pod's caldera-shim shares with the ProcessRunner: the spec it reads, the record it writes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "messages/model/job_spec.hpp"
#include "messages/model/pod.hpp"

namespace caldera::pod_dir {

// Why the shim could not run these containers (bad name, NUL byte, ...), or nullopt.
std::optional<std::string> check_containers(const std::vector<Container>& containers);

// The bytes of the spec the shim reads on stdin: NUL-terminated fields, "caldera-spec-1", the
// container count, then per container: name, working dir, argc, argv..., envc, "K=V"... (see
// node/shim/shim.c).
std::string encode_spec(const std::vector<Container>& containers);

// A container as its shim started it.
struct StartedContainer {
  std::string name;
  int32_t pgid = 0;  // its process group; 0: it was not started
  int64_t started_ms = 0;
};

// What a shim has recorded of its pod so far, in POD_DIR/state and on its stdout.
struct ShimState {
  int32_t shim_pid = 0;  // 0: the shim has not claimed the pod
  uint64_t shim_start_ticks = 0;
  std::vector<StartedContainer> started;
  bool running = false;  // every container was started (or failed to be)
  std::optional<std::vector<ContainerStatus>> ended;  // every container's end, once complete
};
// Reads the lines of a state record ("shim", "start", "running", "end", "done"), whole lines
// only, so that a record still being written (or cut) reads as far as it is complete. `count` is
// the number of containers the pod has.
ShimState parse_state(std::string_view text, size_t count);

// A pod that must never run (evicted before its launch was recorded) is claimed by the node as
// a shim claims it, by making POD_DIR/state exclusively (whole, with the line "node"): a
// supervisor that an earlier run spawned then finds the claim and runs nothing, unless the pod
// dir is removed first. Made also when the node claimed it before (a second restart); Taken: a
// shim claimed it first.
enum class Claim { Made, Taken, Failed };
Claim claim_for_node(const std::string& dir);

// Whole small files; nullopt when unreadable. A file made by write_file gets `mode`.
std::optional<std::string> read_file(const std::string& path);
bool write_file(const std::string& path, std::string_view data, mode_t mode = 0644);

// Field 22 of /proc/<pid>/stat: the start time in clock ticks since boot, which tells a pid's
// owner apart from a later process that reused the number.
std::optional<uint64_t> proc_start_ticks(int32_t pid);

}  // namespace caldera::pod_dir
