#include "node/gateway.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include <capnp/message.h>
#include <spdlog/spdlog.h>

#include "messages/api.capnp.h"
#include "messages/codec/flat.hpp"

namespace caldera {
namespace {

// After a graceful close (our FIN sent), keep draining what the peer still sends for this long:
// closing a socket with unread input makes the kernel send RST, which can destroy the last
// response (say, a tooLarge error) before the peer reads it.
constexpr uint64_t kLingerMs = 1000;
constexpr size_t kReadChunk = 64 * 1024;
// The kernel caps it at net.core.somaxconn. libuv's usual 128 overflows when hundreds of clients
// connect at once, and each dropped SYN costs its client a 1 s retransmission.
constexpr int kBacklog = 1024;
// Refused connections linger like any graceful close and hold a descriptor meanwhile; beyond this
// many at once a flood of them is closed without the explanation.
constexpr size_t kMaxRefusing = 128;
constexpr uint64_t kRefusalLogEveryMs = 10'000;

uint32_t read_le32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return uint32_t(u[0]) | uint32_t(u[1]) << 8 | uint32_t(u[2]) << 16 | uint32_t(u[3]) << 24;
}

std::string error_frame(api::Error::Code code, const std::string& message) {
  capnp::MallocMessageBuilder builder;
  auto response = builder.initRoot<api::Response>();
  response.setId(0);
  auto error = response.initErrors(1)[0];
  error.setCode(code);
  error.setMessage(message);
  error.setPath("");
  return to_bytes(builder);
}

uint64_t to_ms(std::chrono::milliseconds d) {
  return d.count() > 0 ? static_cast<uint64_t>(d.count()) : 0;
}

// The peer's IP as text, without the port; an IPv4-mapped IPv6 address as the IPv4 one, so that a
// client counts the same on a dual-stack listener. "" if unknown.
std::string peer_address(const uv_tcp_t* tcp) {
  sockaddr_storage addr{};
  int len = sizeof(addr);
  if (uv_tcp_getpeername(tcp, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return {};
  char text[INET6_ADDRSTRLEN] = {};
  const char* written = nullptr;
  if (addr.ss_family == AF_INET) {
    written = inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&addr)->sin_addr, text,
                        sizeof(text));
  } else if (addr.ss_family == AF_INET6) {
    const in6_addr& ip = reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_addr;
    written = IN6_IS_ADDR_V4MAPPED(&ip) ? inet_ntop(AF_INET, ip.s6_addr + 12, text, sizeof(text))
                                        : inet_ntop(AF_INET6, &ip, text, sizeof(text));
  }
  return written ? std::string(written) : std::string();
}

class UvGateway;

struct Connection {
  UvGateway* gateway = nullptr;
  uint64_t id = 0;
  uv_tcp_t tcp{};
  uv_timer_t linger{};
  bool linger_started = false;
  int open_handles = 0;
  bool closing = false;  // no more frames in or out; reads are drained and discarded
  // What it counts against: admitted ones against max_connections and their address's
  // max_connections_per_address; refused ones (over either) get the refusal, then close; none
  // for one not accepted or dropped at once.
  enum class Slot { None, Admitted, Refused } slot = Slot::None;
  std::string address;  // the peer's IP; "": unknown, and no per-address limit applies
  bool paused = false;  // reads stopped for backpressure
  // Set when queued_bytes passes the limit, cleared when it drains to half: without the gap a
  // client reading slowly would flip reads on and off for every response.
  bool over_limit = false;
  size_t queued_bytes = 0;  // handed to uv_write, its callback not yet run
  // Frames of one wake-up, written together once it has been handled (one write syscall for a
  // client's pipelined answers, not one each).
  std::vector<std::string> outgoing;
  size_t outgoing_bytes = 0;
  size_t in_flight = 0;  // frames handed to on_frame, not yet answered
  // Loop times (uv_now, ms).
  uint64_t last_activity = 0;  // accepted, a complete frame, a reply, a finished write
  uint64_t frame_started = 0;  // the first byte of the incomplete frame in `buffer` arrived
  uint64_t over_since = 0;
  uint64_t closing_since = 0;
  std::string buffer;
};

struct WriteRequest {
  uv_write_t req{};
  std::vector<std::string> data;  // frames written together, in order
  size_t size = 0;
  Connection* connection = nullptr;
};

struct Command {
  enum Kind { Answer, Close, Push };
  uint64_t connection;
  std::string frame;
  Kind kind;
};

class UvGateway final : public Gateway {
 public:
  UvGateway(GatewayLimits limits, OnFrame on_frame, OnClose on_close)
      : limits_(limits), on_frame_(std::move(on_frame)), on_close_(std::move(on_close)) {
    read_chunk_.resize(kReadChunk);
    uv_loop_init(&loop_);
    uv_tcp_init(&loop_, &server_);
    server_.data = this;
    uv_async_init(&loop_, &async_, &UvGateway::on_async);
    async_.data = this;
    uv_timer_init(&loop_, &sweep_);
    sweep_.data = this;
    spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  }

