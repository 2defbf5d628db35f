#include "actors/job/core/pod_table.hpp"

#include <algorithm>

namespace caldera {
namespace {

PodCounts contribution(const Pod& p) {
  PodCounts c;
  c.total = 1;
  const bool ended = is_terminal(p.phase);
  if (p.out_of_sync) {
    (ended ? c.discarded : c.terminating) = 1;
  } else {
    switch (p.phase) {
      case PodPhase::Pending:
        c.pending = 1;
        break;
      case PodPhase::Running:
        c.running = 1;
        break;
      case PodPhase::Succeeded:
        c.succeeded = 1;
        break;
      case PodPhase::Failed:
        c.failed = 1;
        break;
      case PodPhase::Unknown:
        c.unknown = 1;
        break;
    }
  }
  c.bound = !p.node.empty() && !(p.out_of_sync && ended);
  c.waiting = is_waiting_for_node(p);
  c.placed_pending = is_placed_pending(p);
  return c;
}

void add_to(PodCensus& census, const Pod& p, int sign) {
  auto key = std::make_pair(p.task_name, p.job_version);
  auto& c = census[key];
  c.add(contribution(p), sign);
  if (c.total == 0) census.erase(key);
}

}  // namespace

bool is_waiting_for_node(const Pod& p) {
  return p.node.empty() && p.phase == PodPhase::Pending && !p.out_of_sync;
}

bool is_placed_pending(const Pod& p) {
  return !p.node.empty() && p.phase == PodPhase::Pending && !p.out_of_sync;
}

PodCounts& PodCounts::add(const PodCounts& o, int sign) {
  total += sign * o.total;
  pending += sign * o.pending;
  running += sign * o.running;
  succeeded += sign * o.succeeded;
  failed += sign * o.failed;
  unknown += sign * o.unknown;
  terminating += sign * o.terminating;
  discarded += sign * o.discarded;
  bound += sign * o.bound;
  waiting += sign * o.waiting;
  placed_pending += sign * o.placed_pending;
  return *this;
}

void PodTable::count_in(const Pod& p, int sign) {
  add_to(settled_, p, sign);
  for (auto [list, wanted] : {std::pair{&waiting_, is_waiting_for_node(p)},
                              std::pair{&placed_pending_, is_placed_pending(p)}}) {
    if (!wanted) continue;
    if (sign > 0)
      list->insert(p.name);
    else
      list->erase(p.name);
  }
}

void PodTable::touch(const std::string& name) {
  if (changes_.all || !changes_.names.insert(name).second) return;
  auto it = map_.find(name);
  if (it != map_.end()) count_in(it->second, -1);
}

void PodTable::settle_all() {
  settled_.clear();
  waiting_.clear();
  placed_pending_.clear();
  for (const auto& [name, p] : map_) count_in(p, +1);
}

PodTable::Changes PodTable::take_changes() {
  auto taken = std::exchange(changes_, Changes{});
  if (taken.all) {
    settle_all();
  } else {
    for (const auto& name : taken.names) {
      auto it = map_.find(name);
      if (it != map_.end()) count_in(it->second, +1);
    }
  }
  return taken;
}

void PodTable::restore(Changes taken) {
  for (auto& name : taken.unstored) stored_.insert(std::move(name));
  if (taken.all) changes_.all = true;
  for (const auto& name : taken.names) touch(name);
}

PodCensus PodTable::census() const {
  if (changes_.all) {
    PodCensus all;
    for (const auto& [name, p] : map_) add_to(all, p, +1);
    return all;
  }
  PodCensus out = settled_;
  for (const auto& name : changes_.names) {
    auto it = map_.find(name);
    if (it != map_.end()) add_to(out, it->second, +1);
  }
  return out;
}

std::vector<const Pod*> PodTable::listed(const std::set<std::string>& settled,
                                         bool (*wanted)(const Pod&), size_t limit) const {
  std::vector<const Pod*> out;
  if (changes_.all) {
    for (auto it = map_.begin(); it != map_.end() && out.size() < limit; ++it)
      if (wanted(it->second)) out.push_back(&it->second);
    return out;
  }
  // Both in name order: merged, the list stays in name order.
  auto a = settled.begin();
  auto b = changes_.names.begin();
  auto take_changed = [&] {
    auto it = map_.find(*b++);
    if (it != map_.end() && wanted(it->second)) out.push_back(&it->second);
  };
  while (out.size() < limit && (a != settled.end() || b != changes_.names.end())) {
    if (b == changes_.names.end() || (a != settled.end() && *a < *b))
      out.push_back(&map_.at(*a++));
    else
      take_changed();
  }
  return out;
}

std::vector<const Pod*> PodTable::waiting(size_t limit) const {
  return listed(waiting_, is_waiting_for_node, limit);
}

std::vector<const Pod*> PodTable::placed_pending() const {
  return listed(placed_pending_, is_placed_pending, SIZE_MAX);
}

}  // namespace caldera
