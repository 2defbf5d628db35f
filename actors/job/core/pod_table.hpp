// A job's pods by name, remembering which of them changed, so that a pod event writes only the
// pods it touched (one store row each) instead of the whole table.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>

#include "messages/pod.hpp"

namespace caldera {

// Reads through const access are free. Every non-const access marks what it can reach as changed:
// find/at/emplace/erase/edit mark one pod, non-const iteration marks the whole table. So a
// change can never be missed; a caller that wants to stay cheap iterates through const access
// (std::as_const) and edits the pods it changes by name.
class PodTable {
 public:
  using Map = std::map<std::string, Pod>;
  using iterator = Map::iterator;
  using const_iterator = Map::const_iterator;

  // What changed since the last take_changes(): pods to write, and names whose pod is gone.
  struct Changes {
    bool all = false;             // every pod in the table changed
    std::set<std::string> names;  // changed or erased pods (when !all, or erased ones when all)
  };

  const_iterator begin() const { return map_.begin(); }
  const_iterator end() const { return map_.end(); }
  const_iterator cbegin() const { return map_.cbegin(); }
  const_iterator cend() const { return map_.cend(); }
  const_iterator find(const std::string& name) const { return map_.find(name); }
  const Pod& at(const std::string& name) const { return map_.at(name); }
  size_t size() const { return map_.size(); }
  bool empty() const { return map_.empty(); }
  size_t count(const std::string& name) const { return map_.count(name); }
  const Map& map() const { return map_; }

  iterator begin() {
    changes_.all = true;
    return map_.begin();
  }
  iterator end() { return map_.end(); }
  iterator find(const std::string& name) {
    auto it = map_.find(name);
    if (it != map_.end()) changes_.names.insert(name);
    return it;
  }
  Pod& at(const std::string& name) {
    auto& p = map_.at(name);
    changes_.names.insert(name);
    return p;
  }
  Pod& operator[](const std::string& name) {
    changes_.names.insert(name);
    return map_[name];
  }
  // The pod a const iterator of this table points at, for writing.
  Pod& edit(const_iterator it) {
    changes_.names.insert(it->first);
    return map_.erase(it, it)->second;  // an empty erase turns a const_iterator mutable in O(1)
  }
  std::pair<iterator, bool> emplace(std::string name, Pod pod) {
    changes_.names.insert(name);
    return map_.emplace(std::move(name), std::move(pod));
  }
  iterator erase(const_iterator it) {
    changes_.names.insert(it->first);
    return map_.erase(it);
  }
  iterator erase(iterator it) { return erase(const_iterator(it)); }
  size_t erase(const std::string& name) {
    changes_.names.insert(name);
    return map_.erase(name);
  }

  bool changed() const { return changes_.all || !changes_.names.empty(); }
  bool all_changed() const { return changes_.all; }
  Changes take_changes() { return std::exchange(changes_, Changes{}); }
  void mark_all_changed() { changes_.all = true; }
  // Changes taken for a write that failed: they are written with the next one.
  void restore(Changes taken) {
    changes_.all = changes_.all || taken.all;
    changes_.names.merge(taken.names);
  }

  // Equal contents; what changed is bookkeeping, not part of the value.
  bool operator==(const PodTable& o) const { return map_ == o.map_; }

 private:
  Map map_;
  Changes changes_;
};

}  // namespace caldera