  ~UvGateway() override {
    if (thread_.joinable()) {
      {
        std::lock_guard lock(mutex_);
        stop_ = true;
        uv_async_send(&async_);
      }
      thread_.join();
    } else {
      close_everything();
      uv_run(&loop_, UV_RUN_DEFAULT);
    }
    // Nothing should remain; close stragglers anyway so uv_loop_close succeeds.
    uv_walk(
        &loop_,
        [](uv_handle_t* h, void*) {
          if (!uv_is_closing(h)) uv_close(h, nullptr);
        },
        nullptr);
    uv_run(&loop_, UV_RUN_DEFAULT);
    uv_loop_close(&loop_);
    if (spare_fd_ >= 0) ::close(spare_fd_);
  }

  // Returns a libuv error code (0 on success).
  int listen(const std::string& host, uint16_t port) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    std::string service = std::to_string(port);
    int gai = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
    if (gai != 0) return UV_EAI_NONAME;
    int rc = uv_tcp_bind(&server_, found->ai_addr, 0);
    ::freeaddrinfo(found);
    if (rc != 0) return rc;
    // libuv may defer a bind error (address in use) until listen.
    rc = uv_listen(reinterpret_cast<uv_stream_t*>(&server_), kBacklog, &UvGateway::on_connection);
    if (rc != 0) return rc;
    sockaddr_storage addr{};
    int len = sizeof(addr);
    rc = uv_tcp_getsockname(&server_, reinterpret_cast<sockaddr*>(&addr), &len);
    if (rc != 0) return rc;
    if (addr.ss_family == AF_INET6) {
      port_ = ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
    } else {
      port_ = ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
    }
    return 0;
  }

  void run() {
    // Housekeeping only (timeouts); a fraction of the shortest timeout keeps them close to exact.
    uint64_t shortest = 1000;
    for (auto t : {limits_.frame_timeout, limits_.idle_timeout, limits_.slow_reader_timeout})
      if (to_ms(t) > 0) shortest = std::min(shortest, to_ms(t) / 4);
    uint64_t every = std::max<uint64_t>(shortest, 10);
    uv_timer_start(&sweep_, &UvGateway::on_sweep, every, every);
    thread_ = std::thread([this] { uv_run(&loop_, UV_RUN_DEFAULT); });
  }

  uint16_t port() const override { return port_; }

  void send(uint64_t connection, std::string frame) override {
    enqueue(Command{connection, std::move(frame), Command::Answer});
  }

  void push(uint64_t connection, std::string frame) override {
    enqueue(Command{connection, std::move(frame), Command::Push});
  }

  void close(uint64_t connection, std::string last_frame) override {
    enqueue(Command{connection, std::move(last_frame), Command::Close});
  }

  GatewayStats stats() const override {
    GatewayStats s;
    s.connections = stat_connections_.load(std::memory_order_relaxed);
    s.queued_bytes = stat_queued_.load(std::memory_order_relaxed);
    s.paused_connections = stat_paused_.load(std::memory_order_relaxed);
    s.requests_in_flight = stat_in_flight_.load(std::memory_order_relaxed);
    s.refused = stat_refused_.load(std::memory_order_relaxed);
    s.refused_per_address = stat_refused_per_address_.load(std::memory_order_relaxed);
    s.closed_idle = stat_idle_.load(std::memory_order_relaxed);
    s.closed_frame_timeout = stat_frame_timeout_.load(std::memory_order_relaxed);
    s.closed_slow_reader = stat_slow_reader_.load(std::memory_order_relaxed);
    s.closed_slow_watcher = stat_slow_watcher_.load(std::memory_order_relaxed);
    return s;
  }

