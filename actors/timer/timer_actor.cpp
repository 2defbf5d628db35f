#include "actors/timer/timer_actor.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>

#include <caf/all.hpp>

#include "actors/protocol/atoms.hpp"
#include "common/clock.hpp"

namespace caldera {

namespace {

struct TimerState {
  // due ms -> whom to wake. Weak: a deleted job's actor is not kept alive until its TTL's time.
  std::multimap<int64_t, caf::weak_actor_ptr> due;
  std::optional<int64_t> armed_for;  // the due time CAF's clock wakes us for
  static inline const char* name = "timer";
};

using TimerSelf = caf::stateful_actor<TimerState>;

void arm(TimerSelf* self) {
  auto& st = self->state;
  if (st.due.empty()) return;
  auto next = st.due.begin()->first;
  if (st.armed_for && *st.armed_for <= next) return;
  st.armed_for = next;
  auto delay = std::max<int64_t>(0, next - system_now_ms());
  self->delayed_send(self, std::chrono::milliseconds(delay), timer_atom::value, next);
}

caf::behavior timer(TimerSelf* self) {
  return {
      [=](tick_atom, int64_t due, const caf::actor& whom) {
        if (!whom) return;
        self->state.due.emplace(due, caf::actor_cast<caf::weak_actor_ptr>(whom));
        arm(self);
      },
      [=](timer_atom, int64_t armed) {
        auto& st = self->state;
        if (st.armed_for == armed) st.armed_for.reset();
        // CAF's clock is steady, the due times are wall-clock: whatever is not due yet by the
        // wall clock waits for the next arming.
        auto now = system_now_ms();
        auto end = st.due.upper_bound(now);
        for (auto it = st.due.begin(); it != end; ++it)
          if (auto whom = it->second.lock())
            self->send(caf::actor_cast<caf::actor>(whom), tick_atom::value, it->first);
        st.due.erase(st.due.begin(), end);
        arm(self);
      },
  };
}

}  // namespace

caf::actor spawn_timer(caf::actor_system& sys) {
  return sys.spawn<caf::lazy_init>(timer);
}

}  // namespace caldera
