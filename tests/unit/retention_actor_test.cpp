// History retention's actor on a real store, with a clock the test drives: it deletes, through
// the directory, exactly the settled jobs the policy says, oldest first, as time passes.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/history/retention_actor.hpp"
#include "actors/job/job_record.hpp"
#include "actors/protocol/atoms.hpp"
#include "temp_store.hpp"

namespace caldera::testing {
namespace {

using namespace std::chrono_literals;

class RetentionActor : public TempStoreTest {
 protected:
  void add_settled(int64_t finished_ms, const std::string& key) {
    std::promise<std::string> done;
    store_->commit({{Family::History, history_key(finished_ms, key), "uid-" + key},
                    counter_add(kFinishedJobsCounter, 1)},
                   [&](std::string e) { done.set_value(e); });
    ASSERT_EQ(done.get_future().get(), "");
  }

  // The directory's side: answers purges as done (deleting the row as a job's erase would)
  // until `count` have come, or none for `quiet`; the keys, in the order asked.
  std::vector<std::string> purges(caf::scoped_actor& directory, size_t count,
                                  std::chrono::milliseconds quiet = 5s) {
    std::vector<std::string> keys;
    bool more = true;
    while (more && keys.size() < count) {
      directory->receive(
          [&](purge_atom, const std::string& row, const std::string& uid) {
            auto parsed = parse_history_key(row);
            EXPECT_TRUE(parsed) << row;
            const std::string key = parsed ? parsed->second : row;
            EXPECT_EQ(uid, "uid-" + key);
            std::promise<std::string> done;
            store_->commit(
                {{Family::History, row, std::nullopt}, counter_add(kFinishedJobsCounter, -1)},
                [&](std::string e) { done.set_value(e); });
            EXPECT_EQ(done.get_future().get(), "");
            keys.push_back(key);
            return std::string();
          },
          caf::after(quiet) >> [&] { more = false; });
    }
    return keys;
  }
};

TEST_F(RetentionActor, MaxAgeDeletesWhatFinishedLongEnoughAgoAsTheClockMoves) {
  const int64_t t0 = 1'700'000'000'000;
  add_settled(t0, "ns/a");
  add_settled(t0 + 1000, "ns/b");
  add_settled(t0 + 2000, "ns/c");
  auto now = std::make_shared<std::atomic<int64_t>>(t0 + 2000);
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  caf::scoped_actor directory{sys};
  RetentionEnv env{store_,  caf::actor_cast<protocol::directory>(directory),
                   nullptr, RetentionPolicy{0, 1500},
                   20ms,    WallClock([now] { return now->load(); })};
  auto retention = spawn_retention(sys, env);
  // At t0 + 2000 only `a` finished 1500 ms ago or more.
  EXPECT_EQ(purges(directory, 1), std::vector<std::string>{"ns/a"});
  // Nothing else is due yet: ten passes go by without a purge.
  EXPECT_TRUE(purges(directory, 1, 200ms).empty());
  now->store(t0 + 3500);
  EXPECT_EQ(purges(directory, 2), (std::vector<std::string>{"ns/b", "ns/c"}));
  EXPECT_EQ(counter_value(*store_->get(Family::Meta, kFinishedJobsCounter)), 0);
  caf::anon_send_exit(retention, caf::exit_reason::user_shutdown);
}

// A count that a failed write left off (here 5 for 2 rows) is counted again at start: with
// maxFinishedJobs 1 only the older of the two goes.
TEST_F(RetentionActor, ACountLeftOffIsCountedAgainAtStart) {
  add_settled(1000, "ns/old");
  add_settled(2000, "ns/new");
  std::promise<std::string> done;
  store_->commit({counter_add(kFinishedJobsCounter, 3)}, [&](std::string e) { done.set_value(e); });
  ASSERT_EQ(done.get_future().get(), "");
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  caf::scoped_actor directory{sys};
  auto retention =
      spawn_retention(sys, RetentionEnv{store_, caf::actor_cast<protocol::directory>(directory),
                                        nullptr, RetentionPolicy{1, 0}, 20ms, WallClock()});
  EXPECT_EQ(purges(directory, 1), std::vector<std::string>{"ns/old"});
  EXPECT_TRUE(purges(directory, 1, 200ms).empty());
  EXPECT_EQ(counter_value(*store_->get(Family::Meta, kFinishedJobsCounter)), 1);
  caf::anon_send_exit(retention, caf::exit_reason::user_shutdown);
}

}  // namespace
}  // namespace caldera::testing