 private:
  void enqueue(Command command) {
    std::lock_guard lock(mutex_);
    // Under the mutex: once stop_ is seen by the loop it closes async_, so no send may follow.
    if (stop_) return;
    commands_.push_back(std::move(command));
    uv_async_send(&async_);
  }

  static void on_async(uv_async_t* handle) {
    auto* self = static_cast<UvGateway*>(handle->data);
    std::deque<Command> commands;
    bool stop;
    {
      std::lock_guard lock(self->mutex_);
      commands.swap(self->commands_);  // sends coalesce into one wake-up: drain all
      stop = self->stop_;
    }
    if (stop) {
      self->close_everything();
      return;
    }
    for (auto& command : commands) self->execute(command);
    for (Connection* c : self->touched_) {
      self->flush(c);
      self->update_flow(c);
    }
    self->touched_.clear();
  }

  // On the loop thread, so in_flight and queued_bytes need no lock.
  void execute(Command& command) {
    auto it = connections_.find(command.connection);
    if (it == connections_.end() || it->second->closing) return;
    Connection* c = it->second.get();
    if (command.kind == Command::Push) {
      if (c->queued_bytes + c->outgoing_bytes + command.frame.size() > limits_.max_pushed_bytes) {
        stat_slow_watcher_.fetch_add(1, std::memory_order_relaxed);
        spdlog::info("gateway closes connection {}: its watch left {} bytes unread (limit {})",
                     c->id, c->queued_bytes, limits_.max_pushed_bytes);
        close_hard(c);
        return;
      }
    } else if (c->in_flight > 0) {
      --c->in_flight;
      stat_in_flight_.fetch_sub(1, std::memory_order_relaxed);
    }
    c->last_activity = uv_now(&loop_);
    if (!command.frame.empty()) {
      if (c->outgoing.empty()) touched_.push_back(c);
      c->outgoing_bytes += command.frame.size();
      c->outgoing.push_back(std::move(command.frame));
    }
    if (command.kind == Command::Close) {
      flush(c);
      close_gracefully(c);
    } else if (c->outgoing.empty()) {
      update_flow(c);
    }
  }

  // Writes the frames gathered for `c` in one uv_write.
  void flush(Connection* c) {
    if (c->outgoing.empty()) return;
    std::vector<std::string> frames;
    frames.swap(c->outgoing);
    c->outgoing_bytes = 0;
    if (c->closing) return;
    write(c, std::move(frames));
  }

  void close_everything() {
    for (auto& [id, c] : connections_) close_hard(c.get());
    for (auto* h :
         {reinterpret_cast<uv_handle_t*>(&server_), reinterpret_cast<uv_handle_t*>(&async_),
          reinterpret_cast<uv_handle_t*>(&sweep_)}) {
      if (!uv_is_closing(h)) uv_close(h, nullptr);
    }
  }

