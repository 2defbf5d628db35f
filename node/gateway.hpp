// The client gateway: a libuv TCP server that frames Cap'n Proto requests and sends responses.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "messages/model/result.hpp"

namespace caldera {

struct GatewayLimits {
  size_t max_frame_bytes =
      16u << 20;  // larger frames get a tooLarge error and the connection closes
  uint32_t max_segments = 512;
  // Beyond it a new connection gets one `unavailable` error and is closed. calderad lowers it to
  // what its descriptor limit can hold.
  size_t max_connections = 4096;
  // The same per client address (the peer's IP, port aside), so that one client holding
  // connections open cannot take every place: a new one from an address that already has this
  // many open is refused the same way, and other addresses still get in.
  size_t max_connections_per_address = 2048;
  // Per connection: responses not yet written to the socket. Above it the gateway reads no more
  // requests from that client until half of it has drained, so a client that does not read its
  // responses cannot make the node hold them all in memory.
  size_t max_queued_bytes = 8u << 20;
  // Per connection: bytes queued by push() (a watch's events) beyond which the connection is
  // closed at once: a watcher that does not keep up is dropped, as Kubernetes drops a slow
  // watch, rather than letting the node buffer every change for it.
  size_t max_pushed_bytes = 64u << 20;
  // Per connection: requests handed to OnFrame and not yet answered. At it, reading pauses, so
  // one client cannot queue unbounded work behind the actors.
  size_t max_in_flight = 256;
  // Timeouts; zero: never. A connection in the middle of a frame for frame_timeout is closed (a
  // header that announces more bytes than ever arrive, a client sending a byte a second).
  std::chrono::milliseconds frame_timeout = std::chrono::seconds(10);
  // A connection with no complete frame and nothing owed to it for this long is closed.
  std::chrono::milliseconds idle_timeout = std::chrono::minutes(5);
  // A connection paused over max_queued_bytes (or closing with writes pending) for this long is
  // closed: its client is not reading.
  std::chrono::milliseconds slow_reader_timeout = std::chrono::seconds(30);
};

// A snapshot of the gateway's bookkeeping; counters since start are cumulative.
struct GatewayStats {
  size_t connections = 0;            // open sockets, refused and closing ones included
  size_t queued_bytes = 0;           // response bytes not yet written, over every connection
  size_t paused_connections = 0;     // not read from because of max_queued_bytes or max_in_flight
  size_t requests_in_flight = 0;     // handed to OnFrame, not yet answered
  uint64_t refused = 0;              // over max_connections
  uint64_t refused_per_address = 0;  // over max_connections_per_address (not in `refused`)
  uint64_t closed_idle = 0;
  uint64_t closed_frame_timeout = 0;
  uint64_t closed_slow_reader = 0;
  uint64_t closed_slow_watcher = 0;  // over max_pushed_bytes
};

class Gateway {
 public:
  // Called on the gateway thread with one complete frame (stream framing, any alignment). Reply
  // later, from any thread, with send() or close(); each frame is expected to get exactly one
  // reply (max_in_flight counts the frames not answered yet). Frames of one connection arrive in
  // order.
  using OnFrame = std::function<void(uint64_t connection, std::string frame)>;
  // Called on the gateway thread once a connection has closed, for whatever reason.
  using OnClose = std::function<void(uint64_t connection)>;

  // Binds host:port (port 0: the OS picks) and starts serving on its own thread.
  static Result<std::unique_ptr<Gateway>> start(const std::string& host, uint16_t port,
                                                GatewayLimits limits, OnFrame on_frame,
                                                OnClose on_close = {});
  virtual ~Gateway() = default;  // stops serving and closes every connection
  virtual uint16_t port() const = 0;
  // Thread-safe. Writes a framed message; a closed connection drops it silently.
  virtual void send(uint64_t connection, std::string frame) = 0;
  // Thread-safe. Writes a framed message that answers no request (a watch's event). If more
  // than max_pushed_bytes would then wait for the client, the connection is closed instead.
  virtual void push(uint64_t connection, std::string frame) = 0;
  // Thread-safe. Sends the frame (if any), then closes the connection.
  virtual void close(uint64_t connection, std::string last_frame = {}) = 0;
  // Thread-safe.
  virtual GatewayStats stats() const = 0;
};

// A Response with id 0 and one error, as the gateway sends for frames it cannot even parse.
std::string framing_error_response(bool too_large, const std::string& message);
// The same with code `unavailable`: the gateway refuses service now, a retry later may succeed.
std::string unavailable_response(const std::string& message);

}  // namespace caldera
