#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include <capnp/message.h>
#include <kj/exception.h>

#include "client/client.hpp"
#include "messages/api.capnp.h"
#include "messages/codec/flat.hpp"
#include "node/gateway.hpp"
#include "tests/api_requests.hpp"

namespace caldera {
namespace {

using caldera::testing::list_jobs_request;
using caldera::testing::ping_request;

using namespace std::chrono_literals;

class IgnoreSigpipe : public ::testing::Environment {
 public:
  void SetUp() override { std::signal(SIGPIPE, SIG_IGN); }
};
const auto* const kSigpipe = ::testing::AddGlobalTestEnvironment(new IgnoreSigpipe);

std::string error_response(uint64_t id, api::Error::Code code, const std::string& message) {
  capnp::MallocMessageBuilder builder;
  auto response = builder.initRoot<api::Response>();
  response.setId(id);
  auto error = response.initErrors(1)[0];
  error.setCode(code);
  error.setMessage(message);
  return to_bytes(builder);
}

bool eventually(const std::function<bool()>& fn, std::chrono::milliseconds timeout = 10s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (fn()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return fn();
}

// A gateway whose handler decodes requests and replies from a separate worker thread, as the
// real request handler does: ping -> Pong{node="test"}; listNodes -> ok, then the connection is
// closed; listJobs -> ok with a warning of `large_reply` bytes; anything else -> unimplemented;
// undecodable -> malformed with id 0.
class Server {
 public:
  explicit Server(GatewayLimits limits = {}, size_t large_reply = 1024)
      : large_reply_(large_reply) {
    auto started = Gateway::start(
        "127.0.0.1", 0, limits,
        [this](uint64_t connection, std::string frame) { handle(connection, std::move(frame)); });
    if (!started) {
      ADD_FAILURE() << started.error();
      return;
    }
    gateway_ = std::move(*started);
    worker_ = std::thread([this] { reply_loop(); });
  }
  ~Server() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    if (worker_.joinable()) worker_.join();
    gateway_.reset();
  }
  Gateway& gateway() { return *gateway_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(gateway_->port()); }
  std::vector<uint64_t> connections_seen() {
    std::lock_guard lock(mutex_);
    return seen_;
  }
  size_t frames() const { return frames_.load(); }

 private:
  struct Reply {
    uint64_t connection;
    std::string bytes;
    bool close;
  };

  void handle(uint64_t connection, std::string frame) {
    ++frames_;
    Reply reply{connection, {}, false};
    try {
      capnp::ReaderOptions options;
      options.traversalLimitInWords = 1 << 20;
      options.nestingLimit = 16;
      FlatReader reader(frame, options);
      auto request = reader.root<api::Request>();
      capnp::MallocMessageBuilder builder;
      auto response = builder.initRoot<api::Response>();
      response.setId(request.getId());
      switch (request.which()) {
        case api::Request::PING:
          response.initPong().setNode("test");
          break;
        case api::Request::LIST_NODES:
          response.setOk();
          reply.close = true;
          break;
        case api::Request::LIST_JOBS:
          response.initWarnings(1).set(0, std::string(large_reply_, 'w'));
          response.setOk();
          break;
        default: {
          auto error = response.initErrors(1)[0];
          error.setCode(api::Error::Code::UNIMPLEMENTED);
          error.setMessage("not in this test");
        }
      }
      reply.bytes = to_bytes(builder);
    } catch (const kj::Exception& e) {
      reply.bytes = error_response(0, api::Error::Code::MALFORMED, e.getDescription().cStr());
    }
    std::lock_guard lock(mutex_);
    if (seen_.empty() || seen_.back() != connection) seen_.push_back(connection);
    replies_.push_back(std::move(reply));
    cv_.notify_one();
  }

  void reply_loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      cv_.wait(lock, [this] { return stop_ || !replies_.empty(); });
      if (stop_) return;
      Reply reply = std::move(replies_.front());
      replies_.pop_front();
      lock.unlock();
      if (reply.close) {
        gateway_->close(reply.connection, std::move(reply.bytes));
      } else {
        gateway_->send(reply.connection, std::move(reply.bytes));
      }
      lock.lock();
    }
  }

  size_t large_reply_;
  std::unique_ptr<Gateway> gateway_;
  std::thread worker_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::deque<Reply> replies_;
  std::vector<uint64_t> seen_;
  std::atomic<size_t> frames_{0};
};

std::unique_ptr<Client> connect_to(Server& server) {
  auto client = Client::connect(server.address(), 2s);
  EXPECT_TRUE(client) << client.error();
  return client ? std::move(*client) : nullptr;
}

// Pings through the full client path; returns "" on success or what went wrong.
std::string ping(Client& client) {
  auto response = client.call([](api::Request::Builder r) { r.setPing(); }, 5s);
  if (!response) return response.error();
  auto root = (*response)->root<api::Response>();
  if (!root.isPong()) return "not a pong";
  if (root.getPong().getNode() != "test") return "wrong node";
  return "";
}

