// A JobFlow's endpoint probes against real sockets on 127.0.0.1: what passes, what does not, and
// that a silent server costs no more than the deadline.
#include "actors/jobflow/endpoint_probe.hpp"
#include "actors/node/port_probe.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace caldera {
namespace {

using namespace std::chrono_literals;

// A listening socket on 127.0.0.1 that answers each connection with `reply` (nothing at all when
// empty), remembering the last request it read.
class Server {
 public:
  explicit Server(std::string reply) : reply_(std::move(reply)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(fd_, 8), 0);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~Server() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  int32_t port() const { return port_; }
  std::string request() {
    std::lock_guard<std::mutex> lock(mutex_);
    return request_;
  }

 private:
  void serve() {
    while (!stop_) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      char buf[4096];
      ssize_t n = ::recv(c, buf, sizeof buf, 0);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        request_.assign(buf, n > 0 ? static_cast<size_t>(n) : 0);
      }
      if (!reply_.empty()) {
        (void)::send(c, reply_.data(), reply_.size(), MSG_NOSIGNAL);
      } else {
        std::this_thread::sleep_for(700ms);  // says nothing, longer than the probe waits
      }
      ::close(c);
    }
  }
  std::string reply_;
  int fd_ = -1;
  int32_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::string request_;
  std::thread thread_;
};

// A port nothing listens on: one that was bound, then closed.
int32_t closed_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

HttpGetProbe get(int32_t port, std::string path = "/", std::string header = "",
                 std::string value = "") {
  return HttpGetProbe{"web", std::move(path), port, std::move(header), std::move(value)};
}

TEST(EndpointProbe, TcpPassesWhereSomethingListensOnly) {
  Server s("HTTP/1.1 200 OK\r\n\r\n");
  EXPECT_TRUE(tcp_answers("127.0.0.1", s.port(), 1s));
  EXPECT_FALSE(tcp_answers("127.0.0.1", closed_port(), 1s));
  EXPECT_FALSE(tcp_answers("127.0.0.1", 0, 1s)) << "not a port";
  EXPECT_FALSE(tcp_answers("no-such-host.invalid", s.port(), 1s));
}

TEST(EndpointProbe, HttpPassesOn2xxAnd3xxAndSendsThePathAndHeader) {
  Server ok("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  EXPECT_TRUE(http_answers("127.0.0.1", get(ok.port(), "/healthz?x=1", "X-Probe", "flow"), 1s));
  const auto req = ok.request();
  EXPECT_TRUE(req.starts_with("GET /healthz?x=1 HTTP/1.1\r\n")) << req;
  EXPECT_NE(req.find("\r\nHost: 127.0.0.1:" + std::to_string(ok.port()) + "\r\n"),
            std::string::npos)
      << req;
  EXPECT_NE(req.find("\r\nX-Probe: flow\r\n"), std::string::npos) << req;
  Server moved("HTTP/1.0 302 Found\r\nLocation: /elsewhere\r\n\r\n");
  EXPECT_TRUE(http_answers("127.0.0.1", get(moved.port()), 1s));
}

TEST(EndpointProbe, HttpFailsOnErrorsGarbageAndSilence) {
  Server error("HTTP/1.1 503 Service Unavailable\r\n\r\n");
  EXPECT_FALSE(http_answers("127.0.0.1", get(error.port()), 1s));
  Server not_found("HTTP/1.1 404 Not Found\r\n\r\n");
  EXPECT_FALSE(http_answers("127.0.0.1", get(not_found.port()), 1s));
  Server garbage("SSH-2.0-OpenSSH_9.2\r\n");
  EXPECT_FALSE(http_answers("127.0.0.1", get(garbage.port()), 1s));
  EXPECT_FALSE(http_answers("127.0.0.1", get(closed_port()), 1s));
  Server silent("");
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(http_answers("127.0.0.1", get(silent.port()), 300ms));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 650ms) << "bounded by the deadline";
}

// The coordinator link's check shares the connection: refused only where nothing listens.
TEST(EndpointProbe, ConnectionRefusedOnlyWhereNothingListens) {
  Server s("");
  EXPECT_FALSE(connection_refused("127.0.0.1", static_cast<uint16_t>(s.port()), 1s));
  EXPECT_TRUE(connection_refused("127.0.0.1", static_cast<uint16_t>(closed_port()), 1s));
  EXPECT_FALSE(connection_refused("no-such-host.invalid", 80, 1s)) << "not a refusal: no answer";
}

}  // namespace
}  // namespace caldera
