#include "node/gateway.hpp"

#include <netdb.h>
#include <sys/socket.h>
#include <uv.h>

#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>

#include <capnp/message.h>

#include "messages/api.capnp.h"
#include "messages/flat.hpp"

namespace caldera {
namespace {

// After a graceful close (our FIN sent), keep draining what the peer still sends for this long:
// closing a socket with unread input makes the kernel send RST, which can destroy the last
// response (say, a tooLarge error) before the peer reads it.
constexpr uint64_t kLingerMs = 1000;
constexpr size_t kReadChunk = 64 * 1024;

uint32_t read_le32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return uint32_t(u[0]) | uint32_t(u[1]) << 8 | uint32_t(u[2]) << 16 | uint32_t(u[3]) << 24;
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
  std::string buffer;
};

struct WriteRequest {
  uv_write_t req{};
  std::string data;
  Connection* connection = nullptr;
};

struct Command {
  uint64_t connection;
  std::string frame;
  bool close;
};

class UvGateway final : public Gateway {
 public:
  UvGateway(GatewayLimits limits, OnFrame on_frame)
      : limits_(limits), on_frame_(std::move(on_frame)) {
    read_chunk_.resize(kReadChunk);
    uv_loop_init(&loop_);
    uv_tcp_init(&loop_, &server_);
    server_.data = this;
    uv_async_init(&loop_, &async_, &UvGateway::on_async);
    async_.data = this;
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
    rc = uv_listen(reinterpret_cast<uv_stream_t*>(&server_), 128, &UvGateway::on_connection);
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
    thread_ = std::thread([this] { uv_run(&loop_, UV_RUN_DEFAULT); });
  }

  uint16_t port() const override { return port_; }

  void send(uint64_t connection, std::string frame) override {
    enqueue(Command{connection, std::move(frame), false});
  }

  void close(uint64_t connection, std::string last_frame) override {
    enqueue(Command{connection, std::move(last_frame), true});
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
  }

  void execute(Command& command) {
    auto it = connections_.find(command.connection);
    if (it == connections_.end() || it->second->closing) return;
    Connection* c = it->second.get();
    if (!command.frame.empty()) write(c, std::move(command.frame));
    if (command.close) close_gracefully(c);
  }

  void close_everything() {
    for (auto& [id, c] : connections_) close_hard(c.get());
    if (!uv_is_closing(reinterpret_cast<uv_handle_t*>(&server_))) {
      uv_close(reinterpret_cast<uv_handle_t*>(&server_), nullptr);
    }
    if (!uv_is_closing(reinterpret_cast<uv_handle_t*>(&async_))) {
      uv_close(reinterpret_cast<uv_handle_t*>(&async_), nullptr);
    }
  }