struct Decoded {
  uint64_t id = 0;
  bool pong = false;
  api::Error::Code code = api::Error::Code::INTERNAL;
  bool error = false;
  std::string message;
};

Decoded decode(const std::string& frame) {
  FlatReader reader(frame);
  auto r = reader.root<api::Response>();
  Decoded d;
  d.id = r.getId();
  d.pong = r.isPong();
  if (r.isErrors() && r.getErrors().size() > 0) {
    d.error = true;
    d.code = r.getErrors()[0].getCode();
    d.message = r.getErrors()[0].getMessage();
  }
  return d;
}

// Next frame must fail because the server closed the connection.
void expect_closed(Client& client) {
  auto next = client.read_frame(3s);
  ASSERT_FALSE(next);
  EXPECT_EQ(next.error(), "connection closed by server");
}

// The connection's first request is answered `unavailable` with `message`, then it is closed.
void expect_refused(Client& client, const std::string& message) {
  auto refusal = client.call([](api::Request::Builder r) { r.setPing(); }, 5s);
  ASSERT_TRUE(refusal) << refusal.error();
  auto root = (*refusal)->root<api::Response>();
  EXPECT_EQ(root.getId(), 0u);
  ASSERT_TRUE(root.isErrors());
  EXPECT_EQ(root.getErrors()[0].getCode(), api::Error::Code::UNAVAILABLE);
  EXPECT_EQ(std::string(root.getErrors()[0].getMessage()), message);
  expect_closed(client);
}

std::string header_claiming(uint32_t segments_minus_one, std::vector<uint32_t> sizes) {
  std::string h;
  auto put = [&h](uint32_t v) {
    for (int i = 0; i < 4; ++i) h.push_back(static_cast<char>(v >> (8 * i)));
  };
  put(segments_minus_one);
  for (uint32_t s : sizes) put(s);
  while (h.size() % 8 != 0) h.push_back('\0');
  return h;
}

TEST(Gateway, PingRoundTrip) {
  Server server;
  auto client = connect_to(server);
  ASSERT_TRUE(client);
  EXPECT_EQ(ping(*client), "");
  EXPECT_EQ(ping(*client), "");
}

TEST(Gateway, PipelinedRequestsInOneWriteAnswerInOrder) {
  Server server;
  auto client = connect_to(server);
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->send_raw(ping_request(7) + ping_request(8) + ping_request(9)));
  for (uint64_t id : {7, 8, 9}) {
    auto frame = client->read_frame(5s);
    ASSERT_TRUE(frame) << frame.error();
    auto d = decode(*frame);
    EXPECT_EQ(d.id, id);
    EXPECT_TRUE(d.pong);
  }
}

TEST(Gateway, FrameDribbledByteByByte) {
  Server server;
  auto client = connect_to(server);
  ASSERT_TRUE(client);
  std::string frame = ping_request(42);
  for (char byte : frame) ASSERT_TRUE(client->send_raw(std::string(1, byte)));
  auto reply = client->read_frame(5s);
  ASSERT_TRUE(reply) << reply.error();
  EXPECT_EQ(decode(*reply).id, 42u);
  EXPECT_TRUE(decode(*reply).pong);
  EXPECT_EQ(server.frames(), 1u);
}

TEST(Gateway, MultiSegmentFrame) {
  Server server;
  auto client = connect_to(server);
  ASSERT_TRUE(client);
  capnp::MallocMessageBuilder builder(1, capnp::AllocationStrategy::FIXED_SIZE);
  auto request = builder.initRoot<api::Request>();
  request.setId(5);
  request.setToken(std::string(100, 't'));
  request.setPing();
  std::string bytes = to_bytes(builder);
  ASSERT_GT(builder.getSegmentsForOutput().size(), 2u);
  ASSERT_GT(static_cast<unsigned char>(bytes[0]), 0u);  // segment count - 1
  ASSERT_TRUE(client->send_raw(bytes));
  auto reply = client->read_frame(5s);
  ASSERT_TRUE(reply) << reply.error();
  EXPECT_EQ(decode(*reply).id, 5u);
  EXPECT_TRUE(decode(*reply).pong);
}

TEST(Gateway, GarbageHeaderGetsErrorAndCloseOthersUnaffected) {
  Server server;
  auto bad = connect_to(server);
  auto good = connect_to(server);
  ASSERT_TRUE(bad && good);
  EXPECT_EQ(ping(*good), "");
  ASSERT_TRUE(bad->send_raw(std::string("\xff\xfe\xfd\xfc garbage garbage garbage", 28)));
  auto reply = bad->read_frame(5s);
  ASSERT_TRUE(reply) << reply.error();
  auto d = decode(*reply);
  EXPECT_EQ(d.id, 0u);
  ASSERT_TRUE(d.error);
  EXPECT_TRUE(d.code == api::Error::Code::TOO_LARGE || d.code == api::Error::Code::MALFORMED);
  EXPECT_NE(d.message.find("segments"), std::string::npos) << d.message;
  expect_closed(*bad);
  EXPECT_EQ(ping(*good), "");
  EXPECT_EQ(server.frames(), 2u);  // the garbage never reached the handler
}

