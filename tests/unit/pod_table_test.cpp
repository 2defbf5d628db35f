// The pod table's census and lists, kept up by what changed, against a count of every pod.
#include <gtest/gtest.h>

#include <random>

#include "actors/job/core/pod_table.hpp"

namespace caldera {
namespace {

PodCensus count_all(const PodTable& t) {
  PodCensus out;
  for (const auto& [name, p] : t) {
    auto& c = out[{p.task_name, p.job_version}];
    PodTable one;
    one.emplace(name, p);
    c.add(one.census().begin()->second, +1);
  }
  return out;
}

std::vector<std::string> names(const std::vector<const Pod*>& pods) {
  std::vector<std::string> out;
  for (const Pod* p : pods) out.push_back(p->name);
  return out;
}

std::vector<std::string> brute(const PodTable& t, bool (*wanted)(const Pod&)) {
  std::vector<std::string> out;
  for (const auto& [name, p] : t)
    if (wanted(p)) out.push_back(name);
  return out;
}

TEST(PodTable, TheCensusAndListsMatchACountOfEveryPodThroughRandomChanges) {
  std::mt19937 rng(7);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  PodTable t;
  PodTable::Changes held;  // changes taken for a write not yet known to have worked
  bool holding = false;
  for (int step = 0; step < 4000; ++step) {
    const std::string name = "p" + std::to_string(pick(60));
    switch (pick(9)) {
      case 0: {
        Pod p;
        p.name = name;
        p.task_name = pick(2) ? "a" : "b";
        p.job_version = pick(2);
        t.emplace(name, p);
        break;
      }
      case 1:
        t.erase(name);
        break;
      case 2:
      case 3: {
        auto it = t.find(name);  // non-const: a write through it is seen
        if (it == t.end()) break;
        it->second.phase = static_cast<PodPhase>(pick(5));
        it->second.out_of_sync = pick(4) == 0;
        break;
      }
      case 4: {
        auto it = std::as_const(t).find(name);
        if (it == t.cend()) break;
        Pod& p = t.edit(it);
        p.node = pick(2) ? "n1" : "";
        // Held across a census read, then written again: must still be seen.
        (void)t.census();
        p.phase = pick(2) ? PodPhase::Pending : PodPhase::Running;
        break;
      }
      case 5:
        if (holding) {
          t.restore(std::move(held));  // the write failed
          holding = false;
        } else {
          held = t.take_changes();
          holding = true;
        }
        break;
      case 6:
        if (pick(10) == 0)
          for (auto& [n, p] : t) p.job_version = 2;  // non-const iteration: everything changed
        break;
      default:
        t.take_changes();
        holding = false;
        break;
    }
    ASSERT_EQ(t.census(), count_all(t)) << "step " << step;
    ASSERT_EQ(names(t.waiting()), brute(t, is_waiting_for_node)) << "step " << step;
    ASSERT_EQ(names(t.placed_pending()), brute(t, is_placed_pending)) << "step " << step;
  }
}

TEST(PodTable, WaitingStopsAtItsLimit) {
  PodTable t;
  for (int i = 0; i < 10; ++i) {
    Pod p;
    p.name = "p" + std::to_string(i);
    t.emplace(p.name, p);
  }
  EXPECT_EQ(t.waiting(3).size(), 3u);
  t.take_changes();
  EXPECT_EQ(names(t.waiting(3)), (std::vector<std::string>{"p0", "p1", "p2"}));
}

}  // namespace
}  // namespace caldera
