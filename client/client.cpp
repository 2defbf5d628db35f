#include "client/client.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <capnp/message.h>
#include <kj/exception.h>

namespace caldera {
namespace {

using Clock = std::chrono::steady_clock;

// A response (a log chunk, a long job list) is never near this; beyond it the stream is garbage.
constexpr uint64_t kMaxFrameBytes = uint64_t(256) << 20;

uint32_t read_le32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return uint32_t(u[0]) | uint32_t(u[1]) << 8 | uint32_t(u[2]) << 16 | uint32_t(u[3]) << 24;
}

// Milliseconds left until the deadline, for poll(); never negative.
int remaining_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (left.count() <= 0) return 0;
  return left.count() > 1'000'000'000 ? 1'000'000'000 : static_cast<int>(left.count());
}

// Size of the whole frame at the front of `b`: 0 if more bytes are needed to know; a Failure if
// the header is absurd.
Result<uint64_t> frame_size(const std::string& b) {
  if (b.size() < 4) return uint64_t(0);
  uint64_t segments = uint64_t(read_le32(b.data())) + 1;
  uint64_t header = (4 + 4 * segments + 7) & ~uint64_t(7);
  if (header > kMaxFrameBytes) {
    return Failure{std::string(Client::kMalformedResponse) + ": frame claims " +
                   std::to_string(segments) + " segments"};
  }
  if (b.size() < header) return uint64_t(0);
  uint64_t words = 0;
  for (uint64_t i = 0; i < segments; ++i) words += read_le32(b.data() + 4 + 4 * i);
  uint64_t total = header + words * 8;
  if (total > kMaxFrameBytes) {
    return Failure{std::string(Client::kMalformedResponse) + ": frame of " + std::to_string(total) +
                   " bytes is larger than the limit of " + std::to_string(kMaxFrameBytes)};
  }
  return total;
}

// Splits "host:port" or "[v6]:port".
bool split_server(const std::string& server, std::string& host, std::string& port) {
  auto colon = server.rfind(':');
  if (colon == std::string::npos || colon + 1 == server.size()) return false;
  host = server.substr(0, colon);
  port = server.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return !host.empty();
}

// Connects one non-blocking socket within the deadline; returns the fd or -errno.
int connect_one(const addrinfo* ai, Clock::time_point deadline) {
  int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
  if (fd < 0) return -errno;
  if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
    if (errno != EINPROGRESS) {
      int err = errno;
      ::close(fd);
      return -err;
    }
    pollfd p{fd, POLLOUT, 0};
    int n;
    do {
      n = ::poll(&p, 1, remaining_ms(deadline));
    } while (n < 0 && errno == EINTR);
    if (n <= 0) {
      ::close(fd);
      return -ETIMEDOUT;
    }
    int err = 0;
    socklen_t len = sizeof(err);
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      ::close(fd);
      return -err;
    }
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

}  // namespace

Client::Client(int fd) : fd_(fd) {}

Client::~Client() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::unique_ptr<Client>> Client::connect(const std::string& server,
                                                std::chrono::milliseconds timeout,
                                                bool* transient) {
  if (transient) *transient = false;
  std::string host, port;
  if (!split_server(server, host, port)) {
    return Failure{"cannot connect to " + server + ": expected host:port"};
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int gai = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found);
  if (gai != 0) {
    if (transient) *transient = gai == EAI_AGAIN;  // "temporary failure in name resolution"
    return Failure{"cannot connect to " + server + ": " + ::gai_strerror(gai)};
  }
  auto deadline = Clock::now() + timeout;
  int result = -ECONNREFUSED;
  for (const addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    result = connect_one(ai, deadline);
    if (result >= 0 || result == -ETIMEDOUT) break;
  }
  ::freeaddrinfo(found);
  if (result >= 0) return std::unique_ptr<Client>(new Client(result));
  if (transient) {
    const int e = -result;
    *transient = e == ECONNREFUSED || e == ETIMEDOUT || e == ECONNRESET || e == ECONNABORTED ||
                 e == EHOSTUNREACH || e == ENETUNREACH || e == ENETDOWN || e == EAGAIN;
  }
  std::string reason = result == -ETIMEDOUT
                           ? "timed out after " + std::to_string(timeout.count()) + " ms"
                           : std::string(std::strerror(-result));
  std::string hint =
      result == -ECONNREFUSED || result == -ETIMEDOUT ? " (is calderad running?)" : "";
  return Failure{"cannot connect to " + server + ": " + reason + hint};
}