TEST(Gateway, OversizedFrameGetsTooLargeAndClose) {
  Server server;
  auto client = connect_to(server);
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->send_raw(header_claiming(0, {100u << 17})));  // 100 MiB in words
  auto reply = client->read_frame(5s);
  ASSERT_TRUE(reply) << reply.error();
  auto d = decode(*reply);
  EXPECT_EQ(d.id, 0u);
  ASSERT_TRUE(d.error);
  EXPECT_EQ(d.code, api::Error::Code::TOO_LARGE);
  EXPECT_NE(d.message.find("104857608 bytes"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find(std::to_string(GatewayLimits{}.max_frame_bytes)), std::string::npos)
      << d.message;
  expect_closed(*client);
}

TEST(Gateway, TooManySegmentsIsRejected) {
  GatewayLimits limits;
  limits.max_segments = 4;
  Server server(limits);
  auto client = connect_to(server);
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->send_raw(header_claiming(4, {1, 1, 1, 1, 1})));
  auto reply = client->read_frame(5s);
  ASSERT_TRUE(reply) << reply.error();
  EXPECT_EQ(decode(*reply).code, api::Error::Code::TOO_LARGE);
  EXPECT_NE(decode(*reply).message.find("5 segments"), std::string::npos);
  expect_closed(*client);
}

TEST(Gateway, ClientCallSurfacesServerFramingError) {
  GatewayLimits limits;
  limits.max_frame_bytes = 1024;
  Server server(limits);
  auto client = connect_to(server);
  ASSERT_TRUE(client);
  auto response =
      client->call([](api::Request::Builder r) { r.setSubmitYaml(std::string(4096, 'y')); }, 5s);
  ASSERT_TRUE(response) << response.error();
  auto root = (*response)->root<api::Response>();
  EXPECT_EQ(root.getId(), 0u);
  ASSERT_TRUE(root.isErrors());
  EXPECT_EQ(root.getErrors()[0].getCode(), api::Error::Code::TOO_LARGE);
}

TEST(Gateway, GarbageSegmentContentIsHandlersMalformedErrorAndStaysOpen) {
  Server server;
  auto client = connect_to(server);
  ASSERT_TRUE(client);
  // A well-formed one-segment frame whose root pointer is nonsense.
  std::string frame = header_claiming(0, {2}) + std::string(16, '\xff');
  ASSERT_TRUE(client->send_raw(frame));
  auto reply = client->read_frame(5s);
  ASSERT_TRUE(reply) << reply.error();
  auto d = decode(*reply);
  EXPECT_EQ(d.id, 0u);
  ASSERT_TRUE(d.error);
  EXPECT_EQ(d.code, api::Error::Code::MALFORMED);
  EXPECT_FALSE(d.message.empty());
  EXPECT_EQ(ping(*client), "");
}

TEST(Gateway, ClientDisconnectingMidFrameDoesNotDisturbOthers) {
  Server server;
  auto good = connect_to(server);
  ASSERT_TRUE(good);
  for (int i = 0; i < 5; ++i) {
    auto quitter = connect_to(server);
    ASSERT_TRUE(quitter);
    std::string frame = ping_request(1);
    ASSERT_TRUE(quitter->send_raw(frame.substr(0, frame.size() / 2)));
    quitter.reset();
    EXPECT_EQ(ping(*good), "");
  }
  // Also a reset: SO_LINGER 0 makes close() send RST.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(server.gateway().port());
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  std::string partial = ping_request(3).substr(0, 10);
  ASSERT_EQ(::send(fd, partial.data(), partial.size(), MSG_NOSIGNAL), ssize_t(partial.size()));
  linger hard{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof(hard));
  ::close(fd);
  EXPECT_EQ(ping(*good), "");
  EXPECT_EQ(server.frames(), 6u);
}

TEST(Gateway, SendingToClosedOrUnknownConnectionIsHarmless) {
  Server server;
  uint64_t first;
  {
    auto client = connect_to(server);
    ASSERT_TRUE(client);
    EXPECT_EQ(ping(*client), "");
    ASSERT_EQ(server.connections_seen().size(), 1u);
    first = server.connections_seen()[0];
  }
  for (int i = 0; i < 20; ++i) server.gateway().send(first, ping_request(1));
  server.gateway().close(first, ping_request(1));
  server.gateway().send(999999, ping_request(1));
  server.gateway().close(999999);
  auto second = connect_to(server);
  ASSERT_TRUE(second);
  EXPECT_EQ(ping(*second), "");
  auto seen = server.connections_seen();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_GT(seen[1], seen[0]);  // never reused
}

