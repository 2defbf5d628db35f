#include "actors/node/pod_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <set>

namespace caldera::pod_dir {
namespace {

constexpr std::string_view kSpecMagic = "caldera-spec-1";
constexpr size_t kMaxName = 200;  // the shim's limit: NAME.log must be a valid file name
constexpr size_t kMaxFile = 16 << 20;
// The shim's limits (MAX_CONTAINERS, the argc/envc bound and MAX_SPEC_BYTES in shim.c).
constexpr size_t kMaxContainers = 4096;
constexpr size_t kMaxListEntries = size_t{1} << 20;
constexpr size_t kMaxSpecBytes = size_t{64} << 20;

bool has_nul(std::string_view s) {
  return s.find('\0') != std::string_view::npos;
}

void put(std::string& out, std::string_view field) {
  out.append(field);
  out.push_back('\0');
}

template <class T>
std::optional<T> to_int(std::string_view s) {
  T v{};
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// Splits on single spaces; a line of the shim's files never holds empty fields.
std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= line.size()) {
    size_t sp = line.find(' ', start);
    if (sp == std::string_view::npos) sp = line.size();
    out.push_back(line.substr(start, sp - start));
    start = sp + 1;
  }
  return out;
}

}  // namespace

std::optional<std::string> check_containers(const std::vector<Container>& containers) {
  // The shim's own limits (node/shim/shim.c): what it would refuse fails here, as the pod's
  // failure, not later as a failed creation made again and again.
  if (containers.size() > kMaxContainers)
    return "more than " + std::to_string(kMaxContainers) + " containers";
  size_t spec_bytes = 0;
  std::set<std::string_view> seen;
  for (const auto& c : containers) {
    if (c.command.size() + c.args.size() > kMaxListEntries || c.env.size() > kMaxListEntries)
      return "container '" + c.name + "': more than " + std::to_string(kMaxListEntries) +
             " arguments or env entries";
    spec_bytes += c.name.size() + c.working_dir.size() + 64;
    for (const auto& a : c.command) spec_bytes += a.size() + 1;
    for (const auto& a : c.args) spec_bytes += a.size() + 1;
    for (const auto& e : c.env) spec_bytes += e.name.size() + e.value.size() + 2;
    const std::string& n = c.name;
    bool bad = n.empty() || n.size() > kMaxName || n == "." || n == "..";
    for (unsigned char ch : n) bad |= ch == '/' || ch <= ' ' || ch == 0x7f;
    if (bad) return "invalid container name '" + n + "'";
    if (!seen.insert(n).second) return "duplicate container name '" + n + "'";
    bool nul = has_nul(c.working_dir);
    for (const auto& a : c.command) nul |= has_nul(a);
    for (const auto& a : c.args) nul |= has_nul(a);
    for (const auto& e : c.env) {
      if (e.name.empty() || e.name.find('=') != std::string::npos)
        return "container '" + n + "': invalid env name '" + e.name + "'";
      nul |= has_nul(e.name) || has_nul(e.value);
    }
    if (nul) return "container '" + n + "': a NUL byte in its command, env or working dir";
  }
  if (spec_bytes > kMaxSpecBytes)
    return "the containers' commands and env take more than " + std::to_string(kMaxSpecBytes) +
           " bytes";
  return std::nullopt;
}

std::string encode_spec(const std::vector<Container>& containers) {
  std::string out;
  out.reserve(256);
  put(out, kSpecMagic);
  put(out, std::to_string(containers.size()));
  for (const auto& c : containers) {
    put(out, c.name);
    put(out, c.working_dir);
    put(out, std::to_string(c.command.size() + c.args.size()));
    for (const auto& a : c.command) put(out, a);
    for (const auto& a : c.args) put(out, a);
    put(out, std::to_string(c.env.size()));
    for (const auto& e : c.env) {
      out.append(e.name);
      out.push_back('=');
      put(out, e.value);
    }
  }
  return out;
}

