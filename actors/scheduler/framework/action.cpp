#include "actors/scheduler/framework/action.hpp"

#include <array>
#include <utility>

#include "actors/scheduler/actions/allocate/allocate.hpp"
#include "actors/scheduler/actions/backfill/backfill.hpp"
#include "actors/scheduler/actions/enqueue/enqueue.hpp"
#include "actors/scheduler/actions/preempt/preempt.hpp"
#include "actors/scheduler/actions/reclaim/reclaim.hpp"

namespace caldera::sched {

std::optional<Action> find_action(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, Action>, 5> actions{{
      {"enqueue", &enqueue_action},
      {"allocate", &allocate_action},
      {"preempt", &preempt_action},
      {"reclaim", &reclaim_action},
      {"backfill", &backfill_action},
  }};
  for (const auto& [n, a] : actions)
    if (n == name) return a;
  return std::nullopt;
}

}  // namespace caldera::sched
