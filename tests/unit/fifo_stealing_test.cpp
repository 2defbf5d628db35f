// FifoStealing: the actors a worker's own actors schedule run in the order they were scheduled,
// and one scheduled behind a backlog goes to a sleeping worker.
#include "node/fifo_stealing.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <caf/all.hpp>

namespace caldera {
namespace {

using go_atom = caf::atom_constant<caf::atom("go")>;

// Tells `to` its name when told to go.
caf::behavior named(caf::event_based_actor*, std::string name, caf::actor to) {
  return {
      [=](go_atom) { caf::anon_send(to, name); },
      [](caf::ok_atom) { return caf::ok_atom::value; },
  };
}

// Tells each of `them` to go, in order, from inside the actor system.
caf::behavior starter(caf::event_based_actor* self, std::vector<caf::actor> them) {
  return {
      [=](go_atom) {
        for (const auto& a : them) self->send(a, go_atom::value);
      },
  };
}

TEST(FifoStealing, ActorsScheduledFromAWorkerRunInTheOrderTheyWereScheduled) {
  caf::actor_system_config cfg;
  cfg.load<FifoStealingCoordinator>();
  cfg.set("scheduler.max-threads", size_t{1});
  caf::actor_system sys{cfg};
  caf::scoped_actor me{sys};
  std::vector<caf::actor> them;
  for (const char* name : {"first", "second", "third"}) {
    them.push_back(sys.spawn(named, std::string(name), caf::actor_cast<caf::actor>(me)));
    // Idle before the test: its next message schedules it afresh.
    me->request(them.back(), caf::infinite, caf::ok_atom::value)
        .receive([](caf::ok_atom) {}, [](caf::error&) {});
  }
  me->send(sys.spawn(starter, them), go_atom::value);
  // CAF's own work stealing puts each at the front of the worker's queue: third, second, first.
  std::vector<std::string> ran;
  for (int i = 0; i < 3; ++i)
    me->receive([&](const std::string& name) { ran.push_back(name); },
                caf::after(std::chrono::seconds(5)) >> [] {});
  EXPECT_EQ(ran, (std::vector<std::string>{"first", "second", "third"}));
}

// Where an actor ran, and that it did.
struct Ran {
  std::atomic<bool> done{false};
  std::thread::id on;
};

caf::behavior recorder(caf::event_based_actor*, std::shared_ptr<Ran> ran) {
  return {
      [=](go_atom) {
        ran->on = std::this_thread::get_id();
        ran->done = true;
      },
      [](caf::ok_atom) { return caf::ok_atom::value; },
  };
}

// Schedules `first` then `second` from its worker, then holds that worker until `second` has run
// (at most `hold`), and answers whether it ran on another thread meanwhile.
caf::behavior holder(caf::event_based_actor* self, caf::actor first, caf::actor second,
                     std::shared_ptr<Ran> second_ran, caf::timespan hold) {
  return {
      [=](go_atom) {
        self->send(first, go_atom::value);
        self->send(second, go_atom::value);
        auto deadline = std::chrono::steady_clock::now() + hold;
        while (!second_ran->done && std::chrono::steady_clock::now() < deadline)
          std::this_thread::yield();
        return second_ran->done && second_ran->on != std::this_thread::get_id();
      },
  };
}

TEST(FifoStealing, AnActorScheduledBehindABacklogRunsOnASleepingWorker) {
  caf::actor_system_config cfg;
  cfg.load<FifoStealingCoordinator>();
  cfg.set("scheduler.max-threads", size_t{2});
  // An idle worker sleeps at once and, left alone, would not look for work to steal within the
  // test: only the hand-over can wake it.
  cfg.set("work-stealing.aggressive-poll-attempts", size_t{0});
  cfg.set("work-stealing.moderate-poll-attempts", size_t{0});
  cfg.set("work-stealing.relaxed-sleep-duration", caf::timespan{std::chrono::seconds(60)});
  caf::actor_system sys{cfg};
  caf::scoped_actor me{sys};
  // `first` is queued on the holder's worker, so `second` would wait behind it, and behind the
  // holder, which does not let go until `second` has run or half a second has passed. The other
  // worker must be asleep by then: on a loaded machine it may still be on its way, so the test
  // tries a few times (without the hand-over, every try fails: nothing wakes that worker).
  bool handed_over = false;
  for (int attempt = 0; attempt < 5 && !handed_over; ++attempt) {
    auto first_ran = std::make_shared<Ran>(), second_ran = std::make_shared<Ran>();
    auto first = sys.spawn(recorder, first_ran);
    auto second = sys.spawn(recorder, second_ran);
    for (const auto& a : {first, second})  // idle before the test: a message schedules it afresh
      me->request(a, caf::infinite, caf::ok_atom::value)
          .receive([](caf::ok_atom) {}, [](caf::error&) {});
    auto hold = caf::timespan{std::chrono::milliseconds(500)};
    me->request(sys.spawn(holder, first, second, second_ran, hold), caf::infinite, go_atom::value)
        .receive([&](bool elsewhere) { handed_over = elsewhere; },
                 [&](caf::error& e) { ADD_FAILURE() << sys.render(e); });
  }
  EXPECT_TRUE(handed_over)
      << "the actor behind the backlog did not run on the other worker while the backlog lasted";
}

}  // namespace
}  // namespace caldera