  static void on_connection(uv_stream_t* server, int status) {
    auto* self = static_cast<UvGateway*>(server->data);
    if (status == UV_EMFILE || status == UV_ENFILE) {
      self->shed_pending();
      return;
    }
    if (status < 0) return;
    auto owned = std::make_unique<Connection>();
    Connection* c = owned.get();
    c->gateway = self;
    c->id = self->next_connection_++;
    c->last_activity = uv_now(&self->loop_);
    uv_tcp_init(&self->loop_, &c->tcp);
    c->tcp.data = c;
    c->open_handles = 1;
    self->connections_.emplace(c->id, std::move(owned));
    self->stat_connections_.fetch_add(1, std::memory_order_relaxed);
    auto* stream = reinterpret_cast<uv_stream_t*>(&c->tcp);
    if (uv_accept(server, stream) != 0) {
      self->close_hard(c);
      return;
    }
    // Admission waits for the accept: the per-address limit needs the peer's address.
    c->address = peer_address(&c->tcp);
    const Refusal refusal = self->admission(*c);
    if (refusal != Refusal::None && self->refusing_ >= kMaxRefusing) {
      self->note_refusal(refusal, *c);  // a flood: closed without the explanation
      self->close_hard(c);
      return;
    }
    if (refusal == Refusal::None) {
      c->slot = Connection::Slot::Admitted;
      ++self->admitted_;
      if (!c->address.empty()) ++self->per_address_[c->address];
    } else {
      c->slot = Connection::Slot::Refused;
      ++self->refusing_;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    // A watch keeps its connection from ever being idle: a client whose machine vanished is
    // found by TCP keepalive instead (probes after a minute of silence).
    uv_tcp_keepalive(&c->tcp, 1, 60);
    // A refused connection reads too: the graceful close drains what its client sends.
    if (uv_read_start(stream, &UvGateway::on_alloc, &UvGateway::on_read) != 0) {
      self->close_hard(c);
      return;
    }
    if (refusal != Refusal::None) {
      self->note_refusal(refusal, *c);
      std::string message = refusal == Refusal::Total
                                ? "too many connections (limit " +
                                      std::to_string(self->limits_.max_connections) +
                                      "); try again later"
                                : "too many connections from " + c->address + " (limit " +
                                      std::to_string(self->limits_.max_connections_per_address) +
                                      " per client address); try again later";
      self->write(c, unavailable_response(message));
      self->close_gracefully(c);
    }
  }

  enum class Refusal { None, Total, PerAddress };

  // Whether an accepted connection is over a limit, the total first.
  Refusal admission(const Connection& c) const {
    if (admitted_ >= limits_.max_connections) return Refusal::Total;
    if (c.address.empty()) return Refusal::None;
    auto it = per_address_.find(c.address);
    if (it != per_address_.end() && it->second >= limits_.max_connections_per_address)
      return Refusal::PerAddress;
    return Refusal::None;
  }

  // libuv sheds connections itself when accept fails for lack of descriptors (it keeps a spare
  // one), and only calls us when it could not: another thread took the descriptor it freed.
  // Left pending, the connection would make libuv retry accept at once, forever; so free our own
  // spare, accept and drop what is pending, and take the spare back.
  void shed_pending() {
    uv_os_fd_t fd = -1;
    if (uv_fileno(reinterpret_cast<uv_handle_t*>(&server_), &fd) != 0) return;
    if (spare_fd_ >= 0) {
      ::close(spare_fd_);
      spare_fd_ = -1;
    }
    uint64_t shed = 0;
    for (;;) {
      int s = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (s >= 0) {
        ::close(s);
        ++shed;
      } else if (errno != EINTR) {
        break;
      }
    }
    spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    stat_refused_.fetch_add(shed, std::memory_order_relaxed);
    uint64_t now = uv_now(&loop_);
    if (now - last_emfile_log_ >= kRefusalLogEveryMs || last_emfile_log_ == 0) {
      last_emfile_log_ = now;
      spdlog::error("gateway out of file descriptors: dropped {} new connection(s)", shed);
    }
  }

  void note_refusal(Refusal refusal, const Connection& c) {
    if (refusal == Refusal::Total) {
      stat_refused_.fetch_add(1, std::memory_order_relaxed);
      ++refusals_unlogged_;
    } else {
      stat_refused_per_address_.fetch_add(1, std::memory_order_relaxed);
      ++refusals_per_address_unlogged_;
      last_refused_address_ = c.address;
    }
    uint64_t now = uv_now(&loop_);
    if (last_refusal_log_ != 0 && now - last_refusal_log_ < kRefusalLogEveryMs) return;
    if (refusals_unlogged_ > 0)
      spdlog::warn("gateway refused {} connection(s): {} open, the limit is {}", refusals_unlogged_,
                   admitted_, limits_.max_connections);
    if (refusals_per_address_unlogged_ > 0) {
      auto it = per_address_.find(last_refused_address_);
      spdlog::warn(
          "gateway refused {} connection(s) over the limit of {} per client address (the last "
          "from {}, which has {} open)",
          refusals_per_address_unlogged_, limits_.max_connections_per_address,
          last_refused_address_, it == per_address_.end() ? 0 : it->second);
    }
    last_refusal_log_ = now;
    refusals_unlogged_ = 0;
    refusals_per_address_unlogged_ = 0;
  }

  static void on_alloc(uv_handle_t* handle, size_t, uv_buf_t* buf) {
    // One buffer for the whole loop: on_read consumes it before the next read.
    auto* self = static_cast<Connection*>(handle->data)->gateway;
    *buf = uv_buf_init(self->read_chunk_.data(), static_cast<unsigned>(self->read_chunk_.size()));
  }

  static void on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
    auto* c = static_cast<Connection*>(stream->data);
    UvGateway* self = c->gateway;
    if (nread < 0) {  // EOF, reset, or any error: nothing to tell the peer
      self->close_hard(c);
      return;
    }
    if (nread == 0 || c->closing) return;
    bool was_empty = c->buffer.empty();
    c->buffer.append(buf->base, static_cast<size_t>(nread));
    bool consumed = self->extract_frames(c);
    if (c->closing) return;
    if (was_empty || consumed) c->frame_started = uv_now(&self->loop_);
    self->update_flow(c);
  }

