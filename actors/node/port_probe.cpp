#include "actors/node/port_probe.hpp"

#include <cerrno>

#include <unistd.h>

#include "actors/net/tcp_connect.hpp"

namespace caldera {

bool connection_refused(const std::string& host, uint16_t port, std::chrono::milliseconds wait) {
  int error = 0;
  int fd = connect_within(host, port, std::chrono::steady_clock::now() + wait, &error);
  if (fd >= 0) ::close(fd);
  return fd < 0 && error == ECONNREFUSED;
}

}  // namespace caldera