TEST(Gateway, CloseSendsLastFrameThenCloses) {
  Server server;
  auto client = connect_to(server);
  ASSERT_TRUE(client);
  auto response = client->call([](api::Request::Builder r) { r.setListNodes(); }, 5s);
  ASSERT_TRUE(response) << response.error();
  EXPECT_TRUE((*response)->root<api::Response>().isOk());
  expect_closed(*client);
  auto again = client->call([](api::Request::Builder r) { r.setPing(); }, 5s);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error(), "connection closed by server");
}

TEST(Gateway, ConnectionsBeyondTheLimitGetARefusalAndOthersKeepWorking) {
  GatewayLimits limits;
  limits.max_connections = 2;
  Server server(limits);
  auto a = connect_to(server);
  auto b = connect_to(server);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(ping(*a), "");
  EXPECT_EQ(ping(*b), "");
  auto c = connect_to(server);
  ASSERT_TRUE(c);
  expect_refused(*c, "too many connections (limit 2); try again later");
  EXPECT_EQ(ping(*a), "");
  EXPECT_EQ(ping(*b), "");
  EXPECT_EQ(server.gateway().stats().refused, 1u);
  b.reset();
  // The slot frees once the gateway has seen b go; poll for it with a deadline.
  auto deadline = std::chrono::steady_clock::now() + 5s;
  std::string result;
  do {
    auto d = connect_to(server);
    ASSERT_TRUE(d);
    result = ping(*d);
  } while (!result.empty() && std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(result, "");
}

// A socket to the gateway from `source`, any 127/8 address (loopback takes them all); -1 if not.
int connect_from(const char* source, uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in local{};
  local.sin_family = AF_INET;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::inet_pton(AF_INET, source, &local.sin_addr) != 1 ||
      ::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Reads exactly `n` bytes within `timeout`; false on EOF, an error or the timeout.
bool read_exactly(int fd, size_t n, std::string& out, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  size_t start = out.size();
  out.resize(start + n);
  size_t got = 0;
  while (got < n) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    ssize_t r = ::recv(fd, out.data() + start + got, n - got, 0);
    if (r <= 0) return false;
    got += static_cast<size_t>(r);
  }
  return true;
}

// Sends a ping on a raw socket and reads the one frame that answers it; nullopt if none came.
std::optional<Decoded> raw_ping(int fd, uint64_t id) {
  std::string request = ping_request(id);
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) != ssize_t(request.size()))
    return std::nullopt;
  std::string frame;
  if (!read_exactly(fd, 4, frame, 5s)) return std::nullopt;
  uint32_t segments = uint32_t(static_cast<unsigned char>(frame[0])) + 1;
  size_t header = (4 + 4 * size_t(segments) + 7) & ~size_t(7);
  if (!read_exactly(fd, header - 4, frame, 5s)) return std::nullopt;
  size_t words = 0;
  for (uint32_t i = 0; i < segments; ++i) {
    const auto* p = reinterpret_cast<const unsigned char*>(frame.data() + 4 + 4 * i);
    words += size_t(p[0]) | size_t(p[1]) << 8 | size_t(p[2]) << 16 | size_t(p[3]) << 24;
  }
  if (!read_exactly(fd, words * 8, frame, 5s)) return std::nullopt;
  return decode(frame);
}

