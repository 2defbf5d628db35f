// The client bridge: a request the coordinator leaves unanswered gets `unavailable` after the
// timeout, once, and the coordinator's late answer does not reach the client a second time.
#include "node/client_bridge.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <capnp/message.h>
#include <caf/all.hpp>

#include "actors/protocol/atoms.hpp"
#include "messages/api.capnp.h"
#include "messages/flat.hpp"
#include "tests/api_requests.hpp"

namespace caldera {
namespace {

using namespace std::chrono_literals;

// Collects what the bridge writes back.
class FakeGateway : public Gateway {
 public:
  uint16_t port() const override { return 0; }
  void send(uint64_t connection, std::string frame) override {
    std::lock_guard lock(mu_);
    sent_.emplace_back(connection, std::move(frame));
    cv_.notify_all();
  }
  void close(uint64_t, std::string) override {}
  GatewayStats stats() const override { return {}; }

  // The frames sent so far, once there are at least n (or at the deadline).
  std::vector<std::pair<uint64_t, std::string>> wait(size_t n, std::chrono::milliseconds limit) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, limit, [&] { return sent_.size() >= n; });
    return sent_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::pair<uint64_t, std::string>> sent_;
};

// A coordinator that holds every request until told to answer them all.
struct SilentState {
  std::vector<caf::response_promise> held;
};
caf::behavior silent_coordinator(caf::stateful_actor<SilentState>* self) {
  return {
      [=](api_atom, const std::string&) -> caf::result<std::string> {
        self->state.held.push_back(self->make_response_promise());
        return self->state.held.back();
      },
      [=](caf::ok_atom) {
        for (auto& rp : self->state.held) rp.deliver(std::string("late"));
        self->state.held.clear();
      },
  };
}

TEST(ClientBridge, AnUnansweredRequestIsUnavailableOnceAndALateAnswerIsDropped) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  FakeGateway gateway;
  auto sink = std::make_shared<ReplySink>();
  sink->attach(&gateway);
  auto coordinator = sys.spawn(silent_coordinator);
  auto bridge = spawn_client_bridge(sys, sink, coordinator, "", 500ms);

  auto start = std::chrono::steady_clock::now();
  caf::anon_send(bridge, frame_atom::value, uint64_t{7}, testing::ping_request(42));
  auto sent = gateway.wait(1, 5s);
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_GE(took, 500ms);
  EXPECT_LT(took, 2500ms) << "checked once a second";
  EXPECT_EQ(sent[0].first, 7u);
  FlatReader reader(sent[0].second);
  auto resp = reader.root<api::Response>();
  EXPECT_EQ(resp.getId(), 42u);
  ASSERT_TRUE(resp.isErrors());
  EXPECT_EQ(resp.getErrors()[0].getCode(), api::Error::Code::UNAVAILABLE);

  caf::anon_send(coordinator, caf::ok_atom::value);  // the late answer
  EXPECT_EQ(gateway.wait(2, 300ms).size(), 1u);

  sink->attach(nullptr);
  caf::anon_send_exit(bridge, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(coordinator, caf::exit_reason::user_shutdown);
}

}  // namespace
}  // namespace caldera
