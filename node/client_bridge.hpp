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

 private:
  std::mutex mu_;
  Gateway* gateway_ = nullptr;
};

// Messages: (frame_atom, connection, frame bytes). `token`: when not empty, requests must carry it.
// A request the coordinator has not answered within `timeout` is answered `unavailable` (checked
// once a second); the coordinator's answer after that is dropped.
caf::actor spawn_client_bridge(caf::actor_system& sys, std::shared_ptr<ReplySink> sink,
                               caf::actor coordinator, std::string token,
                               std::chrono::milliseconds timeout = std::chrono::seconds(60));

}  // namespace caldera