TEST(Gateway, ConnectionsBeyondThePerAddressLimitAreRefusedAndOtherAddressesServed) {
  GatewayLimits limits;
  limits.max_connections = 10;
  limits.max_connections_per_address = 3;
  Server server(limits);
  std::vector<std::unique_ptr<Client>> first;
  for (int i = 0; i < 3; ++i) {
    first.push_back(connect_to(server));  // from 127.0.0.1
    ASSERT_TRUE(first.back());
    EXPECT_EQ(ping(*first.back()), "");
  }
  auto fourth = connect_to(server);
  ASSERT_TRUE(fourth);
  expect_refused(*fourth,
                 "too many connections from 127.0.0.1 (limit 3 per client address); try again "
                 "later");

  // Another address is served, with 7 of the 10 places still free.
  const uint16_t port = server.gateway().port();
  int other = connect_from("127.0.0.2", port);
  ASSERT_GE(other, 0) << strerror(errno);
  auto pong = raw_ping(other, 9);
  ASSERT_TRUE(pong);
  EXPECT_TRUE(pong->pong) << pong->message;
  EXPECT_EQ(pong->id, 9u);
  for (auto& c : first) EXPECT_EQ(ping(*c), "");
  auto s = server.gateway().stats();
  EXPECT_EQ(s.refused_per_address, 1u);
  EXPECT_EQ(s.refused, 0u);

  // Closing one of the three lets a new one from 127.0.0.1 in, once the gateway has seen it go.
  first[0].reset();
  auto deadline = std::chrono::steady_clock::now() + 5s;
  std::string result;
  do {
    auto again = connect_to(server);
    ASSERT_TRUE(again);
    result = ping(*again);
    if (result.empty()) first[0] = std::move(again);
  } while (!result.empty() && std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(result, "");
  // And 127.0.0.2 still has its own three: two more get in, the fourth does not.
  std::vector<int> more;
  for (int i = 0; i < 3; ++i) {
    int fd = connect_from("127.0.0.2", port);
    ASSERT_GE(fd, 0) << strerror(errno);
    more.push_back(fd);
    auto d = raw_ping(fd, 20 + i);
    ASSERT_TRUE(d) << i;
    if (i < 2) {
      EXPECT_TRUE(d->pong) << i << ": " << d->message;
    } else {
      EXPECT_EQ(d->code, api::Error::Code::UNAVAILABLE);
      EXPECT_EQ(d->message,
                "too many connections from 127.0.0.2 (limit 3 per client address); try again "
                "later");
    }
  }
  ::close(other);
  for (int fd : more) ::close(fd);
}

TEST(Gateway, ThePerAddressCountFollowsEveryWayAConnectionCloses) {
  GatewayLimits limits;
  limits.max_connections = 10;
  limits.max_connections_per_address = 1;
  limits.idle_timeout = 300ms;
  Server server(limits);
  const uint16_t port = server.gateway().port();
  // Once the gateway has let go of the closed connection (no more than `open_left` sockets
  // remain), 127.0.0.1 has exactly its one place again: a new connection gets in and the one
  // after it is refused.
  auto one_place_again = [&](const std::string& how, size_t open_left) {
    SCOPED_TRACE(how);
    ASSERT_TRUE(eventually([&] { return server.gateway().stats().connections <= open_left; }));
    int in = connect_from("127.0.0.1", port);
    int out = connect_from("127.0.0.1", port);
    ASSERT_TRUE(in >= 0 && out >= 0) << strerror(errno);
    auto admitted = raw_ping(in, 1);
    auto refused = raw_ping(out, 2);
    ::close(in);
    ::close(out);
    ASSERT_TRUE(admitted && refused);
    EXPECT_TRUE(admitted->pong) << admitted->message;
    EXPECT_EQ(refused->code, api::Error::Code::UNAVAILABLE) << refused->message;
    ASSERT_TRUE(eventually([&] { return server.gateway().stats().connections == 0; }));
  };

  // The server closes it (listNodes is answered, then closed).
  auto a = connect_to(server);
  ASSERT_TRUE(a);
  auto closed = a->call([](api::Request::Builder r) { r.setListNodes(); }, 5s);
  ASSERT_TRUE(closed) << closed.error();
  expect_closed(*a);
  a.reset();
  one_place_again("closed by the server", 0);

  // The client resets it.
  int fd = connect_from("127.0.0.1", port);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(raw_ping(fd, 2).value_or(Decoded{}).pong);
  linger hard{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof(hard));
  ::close(fd);
  one_place_again("reset by the client", 0);

  // The idle timeout closes it; the client keeps its socket.
  fd = connect_from("127.0.0.1", port);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(raw_ping(fd, 3).value_or(Decoded{}).pong);
  const uint64_t idle_before = server.gateway().stats().closed_idle;
  ASSERT_TRUE(eventually([&] { return server.gateway().stats().closed_idle > idle_before; }));
  ::close(fd);
  one_place_again("closed as idle", 0);

  // A refused connection never held a place: one admitted plus one refused, then the admitted
  // one goes, and the next gets in.
  auto holder = connect_to(server);
  ASSERT_TRUE(holder);
  EXPECT_EQ(ping(*holder), "");
  const uint64_t refused_before = server.gateway().stats().refused_per_address;
  auto refused = connect_to(server);
  ASSERT_TRUE(refused);
  auto refusal = refused->call([](api::Request::Builder r) { r.setPing(); }, 5s);
  ASSERT_TRUE(refusal) << refusal.error();
  EXPECT_TRUE((*refusal)->root<api::Response>().isErrors());
  expect_closed(*refused);
  EXPECT_EQ(server.gateway().stats().refused_per_address, refused_before + 1);
  // The refused one lingers (its client has not closed it) while the admitted one goes.
  holder.reset();
  ASSERT_TRUE(eventually([&] { return server.gateway().stats().connections <= 1; }));
  int in = connect_from("127.0.0.1", port);
  ASSERT_GE(in, 0);
  auto admitted = raw_ping(in, 4);
  ASSERT_TRUE(admitted);
  EXPECT_TRUE(admitted->pong) << admitted->message;
  ::close(in);
  refused.reset();
  EXPECT_TRUE(eventually([&] { return server.gateway().stats().connections == 0; }));
}

// A loopback socket to the gateway; a small receive buffer keeps what the kernel holds for a
// client that does not read small, so the gateway's own queue is what grows.
int raw_connect(uint16_t port, int receive_buffer = 0) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (receive_buffer > 0)
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof(receive_buffer));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends what the peer takes without blocking, waiting at most `patience` for room each time.
size_t send_what_fits(int fd, const std::string& data, std::chrono::milliseconds patience) {
  size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) break;
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, static_cast<int>(patience.count())) <= 0) break;
  }
  return sent;
}

