#include "actors/node/port_probe.hpp"

#include <cerrno>

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace caldera {

bool connection_refused(const std::string& host, uint16_t port, std::chrono::milliseconds wait) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 || !found)
    return false;
  bool refused = false;
  int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd >= 0) {
    int rc = ::connect(fd, found->ai_addr, found->ai_addrlen);
    if (rc != 0 && errno == ECONNREFUSED) {
      refused = true;
    } else if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int ready;
      do ready = ::poll(&p, 1, static_cast<int>(wait.count()));
      while (ready < 0 && errno == EINTR);
      int error = 0;
      socklen_t len = sizeof error;
      if (ready > 0 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == 0)
        refused = error == ECONNREFUSED;
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return refused;
}

}  // namespace caldera
