// The timer actor on a real actor system: every tick arrives, in the order of its due time, and
// none before it is due by the wall clock.
#include "actors/timer/timer_actor.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include <caf/all.hpp>

#include "actors/protocol/atoms.hpp"

namespace caldera {
namespace {

int64_t wall_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

TEST(TimerActor, WakesEachActorAtItsDueTimeInOrder) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto timer = spawn_timer(sys);
  caf::scoped_actor self{sys};
  auto now = wall_ms();
  // Out of order, one already past, two at the same time.
  std::vector<int64_t> asked{now + 60, now + 20, now - 5, now + 40, now + 20};
  for (auto due : asked)
    self->send(timer, tick_atom::value, due, caf::actor_cast<caf::actor>(self));
  std::vector<int64_t> got;
  for (size_t i = 0; i < asked.size(); ++i) {
    self->receive(
        [&](tick_atom, int64_t due) {
          EXPECT_GE(wall_ms(), due) << "a tick came before its time";
          got.push_back(due);
        },
        caf::after(std::chrono::seconds(5)) >> [&] { ADD_FAILURE() << "a tick never came"; });
  }
  EXPECT_EQ(got, (std::vector<int64_t>{now - 5, now + 20, now + 20, now + 40, now + 60}));
  caf::anon_send_exit(timer, caf::exit_reason::user_shutdown);
}

// An earlier due time asked for after a later one is armed still comes first, on time.
TEST(TimerActor, AnEarlierDueTimeArmsTheClockAgain) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto timer = spawn_timer(sys);
  caf::scoped_actor self{sys};
  auto me = caf::actor_cast<caf::actor>(self);
  auto now = wall_ms();
  self->send(timer, tick_atom::value, now + 10000, me);
  self->send(timer, tick_atom::value, now + 30, me);
  self->receive([&](tick_atom, int64_t due) { EXPECT_EQ(due, now + 30); },
                caf::after(std::chrono::seconds(2)) >>
                    [&] { ADD_FAILURE() << "the earlier tick waited for the later one"; });
  caf::anon_send_exit(timer, caf::exit_reason::user_shutdown);
}

}  // namespace
}  // namespace caldera
