// The files a pod's caldera-shim shares with the ProcessRunner: the spec it reads, the records it
// writes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "messages/job_spec.hpp"
#include "messages/pod.hpp"

namespace caldera::pod_dir {

// Why the shim could not run these containers (bad name, NUL byte, ...), or nullopt.
std::optional<std::string> check_containers(const std::vector<Container>& containers);

// The bytes of POD_DIR/spec: NUL-terminated fields, "caldera-spec-1", the container count, then
// per container: name, working dir, argc, argv..., envc, "K=V"... (see node/shim/shim.c).
std::string encode_spec(const std::vector<Container>& containers);
// The container names of a spec, or nullopt when it is not one.
std::optional<std::vector<std::string>> spec_names(std::string_view spec);

// POD_DIR/status: exactly `count` lines "name Terminated exit signal reason started finished".
std::optional<std::vector<ContainerStatus>> parse_status(std::string_view text, size_t count);
// POD_DIR/started: lines "name started_ms".
std::vector<std::pair<std::string, int64_t>> parse_started(std::string_view text);
// POD_DIR/pids: one pid (= process group) per line; 0 for a container that was not forked.
std::vector<int32_t> parse_pids(std::string_view text);

// Whole small files; nullopt when unreadable.
std::optional<std::string> read_file(const std::string& path);
bool write_file(const std::string& path, std::string_view data);

// Field 22 of /proc/<pid>/stat: the start time in clock ticks since boot, which tells a pid's
// owner apart from a later process that reused the number.
std::optional<uint64_t> proc_start_ticks(int32_t pid);

}  // namespace caldera::pod_dir
