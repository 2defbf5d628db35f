// A job's pods by name, remembering which of them changed, so that a pod event writes only the
// pods it touched (one store row each) and recounts only those, instead of the whole table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "messages/model/pod.hpp"

namespace caldera {

// What the controller counts of a task's pods at one job version.
struct PodCounts {
  int32_t total = 0;  // every pod in the table
  int32_t pending = 0, running = 0, succeeded = 0, failed = 0, unknown = 0;  // in sync
  int32_t terminating = 0;     // out of sync (killed by the controller), not ended yet
  int32_t discarded = 0;       // out of sync and ended: gone, as Volcano deletes them
  int32_t bound = 0;           // placed on a node, not discarded
  int32_t waiting = 0;         // in sync, Pending, no node yet: asks the scheduler
  int32_t placed_pending = 0;  // in sync, Pending, placed: launched, or waiting for its batch

  int32_t in_sync() const { return pending + running + succeeded + failed + unknown; }
  int32_t live() const { return pending + running + unknown + terminating; }
  PodCounts& add(const PodCounts& o, int sign);
  bool operator==(const PodCounts&) const = default;
};

// By (task, job version).
using PodCensus = std::map<std::pair<std::string, int32_t>, PodCounts>;

// Reads through const access are free. Every non-const access marks what it can reach as changed:
// find/at/emplace/erase/edit mark one pod, non-const iteration marks the whole table. So a
// change can never be missed; a caller that wants to stay cheap iterates through const access
// (std::as_const) and edits the pods it changes by name.
//
// The census and the lists of waiting and placed-pending pods are kept for the pods not changed
// since the last take_changes(), and completed on reading from the changed ones as they are now:
// a reference to a pod may be held and written through until then without being missed.
class PodTable {
 public:
  using Map = std::map<std::string, Pod>;
  using iterator = Map::iterator;
  using const_iterator = Map::const_iterator;

  // What changed since the last take_changes(): pods to write, and names whose pod is gone.
  struct Changes {
    bool all = false;             // every pod in the table changed
    std::set<std::string> names;  // changed or erased pods (when !all, or erased ones when all)
    std::vector<std::string> unstored;  // rows the write deletes: still there if it fails
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
    if (it != map_.end()) touch(name);
    return it;
  }
  Pod& at(const std::string& name) {
    auto& p = map_.at(name);
    touch(name);
    return p;
  }
  Pod& operator[](const std::string& name) {
    touch(name);
    return map_[name];
  }
  // The pod a const iterator of this table points at, for writing.
  Pod& edit(const_iterator it) {
    touch(it->first);
    return map_.erase(it, it)->second;  // an empty erase turns a const_iterator mutable in O(1)
  }
  std::pair<iterator, bool> emplace(std::string name, Pod pod) {
    touch(name);
    return map_.emplace(std::move(name), std::move(pod));
  }
  iterator erase(const_iterator it) {
    touch(it->first);
    return map_.erase(it);
  }
  iterator erase(iterator it) { return erase(const_iterator(it)); }
  size_t erase(const std::string& name) {
    touch(name);
    return map_.erase(name);
  }

  bool changed() const { return changes_.all || !changes_.names.empty(); }
  bool all_changed() const { return changes_.all; }
  const std::set<std::string>& changed_names() const { return changes_.names; }
  Changes take_changes();
  void mark_all_changed() { changes_.all = true; }
  // Changes taken for a write that failed: they are written with the next one.
  void restore(Changes taken);

  // Which pods have a row in the store. A pod that waits for a node has none (it is made again,
  // the same, after a restart), so a job of many replicas costs no rows until they are placed.
  bool stored(const std::string& name) const { return stored_.count(name) > 0; }
  void set_stored(const std::string& name, bool on) {
    if (on)
      stored_.insert(name);
    else
      stored_.erase(name);
  }
  const std::set<std::string>& stored_names() const { return stored_; }

  // The counts per (task, version), in O(changed pods) once the table has settled.
  PodCensus census() const;
  // Pods asking the scheduler for a node (the first `limit`), and placed Pending pods, in name
  // order.
  std::vector<const Pod*> waiting(size_t limit = SIZE_MAX) const;
  std::vector<const Pod*> placed_pending() const;

  // Equal contents; what changed is bookkeeping, not part of the value.
  bool operator==(const PodTable& o) const { return map_ == o.map_; }

 private:
  // The pod is about to change: the settled counts stop including it.
  void touch(const std::string& name);
  void settle_all();
  void count_in(const Pod& p, int sign);
  std::vector<const Pod*> listed(const std::set<std::string>& settled, bool (*wanted)(const Pod&),
                                 size_t limit) const;

  Map map_;
  Changes changes_;
  // Of the pods not in changes_ (all of them when changes_.all is false).
  PodCensus settled_;
  std::set<std::string> waiting_, placed_pending_;
  std::set<std::string> stored_;
};

bool is_waiting_for_node(const Pod& p);
bool is_placed_pending(const Pod& p);

}  // namespace caldera