  bool blocked(const Connection* c) const {
    return c->over_limit || c->in_flight >= limits_.max_in_flight;
  }

  // Hands every complete frame to on_frame_ until the connection is blocked; the rest stays in
  // the buffer. True if any frame was taken.
  bool extract_frames(Connection* c) {
    std::string& b = c->buffer;
    size_t offset = 0;
    while (!c->closing && !blocked(c) && b.size() - offset >= 4) {
      const char* p = b.data() + offset;
      uint64_t segments = uint64_t(read_le32(p)) + 1;
      if (segments > limits_.max_segments) {
        reject(c, "frame has " + std::to_string(segments) + " segments; the limit is " +
                      std::to_string(limits_.max_segments));
        return offset > 0;
      }
      size_t header = (4 + 4 * segments + 7) & ~size_t(7);
      if (b.size() - offset < header) break;
      uint64_t words = 0;
      for (uint64_t i = 0; i < segments; ++i) words += read_le32(p + 4 + 4 * i);
      uint64_t total = header + words * 8;
      if (total > limits_.max_frame_bytes) {
        reject(c, "frame of " + std::to_string(total) + " bytes is larger than the limit of " +
                      std::to_string(limits_.max_frame_bytes) + " bytes");
        return offset > 0;
      }
      if (b.size() - offset < total) break;
      std::string frame = b.substr(offset, total);
      offset += total;
      ++c->in_flight;
      stat_in_flight_.fetch_add(1, std::memory_order_relaxed);
      c->last_activity = uv_now(&loop_);
      on_frame_(c->id, std::move(frame));
    }
    b.erase(0, offset);
    return offset > 0;
  }

  // Stops or resumes reading from `c` by its queued bytes and requests in flight.
  void update_flow(Connection* c) {
    if (c->closing) return;
    uint64_t now = uv_now(&loop_);
    if (c->over_limit && c->queued_bytes <= limits_.max_queued_bytes / 2) {
      c->over_limit = false;
    } else if (!c->over_limit && c->queued_bytes > limits_.max_queued_bytes) {
      c->over_limit = true;
      c->over_since = now;
    }
    if (c->paused && !blocked(c) && !c->buffer.empty()) {
      // Frames that arrived before the pause go first; they may block the connection again.
      extract_frames(c);
      if (c->closing) return;
    }
    auto* stream = reinterpret_cast<uv_stream_t*>(&c->tcp);
    if (blocked(c) && !c->paused) {
      uv_read_stop(stream);
      c->paused = true;
      stat_paused_.fetch_add(1, std::memory_order_relaxed);
    } else if (!blocked(c) && c->paused) {
      c->paused = false;
      stat_paused_.fetch_sub(1, std::memory_order_relaxed);
      // The pause was ours: the client's rest of a frame gets a full frame_timeout again.
      c->frame_started = now;
      if (uv_read_start(stream, &UvGateway::on_alloc, &UvGateway::on_read) != 0) close_hard(c);
    }
  }

  void reject(Connection* c, const std::string& message) {
    c->buffer.clear();
    write(c, framing_error_response(true, message));
    close_gracefully(c);
  }

  void write(Connection* c, std::string data) {
    std::vector<std::string> one;
    one.push_back(std::move(data));
    write(c, std::move(one));
  }

  void write(Connection* c, std::vector<std::string> frames) {
    auto* w = new WriteRequest;
    w->data = std::move(frames);
    w->connection = c;
    w->req.data = w;
    std::vector<uv_buf_t> bufs;
    bufs.reserve(w->data.size());
    for (auto& f : w->data) {
      bufs.push_back(uv_buf_init(f.data(), static_cast<unsigned>(f.size())));
      w->size += f.size();
    }
    const size_t size = w->size;
    int rc = uv_write(&w->req, reinterpret_cast<uv_stream_t*>(&c->tcp), bufs.data(),
                      static_cast<unsigned>(bufs.size()), &UvGateway::on_written);
    if (rc != 0) {
      delete w;
      close_hard(c);
      return;
    }
    c->queued_bytes += size;
    stat_queued_.fetch_add(size, std::memory_order_relaxed);
  }

