// A node's pod reports that their jobs have not acknowledged yet (DESIGN rule 5): for each pod,
// the number of its latest status and when that went out. Pure: the time is given.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace caldera {

class Outbox {
 public:
  // The pod's status numbered `seq` is being written: it goes out once durable (stored).
  void recorded(const std::string& uid, uint64_t seq);
  // It is durable and was sent at `now_ms`. A number no longer the latest changes nothing.
  void stored(const std::string& uid, uint64_t seq, int64_t now_ms);
  // The job holds the pod's statuses up to `seq`: a later one still waits.
  void acknowledged(const std::string& uid, uint64_t seq);
  // The pod is removed: its job needs no more of it.
  void forget(const std::string& uid);
  // The pods whose latest status went out long enough before `now_ms` and is still
  // unacknowledged, with its number; each counts as sent again at `now_ms`. Long enough is
  // `after_ms`, doubled with every resend of the same status up to 16 times it: a coordinator
  // that cannot take them (a full disk) is not flooded. Statuses not yet durable are not due.
  std::vector<std::pair<std::string, uint64_t>> due(int64_t now_ms, int64_t after_ms);

  // How many pods' latest status had to be sent again and is still unacknowledged.
  size_t resent() const;

  // Whether the pod's latest status still waits for its job.
  bool pending(const std::string& uid) const { return entries_.count(uid) > 0; }
  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    uint64_t seq = 0;
    bool durable = false;  // written, and so sent
    int64_t sent_ms = 0;
    int resends = 0;
  };
  std::unordered_map<std::string, Entry> entries_;  // by pod uid
};

}  // namespace caldera