ShimState parse_state(std::string_view text, size_t count) {
  ShimState st;
  std::vector<ContainerStatus> ended;
  bool whole = true;  // every line so far made sense: a garbled one ends the reading
  while (whole) {
    size_t nl = text.find('\n');
    if (nl == std::string_view::npos) break;  // a line still being written
    auto w = words(text.substr(0, nl));
    text.remove_prefix(nl + 1);
    if (w[0] == "shim" && w.size() == 3) {
      auto pid = to_int<int32_t>(w[1]);
      auto ticks = to_int<uint64_t>(w[2]);
      whole = pid && ticks;
      if (whole) {
        st.shim_pid = *pid;
        st.shim_start_ticks = *ticks;
      }
    } else if (w[0] == "start" && w.size() == 4 && !st.running) {
      auto pid = to_int<int32_t>(w[2]);
      auto ms = to_int<int64_t>(w[3]);
      whole = pid && ms;
      if (whole) st.started.push_back(StartedContainer{std::string(w[1]), *pid, *ms});
    } else if (w[0] == "running" && w.size() == 1) {
      whole = st.started.size() == count;
      st.running = whole;
    } else if (w[0] == "end" && w.size() == 7 && st.running) {
      auto code = to_int<int32_t>(w[2]);
      auto sig = to_int<int32_t>(w[3]);
      auto started = to_int<int64_t>(w[5]);
      auto finished = to_int<int64_t>(w[6]);
      whole = code && sig && started && finished && !w[1].empty() && !w[4].empty();
      if (whole)
        ended.push_back(ContainerStatus{std::string(w[1]), ContainerState::Terminated, *code, *sig,
                                        std::string(w[4]), *started, *finished});
    } else if (w[0] == "done" && w.size() == 1 && ended.size() == count) {
      st.ended = std::move(ended);
      break;
    } else {
      whole = false;
    }
  }
  return st;
}

std::optional<std::string> read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || out.size() + static_cast<size_t>(n) > kMaxFile) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

bool write_file(const std::string& path, std::string_view data, mode_t mode) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return false;
  bool ok = true;
  while (ok && !data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) data.remove_prefix(static_cast<size_t>(n));
  }
  ok &= ::close(fd) == 0;
  return ok;
}

namespace {
// A shim's first line is "shim PID TICKS"; a claim the node made says so instead.
constexpr std::string_view kNodeClaim = "node\n";
}  // namespace

Claim claim_for_node(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return Claim::Failed;
  // Written aside, then linked into place (which fails when the file exists): the claim appears
  // whole, so an empty state is always a shim's that has not written its line yet.
  const auto path = dir + "/state";
  const auto aside = dir + "/state.node";
  if (!write_file(aside, kNodeClaim)) {
    ::unlink(aside.c_str());
    return Claim::Failed;
  }
  const bool linked = ::link(aside.c_str(), path.c_str()) == 0;
  const int error = errno;
  ::unlink(aside.c_str());
  if (linked) return Claim::Made;
  if (error != EEXIST) return Claim::Failed;
  auto text = read_file(path);  // the node's own claim, made before a second restart
  return text && text->starts_with(kNodeClaim) ? Claim::Made : Claim::Taken;
}

std::optional<uint64_t> proc_start_ticks(int32_t pid) {
  if (pid <= 0) return std::nullopt;
  auto stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return std::nullopt;
  // The command name (field 2) may hold spaces and parentheses: count from its closing one.
  size_t close = stat->rfind(')');
  if (close == std::string::npos || close + 2 > stat->size()) return std::nullopt;
  auto w = words(std::string_view(*stat).substr(close + 2));
  if (w.size() < 20) return std::nullopt;
  return to_int<uint64_t>(w[19]);  // fields 3.. follow the name: field 22 is the 20th
}

}  // namespace caldera::pod_dir