  // Also runs, with UV_ECANCELED, for writes still queued when the handle closes (before the close
  // callback frees the connection).
  static void on_written(uv_write_t* req, int status) {
    auto* w = static_cast<WriteRequest*>(req->data);
    Connection* c = w->connection;
    UvGateway* self = c->gateway;
    size_t size = w->size;
    delete w;
    c->queued_bytes -= size;
    self->stat_queued_.fetch_sub(size, std::memory_order_relaxed);
    if (status < 0) {
      self->close_hard(c);
      return;
    }
    c->last_activity = uv_now(&self->loop_);
    self->update_flow(c);
  }

  static void on_sweep(uv_timer_t* timer) { static_cast<UvGateway*>(timer->data)->sweep(); }

  void sweep() {
    uint64_t now = uv_now(&loop_);
    uint64_t frame_ms = to_ms(limits_.frame_timeout), idle_ms = to_ms(limits_.idle_timeout),
             slow_ms = to_ms(limits_.slow_reader_timeout);
    // Loop times are whole milliseconds, truncated: a difference of exactly the limit may be up to
    // 1 ms short of it, so a timeout fires only once the difference is past the limit.
    auto expired = [now](uint64_t since, uint64_t limit) {
      return limit > 0 && now - since > limit;
    };
    // Closing never erases from connections_ at once (that waits for the close callbacks).
    for (auto& [id, owned] : connections_) {
      Connection* c = owned.get();
      if (c->closing) {
        // uv_shutdown waits for the queued writes, which a peer that does not read never takes.
        if (!c->linger_started && expired(c->closing_since, slow_ms)) close_hard(c);
        continue;
      }
      if (c->over_limit && expired(c->over_since, slow_ms)) {
        stat_slow_reader_.fetch_add(1, std::memory_order_relaxed);
        spdlog::info("gateway closes connection {}: {} response bytes unread for {} ms", c->id,
                     c->queued_bytes, now - c->over_since);
        close_hard(c);
      } else if (!c->paused && !c->buffer.empty() && expired(c->frame_started, frame_ms)) {
        stat_frame_timeout_.fetch_add(1, std::memory_order_relaxed);
        spdlog::debug("gateway closes connection {}: incomplete frame for {} ms", c->id,
                      now - c->frame_started);
        std::string message = "incomplete frame: " + std::to_string(c->buffer.size()) +
                              " bytes of it arrived and no more within " +
                              std::to_string(frame_ms) + " ms";
        c->buffer.clear();
        write(c, framing_error_response(false, message));
        close_gracefully(c);
      } else if (c->in_flight == 0 && c->queued_bytes == 0 && c->buffer.empty() &&
                 expired(c->last_activity, idle_ms)) {
        stat_idle_.fetch_add(1, std::memory_order_relaxed);
        spdlog::debug("gateway closes connection {}: idle for {} ms", c->id,
                      now - c->last_activity);
        close_gracefully(c);
      }
    }
  }

  // Our FIN goes out after the queued writes (uv_shutdown waits for them); then drain until the
  // peer closes or the linger time runs out.
  void close_gracefully(Connection* c) {
    if (c->closing) return;
    c->closing = true;
    c->closing_since = uv_now(&loop_);
    c->buffer.clear();
    c->buffer.shrink_to_fit();
    if (c->paused) {
      // Draining needs reads on: unread input at close would reset the connection.
      c->paused = false;
      stat_paused_.fetch_sub(1, std::memory_order_relaxed);
      if (uv_read_start(reinterpret_cast<uv_stream_t*>(&c->tcp), &UvGateway::on_alloc,
                        &UvGateway::on_read) != 0) {
        close_hard(c);
        return;
      }
    }
    auto* req = new uv_shutdown_t;
    req->data = c;
    int rc =
        uv_shutdown(req, reinterpret_cast<uv_stream_t*>(&c->tcp), [](uv_shutdown_t* r, int st) {
          auto* conn = static_cast<Connection*>(r->data);
          delete r;
          if (st < 0 || uv_is_closing(reinterpret_cast<uv_handle_t*>(&conn->tcp))) {
            conn->gateway->close_hard(conn);
            return;
          }
          conn->gateway->start_linger(conn);
        });
    if (rc != 0) {
      delete req;
      close_hard(c);
    }
  }