TEST(Gateway, ClientThatDoesNotReadIsPausedWithABoundedQueue) {
  GatewayLimits limits;
  limits.max_queued_bytes = 1 << 20;
  limits.max_in_flight = 16;
  constexpr size_t kReply = 256 << 10;
  constexpr uint64_t kRequests = 1000;  // 250 MiB of replies if all were queued
  Server server(limits, kReply);
  int fd = raw_connect(server.gateway().port(), 16 << 10);
  ASSERT_GE(fd, 0);
  std::string flood;
  for (uint64_t id = 1; id <= kRequests; ++id) flood += list_jobs_request(id);
  send_what_fits(fd, flood, 500ms);
  // Paused with nothing left in flight: the gateway waits for the client and computes no more.
  auto settled = [&] {
    auto s = server.gateway().stats();
    return s.paused_connections == 1 && s.requests_in_flight == 0;
  };
  ASSERT_TRUE(eventually(settled)) << server.gateway().stats().queued_bytes;
  auto s = server.gateway().stats();
  EXPECT_GT(s.queued_bytes, limits.max_queued_bytes);
  // Over the limit by at most the replies that were in flight when it was reached.
  EXPECT_LE(s.queued_bytes, limits.max_queued_bytes + limits.max_in_flight * (kReply + 4096));
  size_t handled = server.frames();
  EXPECT_LT(handled, kRequests / 4);

  auto other = connect_to(server);
  ASSERT_TRUE(other);
  EXPECT_EQ(ping(*other), "");
  EXPECT_EQ(server.frames(), handled + 1);  // nothing more was taken from the paused client
  EXPECT_TRUE(settled());

  ::close(fd);  // unread data: the kernel resets, and the queued replies are dropped
  EXPECT_TRUE(eventually([&] {
    auto now = server.gateway().stats();
    return now.queued_bytes == 0 && now.paused_connections == 0 && now.connections == 1;
  }));
  EXPECT_EQ(ping(*other), "");
}

TEST(Gateway, PipelinerThatReadsGetsEveryReplyInOrderThroughPauses) {
  GatewayLimits limits;
  limits.max_queued_bytes = 64 << 10;
  limits.max_in_flight = 4;
  Server server(limits, 16 << 10);
  auto client = connect_to(server);
  ASSERT_TRUE(client);
  constexpr uint64_t kRequests = 300;
  std::string requests;
  for (uint64_t id = 1; id <= kRequests; ++id) requests += list_jobs_request(id);
  ASSERT_TRUE(client->send_raw(requests));
  for (uint64_t id = 1; id <= kRequests; ++id) {
    auto frame = client->read_frame(5s);
    ASSERT_TRUE(frame) << "reply " << id << ": " << frame.error();
    ASSERT_EQ(decode(*frame).id, id);
  }
  EXPECT_EQ(server.frames(), kRequests);
  EXPECT_TRUE(eventually([&] {
    auto s = server.gateway().stats();
    return s.queued_bytes == 0 && s.paused_connections == 0 && s.requests_in_flight == 0;
  }));
}

TEST(Gateway, ClientThatNeverReadsIsClosedAfterTheSlowReaderTimeout) {
  GatewayLimits limits;
  limits.max_queued_bytes = 256 << 10;
  limits.slow_reader_timeout = 300ms;
  Server server(limits, 64 << 10);
  int fd = raw_connect(server.gateway().port(), 16 << 10);
  ASSERT_GE(fd, 0);
  std::string flood;
  for (uint64_t id = 1; id <= 200; ++id) flood += list_jobs_request(id);
  send_what_fits(fd, flood, 500ms);
  ASSERT_TRUE(eventually([&] { return server.gateway().stats().closed_slow_reader == 1; }, 5s));
  EXPECT_TRUE(eventually([&] {
    auto s = server.gateway().stats();
    return s.connections == 0 && s.queued_bytes == 0;
  }));
  ::close(fd);
}

TEST(Gateway, IncompleteFrameIsClosedAfterTheFrameTimeout) {
  GatewayLimits limits;
  limits.frame_timeout = 200ms;
  Server server(limits);
  auto good = connect_to(server);
  auto stuck = connect_to(server);
  ASSERT_TRUE(good && stuck);
  // Announces 100 words and sends one of them.
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(stuck->send_raw(header_claiming(0, {100}) + std::string(8, '\0')));
  auto reply = stuck->read_frame(5s);
  auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(reply) << reply.error();
  auto d = decode(*reply);
  EXPECT_EQ(d.code, api::Error::Code::MALFORMED);
  EXPECT_NE(d.message.find("incomplete frame: 16 bytes"), std::string::npos) << d.message;
  expect_closed(*stuck);
  // The gateway times with the loop's clock, in whole ms and read at the start of an iteration:
  // it may fire up to a millisecond before 200 ms by ours (seen: 199.7 ms).
  EXPECT_GE(waited, 199ms);
  EXPECT_LT(waited, 3s);

  // Sending a byte at a time does not keep a frame alive either.
  auto dribbler = connect_to(server);
  ASSERT_TRUE(dribbler);
  std::string frame = ping_request(1);
  start = std::chrono::steady_clock::now();
  for (char byte : frame) {
    if (!dribbler->send_raw(std::string(1, byte))) break;
    std::this_thread::sleep_for(50ms);
    if (server.gateway().stats().closed_frame_timeout == 2) break;
  }
  EXPECT_EQ(server.gateway().stats().closed_frame_timeout, 2u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);

  EXPECT_EQ(ping(*good), "");  // idle, never mid-frame: untouched
  EXPECT_EQ(server.frames(), 1u);
}

