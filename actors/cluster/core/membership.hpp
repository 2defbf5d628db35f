// Who is in the cluster and who is alive: registrations, heartbeats and incarnations. Pure.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace caldera {

struct MembershipOptions {
  int64_t heartbeat_timeout_ms = 2000;  // a node not heard from this long is NotReady
  std::string token;                    // when set, a registration must carry it
  std::set<std::string> allowed;        // the nodes of the cluster config; empty: any name
};

// One node as the coordinator sees it.
struct Member {
  std::string name;
  std::string address;       // host:clusterPort
  uint64_t incarnation = 0;  // changes on every start of the node's process
  bool ready = false;
  std::string reason;  // why it is NotReady
  bool local = false;  // in the coordinator's own process: its liveness is the process's
  int64_t joined_ms = 0;
  int64_t last_heartbeat_ms = 0;  // or the registration
};

struct Registration {
  std::string name;
  std::string address;
  uint64_t incarnation = 0;
  std::string token;
  bool local = false;
};

// What a registration led to.
struct Admission {
  bool accepted = false;
  std::string refusal;         // why not, for the node's log and the coordinator's
  bool restarted = false;      // a new incarnation replaced a known one: its old pods are gone
  bool was_not_ready = false;  // it comes back after being NotReady (its pods were evicted)
};

enum class Heartbeat {
  Ok,          // from the current incarnation of a Ready node
  Stale,       // from an incarnation that has been replaced: ignore it
  Reregister,  // unknown, or NotReady: the node must register again (with all its pods)
};

class Membership {
 public:
  explicit Membership(MembershipOptions options) : options_(std::move(options)) {}

  // Accepted unless the token is wrong, the name is not in the config, or another process
  // (another address) holds the name and is Ready. A new incarnation replaces the old one.
  Admission on_register(const Registration& r, int64_t now_ms);
  Heartbeat on_heartbeat(const std::string& name, uint64_t incarnation, int64_t now_ms);
  // The connection to this incarnation of the node is gone. True when it was Ready until now.
  bool on_disconnect(const std::string& name, uint64_t incarnation, const std::string& why);
  // Ready members not heard from for the timeout become NotReady; returns their names.
  std::vector<std::string> expire(int64_t now_ms);
  // When expire() could next find a member to turn NotReady.
  std::optional<int64_t> next_expiry_ms() const;

  const Member* find(const std::string& name) const;
  const std::map<std::string, Member>& members() const { return members_; }

 private:
  MembershipOptions options_;
  std::map<std::string, Member> members_;
};

}  // namespace caldera