Result<bool> Client::send_raw(const std::string& bytes) {
  // A stalled server (not reading) must not hang the caller forever.
  auto deadline = Clock::now() + std::chrono::seconds(30);
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd_, POLLOUT, 0};
      int ready = ::poll(&p, 1, remaining_ms(deadline));
      if (ready == 0) return Failure{"timed out sending to the server"};
      continue;
    }
    if (errno == EPIPE || errno == ECONNRESET) return Failure{"connection closed by server"};
    return Failure{std::string("cannot send to the server: ") + std::strerror(errno)};
  }
  return true;
}

Result<std::string> Client::read_frame(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  char chunk[64 * 1024];
  for (;;) {
    auto size = frame_size(buffer_);
    if (!size) return Failure{size.error()};
    if (*size != 0 && buffer_.size() >= *size) {
      std::string frame = buffer_.substr(0, *size);
      buffer_.erase(0, *size);
      return frame;
    }
    ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n > 0) {
      buffer_.append(chunk, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) return Failure{"connection closed by server"};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      pollfd p{fd_, POLLIN, 0};
      int ready = ::poll(&p, 1, remaining_ms(deadline));
      if (ready == 0) {
        return Failure{"timed out after " + std::to_string(timeout.count()) +
                       " ms waiting for the server"};
      }
      continue;
    }
    if (errno == ECONNRESET) return Failure{"connection closed by server"};
    return Failure{std::string("cannot read from the server: ") + std::strerror(errno)};
  }
}

uint64_t Client::send_request(const std::function<void(api::Request::Builder)>& fill,
                              Result<bool>* sent) {
  uint64_t id = next_id_++;
  capnp::MallocMessageBuilder builder;
  auto request = builder.initRoot<api::Request>();
  fill(request);
  request.setId(id);  // after fill, so the caller cannot pick a clashing id
  *sent = send_raw(to_bytes(builder));
  return id;
}

Result<std::unique_ptr<FlatReader>> Client::call(
    const std::function<void(api::Request::Builder)>& fill, std::chrono::milliseconds timeout) {
  Result<bool> sent = true;
  auto id = send_request(fill, &sent);
  bool closed = false;
  if (!sent) {
    // The server may have answered why it closed (say, the request was too large) before it did.
    if (sent.error() != "connection closed by server") return Failure{sent.error()};
    closed = true;
  }
  auto reply = next(id, closed ? std::chrono::milliseconds(0) : timeout);
  if (reply || reply.error().rfind(kMalformedResponse, 0) == 0) return reply;
  if (closed) return Failure{"connection closed by server"};
  if (reply.error().rfind("timed out", 0) == 0) {
    // The request was sent: the server may carry it out after all, so a blind retry of a
    // submit or delete can act twice.
    std::string waited = timeout.count() % 1000 == 0 ? std::to_string(timeout.count() / 1000) + " s"
                                                     : std::to_string(timeout.count()) + " ms";
    return Failure{"timed out after " + waited +
                   " waiting for the response; the request may still take effect on the "
                   "server (check with get before sending it again)"};
  }
  return reply;
}

Result<uint64_t> Client::start(const std::function<void(api::Request::Builder)>& fill) {
  Result<bool> sent = true;
  auto id = send_request(fill, &sent);
  if (!sent) return Failure{sent.error()};
  return id;
}

Result<std::unique_ptr<FlatReader>> Client::next(uint64_t id, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  capnp::ReaderOptions options;
  options.traversalLimitInWords = uint64_t(64) << 20;
  options.nestingLimit = 64;
  for (;;) {
    auto frame = read_frame(std::chrono::milliseconds(remaining_ms(deadline)));
    if (!frame) return Failure{frame.error()};
    try {
      auto reader = std::make_unique<FlatReader>(*frame, options);
      auto response = reader->root<api::Response>();
      // Walks every pointer once, so a bad one fails here rather than in the caller's hands.
      response.totalSize();
      uint64_t got = response.getId();
      if (got == id || (got == 0 && response.isErrors())) return reader;
    } catch (const kj::Exception& e) {
      return Failure{std::string(kMalformedResponse) + ": " + e.getDescription().cStr()};
    }
  }
}

}  // namespace caldera