TEST(Gateway, IdleConnectionIsClosedAfterTheIdleTimeout) {
  GatewayLimits limits;
  limits.idle_timeout = 300ms;
  Server server(limits);
  auto idle = connect_to(server);
  auto busy = connect_to(server);
  ASSERT_TRUE(idle && busy);
  EXPECT_EQ(ping(*idle), "");
  auto last_request = std::chrono::steady_clock::now();
  std::string outcome;
  while (std::chrono::steady_clock::now() - last_request < 5s) {
    ASSERT_EQ(ping(*busy), "");  // a request every 50 ms keeps a connection open
    auto frame = idle->read_frame(50ms);
    ASSERT_FALSE(frame);
    outcome = frame.error();
    if (outcome.rfind("timed out", 0) != 0) break;
  }
  auto waited = std::chrono::steady_clock::now() - last_request;
  EXPECT_EQ(outcome, "connection closed by server");
  // The gateway's clock (the loop's, in whole ms) starts a little before the pong reaches us.
  EXPECT_GE(waited, 280ms);
  EXPECT_EQ(server.gateway().stats().closed_idle, 1u);
  EXPECT_EQ(ping(*busy), "");
}

TEST(Gateway, OutOfDescriptorsShedsNewClientsWithoutSpinning) {
  Server server;
  auto a = connect_to(server);
  ASSERT_TRUE(a);
  EXPECT_EQ(ping(*a), "");
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  int highest = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(highest, 0);
  for (int fd = highest + 1; fd < highest + 256; ++fd)
    if (::fcntl(fd, F_GETFD) != -1) highest = fd;
  rlimit low = saved;
  low.rlim_cur = static_cast<rlim_t>(highest) + 16;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  std::vector<int> fillers;
  for (int fd; (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) fillers.push_back(fd);
  ::close(fillers.back());  // one free descriptor: the client's socket, none left to accept it
  fillers.pop_back();
  auto restore = [&] {
    for (int fd : fillers) ::close(fd);
    fillers.clear();
    ::setrlimit(RLIMIT_NOFILE, &saved);
  };

  auto shed = Client::connect(server.address(), 2s);
  if (!shed) restore();
  ASSERT_TRUE(shed) << shed.error();
  auto frame = (*shed)->read_frame(3s);
  ASSERT_FALSE(frame);
  EXPECT_EQ(frame.error(), "connection closed by server");
  rusage before{}, after{};
  ::getrusage(RUSAGE_SELF, &before);
  std::this_thread::sleep_for(300ms);
  ::getrusage(RUSAGE_SELF, &after);
  auto cpu_us = [](const rusage& r) {
    return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1'000'000L + r.ru_utime.tv_usec +
           r.ru_stime.tv_usec;
  };
  restore();
  EXPECT_LT(cpu_us(after) - cpu_us(before), 100'000L);  // not retrying accept in a loop
  EXPECT_EQ(ping(*a), "");
  auto b = connect_to(server);
  ASSERT_TRUE(b);
  EXPECT_EQ(ping(*b), "");
}

TEST(Gateway, StatsCountConnections) {
  Server server;
  EXPECT_EQ(server.gateway().stats().connections, 0u);
  auto a = connect_to(server);
  auto b = connect_to(server);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(ping(*a), "");
  EXPECT_EQ(ping(*b), "");
  EXPECT_EQ(server.gateway().stats().connections, 2u);
  a.reset();
  EXPECT_TRUE(eventually([&] { return server.gateway().stats().connections == 1; }));
  auto s = server.gateway().stats();
  EXPECT_EQ(s.queued_bytes, 0u);
  EXPECT_EQ(s.paused_connections, 0u);
  EXPECT_EQ(s.requests_in_flight, 0u);
}

TEST(Gateway, HundredConcurrentClientsFiftyPingsEach) {
  Server server;
  std::atomic<int> ok{0};
  std::mutex errors_mutex;
  std::vector<std::string> errors;
  std::vector<std::thread> threads;
  for (int t = 0; t < 100; ++t) {
    threads.emplace_back([&] {
      auto client = Client::connect(server.address(), 5s);
      if (!client) {
        std::lock_guard lock(errors_mutex);
        errors.push_back(client.error());
        return;
      }
      for (int i = 0; i < 50; ++i) {
        std::string error = ping(**client);
        if (!error.empty()) {
          std::lock_guard lock(errors_mutex);
          errors.push_back(error);
          return;
        }
        ++ok;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 5000);
  EXPECT_TRUE(errors.empty()) << errors.size() << " errors, first: " << errors.front();
}

TEST(Gateway, BindToPortInUseFailsClearly) {
  Server server;
  auto second =
      Gateway::start("127.0.0.1", server.gateway().port(), {}, [](uint64_t, std::string) {});
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error(),
            "cannot listen on 127.0.0.1:" + std::to_string(server.gateway().port()) +
                ": address already in use");
}

TEST(Gateway, ConnectToClosedPortFailsClearly) {
  uint16_t port;
  {
    Server server;
    port = server.gateway().port();
  }
  std::string address = "127.0.0.1:" + std::to_string(port);
  auto client = Client::connect(address, 2s);
  ASSERT_FALSE(client);
  EXPECT_EQ(client.error(),
            "cannot connect to " + address + ": Connection refused (is calderad running?)");
}

TEST(Gateway, FramingErrorResponseDecodes) {
  auto d = decode(framing_error_response(false, "bad bytes"));
  EXPECT_EQ(d.id, 0u);
  EXPECT_TRUE(d.error);
  EXPECT_EQ(d.code, api::Error::Code::MALFORMED);
  EXPECT_EQ(d.message, "bad bytes");
  EXPECT_EQ(decode(framing_error_response(true, "big")).code, api::Error::Code::TOO_LARGE);
}

}  // namespace
}  // namespace caldera

namespace caldera {
namespace {

// A gateway that holds every request unanswered and records connections and closes.
struct PushServer {
  std::mutex mu;
  std::vector<uint64_t> connections, closed;
  std::unique_ptr<Gateway> gateway;

  explicit PushServer(GatewayLimits limits) {
    auto started = Gateway::start(
        "127.0.0.1", 0, limits,
        [this](uint64_t c, std::string) {
          std::lock_guard lock(mu);
          connections.push_back(c);
        },
        [this](uint64_t c) {
          std::lock_guard lock(mu);
          closed.push_back(c);
        });
    if (!started)
      ADD_FAILURE() << started.error();
    else
      gateway = std::move(*started);
  }
  std::optional<uint64_t> connection() {
    std::lock_guard lock(mu);
    if (connections.empty()) return std::nullopt;
    return connections.back();
  }
  bool was_closed(uint64_t c) {
    std::lock_guard lock(mu);
    return std::find(closed.begin(), closed.end(), c) != closed.end();
  }
};

TEST(GatewayPush, PushedFramesReachTheClientAndAnswerNoRequest) {
  PushServer server({});
  auto client = Client::connect("127.0.0.1:" + std::to_string(server.gateway->port()), 5s);
  ASSERT_TRUE(client);
  ASSERT_TRUE((*client)->send_raw(ping_request(1)));
  ASSERT_TRUE(eventually([&] { return server.connection().has_value(); }));
  auto c = *server.connection();
  for (uint64_t i = 0; i < 3; ++i) server.gateway->push(c, ping_request(100 + i));
  for (uint64_t i = 0; i < 3; ++i) {
    auto frame = (*client)->read_frame(5s);
    ASSERT_TRUE(frame) << frame.error();
    FlatReader reader(*frame);
    EXPECT_EQ(reader.root<api::Request>().getId(), 100 + i);
  }
  EXPECT_EQ(server.gateway->stats().requests_in_flight, 1u) << "the request is still owed";
  server.gateway->send(c, ping_request(1));
  ASSERT_TRUE((*client)->read_frame(5s));
  EXPECT_TRUE(eventually([&] { return server.gateway->stats().requests_in_flight == 0; }));
}

TEST(GatewayPush, AWatcherThatDoesNotReadIsClosedAtTheLimit) {
  GatewayLimits limits;
  limits.max_pushed_bytes = 1u << 20;
  PushServer server(limits);
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  int small = 4096;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(server.gateway->port());
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  auto request = ping_request(1);
  ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  ASSERT_TRUE(eventually([&] { return server.connection().has_value(); }));
  auto c = *server.connection();
  // 64 KiB frames, never read: the kernel's buffers fill, then the gateway's queue passes the
  // limit and the connection is dropped instead of growing.
  capnp::MallocMessageBuilder b;
  auto r = b.initRoot<api::Response>();
  r.initWarnings(1).set(0, std::string(64 * 1024, 'x'));
  const auto frame = to_bytes(b);
  size_t pushed = 0;
  while (!server.was_closed(c) && pushed < (64u << 20)) {
    server.gateway->push(c, frame);
    pushed += frame.size();
    if (pushed % (1u << 20) < frame.size()) std::this_thread::sleep_for(5ms);
  }
  EXPECT_TRUE(eventually([&] { return server.was_closed(c); })) << pushed << " bytes pushed";
  EXPECT_EQ(server.gateway->stats().closed_slow_watcher, 1u);
  EXPECT_GT(pushed, limits.max_pushed_bytes) << "closed only past the limit";
  ::close(fd);
}

}  // namespace
}  // namespace caldera