  void start_linger(Connection* c) {
    uv_timer_init(&loop_, &c->linger);
    c->linger.data = c;
    c->linger_started = true;
    ++c->open_handles;
    uv_timer_start(
        &c->linger,
        [](uv_timer_t* t) {
          auto* conn = static_cast<Connection*>(t->data);
          conn->gateway->close_hard(conn);
        },
        kLingerMs, 0);
  }

  void close_hard(Connection* c) {
    if (!c->closing) c->closing_since = uv_now(&loop_);
    c->closing = true;
    if (c->paused) {
      c->paused = false;
      stat_paused_.fetch_sub(1, std::memory_order_relaxed);
    }
    auto closed = [](uv_handle_t* h) {
      auto* conn = static_cast<Connection*>(h->data);
      if (--conn->open_handles == 0) conn->gateway->forget(conn);
    };
    auto* tcp = reinterpret_cast<uv_handle_t*>(&c->tcp);
    if (!uv_is_closing(tcp)) uv_close(tcp, closed);
    auto* timer = reinterpret_cast<uv_handle_t*>(&c->linger);
    if (c->linger_started && !uv_is_closing(timer)) uv_close(timer, closed);
  }

  void forget(Connection* c) {
    stat_in_flight_.fetch_sub(c->in_flight, std::memory_order_relaxed);
    stat_connections_.fetch_sub(1, std::memory_order_relaxed);
    if (c->slot == Connection::Slot::Admitted) {
      --admitted_;
      if (!c->address.empty()) {
        auto it = per_address_.find(c->address);
        if (it != per_address_.end() && --it->second == 0) per_address_.erase(it);
      }
    } else if (c->slot == Connection::Slot::Refused) {
      --refusing_;
    }
    const uint64_t id = c->id;
    connections_.erase(id);
    if (on_close_) on_close_(id);
  }

  GatewayLimits limits_;
  OnFrame on_frame_;
  OnClose on_close_;
  uv_loop_t loop_{};
  uv_tcp_t server_{};
  uv_async_t async_{};
  uv_timer_t sweep_{};
  std::thread thread_;
  uint16_t port_ = 0;
  std::string read_chunk_;

  std::mutex mutex_;  // guards stop_ and commands_
  bool stop_ = false;
  std::deque<Command> commands_;

  // Written on the loop thread only; read by stats() from any thread.
  std::atomic<size_t> stat_connections_{0}, stat_queued_{0}, stat_paused_{0}, stat_in_flight_{0};
  std::atomic<uint64_t> stat_refused_{0}, stat_refused_per_address_{0}, stat_idle_{0},
      stat_frame_timeout_{0}, stat_slow_reader_{0}, stat_slow_watcher_{0};

  // Loop thread only.
  uint64_t next_connection_ = 1;
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> connections_;
  std::vector<Connection*> touched_;  // connections with frames gathered in this wake-up
  size_t admitted_ = 0;               // connections in the table that count against max_connections
  size_t refusing_ = 0;               // refused ones still sending their refusal or lingering
  // Admitted connections per peer address (an address with none has no entry).
  std::unordered_map<std::string, size_t> per_address_;
  int spare_fd_ = -1;  // given up to accept-and-drop when descriptors run out
  uint64_t last_refusal_log_ = 0, refusals_unlogged_ = 0, refusals_per_address_unlogged_ = 0,
           last_emfile_log_ = 0;
  std::string last_refused_address_;
};

}  // namespace

Result<std::unique_ptr<Gateway>> Gateway::start(const std::string& host, uint16_t port,
                                                GatewayLimits limits, OnFrame on_frame,
                                                OnClose on_close) {
  auto gateway = std::make_unique<UvGateway>(limits, std::move(on_frame), std::move(on_close));
  int rc = gateway->listen(host, port);
  if (rc != 0) {
    return Failure{"cannot listen on " + host + ":" + std::to_string(port) + ": " +
                   uv_strerror(rc)};
  }
  gateway->run();
  return std::unique_ptr<Gateway>(std::move(gateway));
}

std::string framing_error_response(bool too_large, const std::string& message) {
  return error_frame(too_large ? api::Error::Code::TOO_LARGE : api::Error::Code::MALFORMED,
                     message);
}

std::string unavailable_response(const std::string& message) {
  return error_frame(api::Error::Code::UNAVAILABLE, message);
}

}  // namespace caldera
