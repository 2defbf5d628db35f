#include "actors/scheduler/core/placer.hpp"

namespace caldera {

Placer::Placer(sched::Policy policy) : policy_(std::move(policy)) {
  cache_.use_priority = policy_.priority;
}

Placer::Placer(sched::Scoring scoring) {
  policy_.options.scoring = sched::node_scoring(scoring);
}

void Placer::request(GangRequest r, bool admitted) {
  cache_.request(std::move(r), admitted);
}

Decisions Placer::session() {
  sched::Session session(cache_, policy_);
  return session.run();
}

bool Placer::ready(const std::string& node) const {
  auto it = cache_.nodes.find(node);
  return it != cache_.nodes.end() && it->second.ready;
}

}  // namespace caldera
