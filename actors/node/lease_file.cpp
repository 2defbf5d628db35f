#include "actors/node/lease_file.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

#include "actors/node/pod_dir.hpp"

namespace caldera::lease_file {
namespace {

// The kernel's id of this boot, read once; "" when unreadable.
const std::string& boot_id() {
  static const std::string id = [] {
    auto text = pod_dir::read_file("/proc/sys/kernel/random/boot_id");
    std::string s = text ? *text : "";
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  }();
  return id;
}

}  // namespace

int64_t monotonic_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

int64_t read(const std::string& path) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto text = pod_dir::read_file(path);
    if (!text) return 0;
    long long a = -1, b = -2;
    char boot[64] = {0};
    if (std::sscanf(text->c_str(), "%lld %lld %63s", &a, &b, boot) == 3 && a == b && a >= 0)
      return boot_id() == boot ? a : 0;
  }
  return 0;
}

std::string write(const std::string& path, int64_t deadline_ms) {
  char buf[128];
  int n = std::snprintf(buf, sizeof buf, "%020lld %020lld %-36.36s\n",
                        static_cast<long long>(deadline_ms), static_cast<long long>(deadline_ms),
                        boot_id().c_str());
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return "cannot open " + path + ": " + std::strerror(errno);
  ssize_t w;
  do w = ::pwrite(fd, buf, static_cast<size_t>(n), 0);
  while (w < 0 && errno == EINTR);
  std::string error;
  if (w != n) error = "cannot write " + path + ": " + std::strerror(w < 0 ? errno : EIO);
  ::close(fd);
  return error;
}

}  // namespace caldera::lease_file
