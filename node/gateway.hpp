// The client gateway: a libuv TCP server that frames Cap'n Proto requests and sends responses.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "messages/result.hpp"

namespace caldera {

struct GatewayLimits {
  size_t max_frame_bytes =
      16u << 20;  // larger frames get a tooLarge error and the connection closes
  uint32_t max_segments = 512;
  size_t max_connections = 1024;
};

class Gateway {
 public:
  // Called on the gateway thread with one complete frame (stream framing, any alignment). Reply
  // later, from any thread, with send(). Frames of one connection arrive in order.
  using OnFrame = std::function<void(uint64_t connection, std::string frame)>;

  // Binds host:port (port 0: the OS picks) and starts serving on its own thread.
  static Result<std::unique_ptr<Gateway>> start(const std::string& host, uint16_t port,
                                                GatewayLimits limits, OnFrame on_frame);
  virtual ~Gateway() = default;  // stops serving and closes every connection
  virtual uint16_t port() const = 0;
  // Thread-safe. Writes a framed message; a closed connection drops it silently.
  virtual void send(uint64_t connection, std::string frame) = 0;
  // Thread-safe. Sends the frame (if any), then closes the connection.
  virtual void close(uint64_t connection, std::string last_frame = {}) = 0;
};

// A Response with id 0 and one error, as the gateway sends for frames it cannot even parse.
std::string framing_error_response(bool too_large, const std::string& message);

}  // namespace caldera
