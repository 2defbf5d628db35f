#include "actors/jobflow/endpoint_probe.hpp"

#include <cerrno>
#include <cstring>
#include <optional>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "actors/net/tcp_connect.hpp"

namespace caldera {
namespace {

using Clock = std::chrono::steady_clock;

bool send_all(int fd, const std::string& data, Clock::time_point deadline) {
  size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_for(fd, POLLOUT, deadline)) return false;
    } else {
      return false;
    }
  }
  return true;
}

// The status code of the response's first line ("HTTP/1.x 200 OK"), once it has arrived.
std::optional<int> read_status(int fd, Clock::time_point deadline) {
  std::string head;
  char buf[512];
  while (head.find("\r\n") == std::string::npos && head.size() < 4096) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      head.append(buf, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_for(fd, POLLIN, deadline)) return std::nullopt;
    } else {
      break;  // closed, or an error: what arrived is all there is
    }
  }
  if (!head.starts_with("HTTP/") || head.find(' ') == std::string::npos) return std::nullopt;
  const auto code = head.substr(head.find(' ') + 1, 3);
  if (code.size() != 3 || code.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoi(code);
}

}  // namespace

bool tcp_answers(const std::string& host, int32_t port, std::chrono::milliseconds wait) {
  int fd = connect_within(host, port, Clock::now() + wait);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

bool http_answers(const std::string& host, const HttpGetProbe& probe,
                  std::chrono::milliseconds wait) {
  const auto deadline = Clock::now() + wait;
  int fd = connect_within(host, probe.port, deadline);
  if (fd < 0) return false;
  const bool v6 = host.find(':') != std::string::npos;
  std::string request = "GET " + (probe.path.empty() ? std::string("/") : probe.path) +
                        " HTTP/1.1\r\nHost: " + (v6 ? "[" + host + "]" : host) + ":" +
                        std::to_string(probe.port) +
                        "\r\nUser-Agent: caldera-probe\r\nAccept: */*\r\nConnection: close\r\n";
  if (!probe.header_name.empty()) request += probe.header_name + ": " + probe.header_value + "\r\n";
  request += "\r\n";
  std::optional<int> status;
  if (send_all(fd, request, deadline)) status = read_status(fd, deadline);
  ::close(fd);
  return status && *status >= 200 && *status < 400;
}

}  // namespace caldera
