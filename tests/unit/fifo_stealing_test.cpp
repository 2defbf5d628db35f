// FifoStealing: the actors a worker's own actors schedule run in the order they were scheduled.
#include "node/fifo_stealing.hpp"

#include <gtest/gtest.h>

#include <string>
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

}  // namespace
}  // namespace caldera
