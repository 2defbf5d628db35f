// The client bridge: takes each request frame from the gateway to the coordinator and writes the
// coordinator's answer back on the same connection.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include <caf/actor.hpp>

#include "node/gateway.hpp"

namespace caldera {

// The gateway as the bridge sees it: it may be gone at shutdown, after which replies are dropped.
class ReplySink {
 public:
  void attach(Gateway* g) {
    std::lock_guard<std::mutex> lock(mu_);
    gateway_ = g;
  }
  void send(uint64_t connection, std::string frame) {
    std::lock_guard<std::mutex> lock(mu_);
    if (gateway_) gateway_->send(connection, std::move(frame));
  }
  void push(uint64_t connection, std::string frame) {
    std::lock_guard<std::mutex> lock(mu_);
    if (gateway_) gateway_->push(connection, std::move(frame));
  }

 private:
  std::mutex mu_;
  Gateway* gateway_ = nullptr;
};

// Messages: (frame_atom, connection, frame bytes); (closed_atom, connection) once it closed.
// `token`: when not empty, requests must carry it. A request the coordinator has not answered
// within `timeout` is answered `unavailable` (checked once a second); the coordinator's answer
// after that is dropped.
// Watches: the bridge holds each one a connection opens (at most kMaxWatchesPerConnection) and
// pushes the directory's events for it (watch_event_atom) to the connection until the client
// cancels it (cancelWatch, answered here), the connection closes, or the coordinator goes away
// (the watch then ends with an `unavailable` error: the client watches again).
constexpr size_t kMaxWatchesPerConnection = 64;

caf::actor spawn_client_bridge(caf::actor_system& sys, std::shared_ptr<ReplySink> sink,
                               caf::actor coordinator, std::string token,
                               std::chrono::milliseconds timeout = std::chrono::seconds(60));

}  // namespace caldera
