// A process's state letter and parent pid from the text of /proc/<pid>/stat, for the tests that
// look for the processes a node started.
#pragma once

#include <sys/types.h>

#include <optional>
#include <sstream>
#include <string>

namespace caldera::testing {

struct ProcStat {
  std::string state;  // "R", "S", "Z", ...
  pid_t ppid = 0;
};

// "pid (comm) state ppid ...": the command may hold spaces and parentheses, so the fields are
// read after its last ')'. nullopt for text that is not such a line (a process gone meanwhile).
inline std::optional<ProcStat> parse_proc_stat(const std::string& stat) {
  auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(close + 1));
  ProcStat out;
  if (!(fields >> out.state >> out.ppid)) return std::nullopt;
  return out;
}

}  // namespace caldera::testing