  static void on_connection(uv_stream_t* server, int status) {
    auto* self = static_cast<UvGateway*>(server->data);
    if (status < 0) return;
    if (self->connections_.size() >= self->limits_.max_connections) {
      // Accept and drop at once, so the peer sees a closed connection instead of hanging.
      auto* tcp = new uv_tcp_t;
      uv_tcp_init(&self->loop_, tcp);
      uv_accept(server, reinterpret_cast<uv_stream_t*>(tcp));
      uv_close(reinterpret_cast<uv_handle_t*>(tcp),
               [](uv_handle_t* h) { delete reinterpret_cast<uv_tcp_t*>(h); });
      return;
    }
    auto owned = std::make_unique<Connection>();
    Connection* c = owned.get();
    c->gateway = self;
    c->id = self->next_connection_++;
    uv_tcp_init(&self->loop_, &c->tcp);
    c->tcp.data = c;
    c->open_handles = 1;
    self->connections_.emplace(c->id, std::move(owned));
    auto* stream = reinterpret_cast<uv_stream_t*>(&c->tcp);
    if (uv_accept(server, stream) != 0) {
      self->close_hard(c);
      return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    if (uv_read_start(stream, &UvGateway::on_alloc, &UvGateway::on_read) != 0) self->close_hard(c);
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
    c->buffer.append(buf->base, static_cast<size_t>(nread));
    self->extract_frames(c);
  }

  void extract_frames(Connection* c) {
    std::string& b = c->buffer;
    size_t offset = 0;
    while (!c->closing && b.size() - offset >= 4) {
      const char* p = b.data() + offset;
      uint64_t segments = uint64_t(read_le32(p)) + 1;
      if (segments > limits_.max_segments) {
        reject(c, "frame has " + std::to_string(segments) + " segments; the limit is " +
                      std::to_string(limits_.max_segments));
        return;
      }
      size_t header = (4 + 4 * segments + 7) & ~size_t(7);
      if (b.size() - offset < header) break;
      uint64_t words = 0;
      for (uint64_t i = 0; i < segments; ++i) words += read_le32(p + 4 + 4 * i);
      uint64_t total = header + words * 8;
      if (total > limits_.max_frame_bytes) {
        reject(c, "frame of " + std::to_string(total) + " bytes is larger than the limit of " +
                      std::to_string(limits_.max_frame_bytes) + " bytes");
        return;
      }
      if (b.size() - offset < total) break;
      std::string frame = b.substr(offset, total);
      offset += total;
      on_frame_(c->id, std::move(frame));
    }
    b.erase(0, offset);
  }

  void reject(Connection* c, const std::string& message) {
    c->buffer.clear();
    write(c, framing_error_response(true, message));
    close_gracefully(c);
  }

  void write(Connection* c, std::string data) {
    auto* w = new WriteRequest;
    w->data = std::move(data);
    w->connection = c;
    w->req.data = w;
    uv_buf_t buf = uv_buf_init(w->data.data(), static_cast<unsigned>(w->data.size()));
    int rc =
        uv_write(&w->req, reinterpret_cast<uv_stream_t*>(&c->tcp), &buf, 1, &UvGateway::on_written);
    if (rc != 0) {
      delete w;
      close_hard(c);
    }
  }

  static void on_written(uv_write_t* req, int status) {
    auto* w = static_cast<WriteRequest*>(req->data);
    Connection* c = w->connection;
    delete w;
    if (status < 0) c->gateway->close_hard(c);
  }

  // Our FIN goes out after the queued writes (uv_shutdown waits for them); then drain until the
  // peer closes or the linger time runs out.
  void close_gracefully(Connection* c) {
    if (c->closing) return;
    c->closing = true;
    c->buffer.clear();
    c->buffer.shrink_to_fit();
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
    c->closing = true;
    auto closed = [](uv_handle_t* h) {
      auto* conn = static_cast<Connection*>(h->data);
      if (--conn->open_handles == 0) conn->gateway->connections_.erase(conn->id);
    };
    auto* tcp = reinterpret_cast<uv_handle_t*>(&c->tcp);
    if (!uv_is_closing(tcp)) uv_close(tcp, closed);
    auto* timer = reinterpret_cast<uv_handle_t*>(&c->linger);
    if (c->linger_started && !uv_is_closing(timer)) uv_close(timer, closed);
  }

  GatewayLimits limits_;
  OnFrame on_frame_;
  uv_loop_t loop_{};
  uv_tcp_t server_{};
  uv_async_t async_{};
  std::thread thread_;
  uint16_t port_ = 0;
  std::string read_chunk_;

  std::mutex mutex_;  // guards stop_ and commands_
  bool stop_ = false;
  std::deque<Command> commands_;

  // Loop thread only.
  uint64_t next_connection_ = 1;
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> connections_;
};

}  // namespace

Result<std::unique_ptr<Gateway>> Gateway::start(const std::string& host, uint16_t port,
                                                GatewayLimits limits, OnFrame on_frame) {
  auto gateway = std::make_unique<UvGateway>(limits, std::move(on_frame));
  int rc = gateway->listen(host, port);
  if (rc != 0) {
    return Failure{"cannot listen on " + host + ":" + std::to_string(port) + ": " +
                   uv_strerror(rc)};
  }
  gateway->run();
  return std::unique_ptr<Gateway>(std::move(gateway));
}

std::string framing_error_response(bool too_large, const std::string& message) {
  capnp::MallocMessageBuilder builder;
  auto response = builder.initRoot<api::Response>();
  response.setId(0);
  auto error = response.initErrors(1)[0];
  error.setCode(too_large ? api::Error::Code::TOO_LARGE : api::Error::Code::MALFORMED);
  error.setMessage(message);
  error.setPath("");
  return to_bytes(builder);
}

}  // namespace caldera
