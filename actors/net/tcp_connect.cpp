#include "actors/net/tcp_connect.hpp"

#include <cerrno>

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace caldera {

bool wait_for(int fd, short events, std::chrono::steady_clock::time_point deadline) {
  pollfd p{fd, events, 0};
  int ready;
  do {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    ready = ::poll(&p, 1, left.count() > 0 ? static_cast<int>(left.count()) : 0);
  } while (ready < 0 && errno == EINTR);
  return ready > 0;
}

int connect_within(const std::string& host, int32_t port,
                   std::chrono::steady_clock::time_point deadline, int* error) {
  int why = EINVAL;
  int fd = -1;
  if (port >= 1 && port <= 65535) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* found = nullptr;
    why = EHOSTUNREACH;
    if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0)
      found = nullptr;
    // Each address in turn (a name may have an IPv6 and an IPv4 one), within the one deadline.
    for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
      fd = ::socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      why = fd < 0 ? errno : 0;
      if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
        why = errno;
        if (why == EINPROGRESS) {
          why = ETIMEDOUT;
          socklen_t len = sizeof why;
          if (wait_for(fd, POLLOUT, deadline) &&
              ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &why, &len) != 0)
            why = errno;
        }
      }
      if (why != 0 && fd >= 0) {
        ::close(fd);
        fd = -1;
      }
    }
    if (found) ::freeaddrinfo(found);
  }
  if (error) *error = why;
  return fd;
}

}  // namespace caldera
