// Who is in the cluster and who is alive: registrations, heartbeats, incarnations and leases.
// Pure: times are ms of a monotonic clock, given.
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
  // A worker's lease (actors/node/core/lease.hpp): it stops its pods this long after the last
  // message of its that renewed it. 0: workers hold none, and a NotReady node is lost at once.
  int64_t lease_ms = 0;
};

// Between the worker's clock and ours, rates may differ (NTP slews by at most 500 ppm): the
// lease is taken to last 1% longer here. And the worker's supervisors notice its end within a
// few ms (a timer each): 200 ms covers a loaded machine.
inline constexpr int64_t kLeaseRateMarginPercent = 1;
inline constexpr int64_t kLeaseNoticeMarginMs = 200;

// How long after the last renewal a worker's pods have surely been told to stop (SIGTERM): the
// lease and its margins. Each job waits its own pods' grace period on top
// (actors/job/core/job_controller.hpp, lost_pods_stop_ms).
int64_t lease_over_after_ms(const MembershipOptions& options);

// After the coordinator's cluster port opens, how long a config's node that has not registered is
// waited for before its pods are lost: its lease, renewed at most until then, is surely over.
int64_t startup_wait_ms(const MembershipOptions& options);

// One node as the coordinator sees it.
struct Member {
  std::string name;
  std::string address;       // host:clusterPort
  uint64_t incarnation = 0;  // changes on every start of the node's process
  bool ready = false;
  std::string reason;  // why it is NotReady
  bool local = false;  // in the coordinator's own process: its liveness is the process's
  int64_t joined_ms = 0;
  int64_t last_heartbeat_ms = 0;  // or the registration, or the end of a stall of ours
  int64_t last_renewal_ms = 0;    // the last heartbeat or registration taken in: its lease's start
  bool lost = false;              // NotReady and its lease over: its pods are replaced
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
  // NotReady members whose lease is surely over become lost (once per outage): their pods may run
  // elsewhere now. Returns their names.
  std::vector<std::string> lose(int64_t now_ms);
  // We did not run for a while (a pause, an overloaded machine): heartbeats that came meanwhile
  // were not taken in. Every Ready member gets a fresh timeout, so that nobody is judged by them.
  // Leases are not extended: a worker's runs on whether we answered.
  void on_stall(int64_t now_ms);
  // When expire() or lose() could next find a member.
  std::optional<int64_t> next_expiry_ms() const;
  // When the pods of a member are surely dead, counting from its last renewal.
  int64_t lease_over_ms(const Member& m) const;
  bool leases() const { return options_.lease_ms > 0; }

  const Member* find(const std::string& name) const;
  const std::map<std::string, Member>& members() const { return members_; }

 private:
  MembershipOptions options_;
  std::map<std::string, Member> members_;
};

}  // namespace caldera
