// The client bridge: a request the coordinator leaves unanswered gets `unavailable` after the
// timeout, once, and the coordinator's late answer does not reach the client a second time.
#include "node/client_bridge.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include <capnp/message.h>
#include <caf/all.hpp>

#include "actors/protocol/atoms.hpp"
#include "messages/api.capnp.h"
#include "messages/codec/flat.hpp"
#include "tests/api_requests.hpp"

namespace caldera {
namespace {

using namespace std::chrono_literals;

// Collects what the bridge writes back (answers and pushes alike; `pushed` counts the latter).
class FakeGateway : public Gateway {
 public:
  uint16_t port() const override { return 0; }
  void send(uint64_t connection, std::string frame) override {
    std::lock_guard lock(mu_);
    sent_.emplace_back(connection, std::move(frame));
    cv_.notify_all();
  }
  void push(uint64_t connection, std::string frame) override {
    ++pushed;
    send(connection, std::move(frame));
  }
  std::atomic<int> pushed{0};
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

// A coordinator that accepts every watch, remembers it, and counts the watches ended.
struct WatchingState {
  std::vector<std::pair<uint64_t, caf::actor>> watches;  // (stream, bridge)
  std::vector<uint64_t> ended;
};
caf::behavior watching_coordinator(caf::stateful_actor<WatchingState>* self) {
  return {
      [=](watch_atom, const std::string& bytes, uint64_t stream, const caf::actor& bridge) {
        self->state.watches.emplace_back(stream, bridge);
        FlatReader reader(bytes);
        capnp::MallocMessageBuilder b;
        auto r = b.initRoot<api::Response>();
        r.setId(reader.root<api::Request>().getId());
        r.setOk();
        return to_bytes(b);
      },
      [=](unwatch_atom, const caf::actor&, uint64_t stream) {
        self->state.ended.push_back(stream);
      },
      // test -> coordinator: send an event on every watch; -> (watches, ended)
      [=](caf::ok_atom) {
        for (auto& [stream, bridge] : self->state.watches)
          self->send(bridge, watch_event_atom::value, stream, testing::ping_request(0));
        return std::make_pair(self->state.watches.size(), self->state.ended.size());
      },
  };
}

uint64_t id_of(const std::string& frame) {
  FlatReader reader(frame);
  return reader.root<api::Response>().getId();
}

bool is_ok(const std::string& frame) {
  FlatReader reader(frame);
  return reader.root<api::Response>().isOk();
}

// A bridge in front of the watching coordinator, on a fake gateway.
class BridgeWatch : public ::testing::Test {
 protected:
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  FakeGateway gateway;
  std::shared_ptr<ReplySink> sink = std::make_shared<ReplySink>();
  caf::actor coordinator = sys.spawn(watching_coordinator);
  caf::actor bridge;
  caf::scoped_actor me{sys};

  void SetUp() override {
    sink->attach(&gateway);
    bridge = spawn_client_bridge(sys, sink, coordinator, "", 5s);
  }
  void TearDown() override {
    sink->attach(nullptr);
    caf::anon_send_exit(bridge, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(coordinator, caf::exit_reason::user_shutdown);
  }
  // Pushes an event on every watch the coordinator holds; (watches held, watches ended).
  std::pair<size_t, size_t> ask() {
    std::pair<size_t, size_t> counts;
    me->request(coordinator, 5s, caf::ok_atom::value)
        .receive([&](std::pair<size_t, size_t> c) { counts = c; },
                 [&](caf::error& e) { ADD_FAILURE() << sys.render(e); });
    return counts;
  }
  bool eventually(const std::function<bool()>& fn) {
    for (int i = 0; i < 500; ++i) {
      if (fn()) return true;
      std::this_thread::sleep_for(10ms);
    }
    return fn();
  }
};

TEST_F(BridgeWatch, AWatchStreamsUntilCancelledAndThenAnswersItsRequestAndTheCancel) {
  caf::anon_send(bridge, frame_atom::value, uint64_t{3}, testing::watch_request(10, "jobs"));
  ASSERT_TRUE(eventually([&] { return ask().first == 1; }));
  // The accepted watch is not answered: it stays open; its event is pushed.
  auto sent = gateway.wait(1, 5s);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(gateway.pushed.load(), 1);
  EXPECT_EQ(sent[0].first, 3u);

  caf::anon_send(bridge, frame_atom::value, uint64_t{3}, testing::cancel_watch_request(11, 10));
  sent = gateway.wait(3, 5s);
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(id_of(sent[1].second), 10u);  // the watch's own, final answer
  EXPECT_TRUE(is_ok(sent[1].second));
  EXPECT_EQ(id_of(sent[2].second), 11u);
  EXPECT_TRUE(is_ok(sent[2].second));
  EXPECT_TRUE(eventually([&] { return ask().second == 1; }))
      << "the coordinator is told the watch ended";
  // Nothing more is pushed for it.
  EXPECT_EQ(gateway.wait(4, 300ms).size(), 3u);
  EXPECT_EQ(gateway.pushed.load(), 1);

  // Cancelling it again: it is not there.
  caf::anon_send(bridge, frame_atom::value, uint64_t{3}, testing::cancel_watch_request(12, 10));
  sent = gateway.wait(4, 5s);
  ASSERT_EQ(sent.size(), 4u);
  FlatReader reader(sent[3].second);
  ASSERT_TRUE(reader.root<api::Response>().isErrors());
  EXPECT_EQ(reader.root<api::Response>().getErrors()[0].getCode(), api::Error::Code::NOT_FOUND);
}

TEST_F(BridgeWatch, AConnectionHoldsAtMostItsLimitOfWatchesAndClosingItEndsThemAll) {
  const uint64_t limit = kMaxWatchesPerConnection;
  for (uint64_t id = 1; id <= limit + 1; ++id)
    caf::anon_send(bridge, frame_atom::value, uint64_t{5}, testing::watch_request(id, "pods"));
  // One watch on another connection is not affected by the first one's limit.
  caf::anon_send(bridge, frame_atom::value, uint64_t{6}, testing::watch_request(1, "pods"));
  auto sent = gateway.wait(1, 5s);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].first, 5u);
  EXPECT_EQ(id_of(sent[0].second), limit + 1);
  FlatReader reader(sent[0].second);
  ASSERT_TRUE(reader.root<api::Response>().isErrors());
  EXPECT_NE(std::string(reader.root<api::Response>().getErrors()[0].getMessage().cStr())
                .find(std::to_string(limit) + " watches"),
            std::string::npos);
  ASSERT_TRUE(eventually([&] { return ask().first == limit + 1; }))
      << "the limit's worth of watches, and the other connection's";

  caf::anon_send(bridge, closed_atom::value, uint64_t{5});
  EXPECT_TRUE(eventually([&] { return ask().second == limit; }))
      << "every watch of the closed connection ends, the other stays";
  EXPECT_EQ(ask().second, limit);
}

}  // namespace
}  // namespace caldera
