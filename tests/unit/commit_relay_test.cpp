// The commit relay: a group commit's completions run in order inside the actor system, and the
// committing actors hear of their writes from it (and without it, as before).
#include "actors/store/commit_relay.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

#include <caf/all.hpp>

#include <filesystem>
#include "storage/store.hpp"

namespace caldera {
namespace {

using namespace std::chrono_literals;

// Collects the (id, error) of the commits it hears of.
struct Heard {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<uint64_t, std::string>> got;
  bool wait_for(size_t n) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, 5s, [&] { return got.size() >= n; });
  }
};

caf::behavior listener(caf::event_based_actor*, std::shared_ptr<Heard> heard) {
  return {
      [=](committed_atom, uint64_t id, const std::string& error) {
        std::lock_guard lock(heard->mu);
        heard->got.emplace_back(id, error);
        heard->cv.notify_all();
      },
  };
}

TEST(CommitRelay, AStoreBatchsCompletionsReachTheirActorsInOrder) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto heard = std::make_shared<Heard>();
  auto me = sys.spawn(listener, heard);
  auto relay = spawn_commit_relay(sys);
  std::string dir = "/tmp/caldera-relay-XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  StoreOptions options;
  options.sync = false;
  size_t batches = 0;
  options.deliver = [&](Completions batch) {
    ++batches;
    relay_completions(relay, std::move(batch));
  };
  auto store = Store::open(dir + "/db", options);
  ASSERT_TRUE(store) << store.error();
  for (uint64_t i = 1; i <= 50; ++i)
    (*store)->commit({Write{Family::Meta, "k" + std::to_string(i), std::string("v")}},
                     [me, i](std::string error) { notify_committed(me, i, std::move(error)); });
  ASSERT_TRUE(heard->wait_for(50));
  std::lock_guard lock(heard->mu);
  for (uint64_t i = 0; i < 50; ++i) {
    EXPECT_EQ(heard->got[i].first, i + 1);
    EXPECT_EQ(heard->got[i].second, "");
  }
  EXPECT_GE(batches, 1u);
  store->reset();
  std::filesystem::remove_all(dir);
  caf::anon_send_exit(relay, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(me, caf::exit_reason::user_shutdown);
}

TEST(CommitRelay, OutsideTheRelayANotificationIsAnOrdinarySend) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto heard = std::make_shared<Heard>();
  auto me = sys.spawn(listener, heard);
  notify_committed(me, uint64_t{7}, std::string("disk full"));
  ASSERT_TRUE(heard->wait_for(1));
  std::lock_guard lock(heard->mu);
  EXPECT_EQ(heard->got[0], std::make_pair(uint64_t{7}, std::string("disk full")));
  caf::anon_send_exit(me, caf::exit_reason::user_shutdown);
}

}  // namespace
}  // namespace caldera
