// The cross-node commit of one gang (DESIGN rule 6): every node involved reserves its pods
// (prepare); the gang is bound only when all have confirmed, and on any refusal or silence every
// reservation is released. Pure: the scheduler actor carries the messages and the timer.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "actors/scheduler/core/placer.hpp"

namespace caldera {

enum class ReservationOutcome {
  Pending,  // some node has not answered yet
  Commit,   // every node confirmed: bind the gang
  Cancel,   // a node refused or did not answer: release everywhere, try in a later session
};

class GangReservation {
 public:
  GangReservation(std::string job_key, std::vector<Binding> bindings);

  const std::string& job_key() const { return job_key_; }
  const std::vector<Binding>& bindings() const { return bindings_; }
  // The pods each node is asked to reserve.
  std::map<std::string, std::vector<Binding>> by_node() const;

  ReservationOutcome confirmed(const std::string& node);
  ReservationOutcome refused(const std::string& node, const std::string& why);
  // The prepare timeout passed: nodes that have not answered count as refusals.
  ReservationOutcome timed_out();
  ReservationOutcome outcome() const { return outcome_; }

  // After Cancel: every node that did not refuse, and why; those that refused hold nothing.
  std::vector<std::string> to_release() const;
  const std::string& why() const { return why_; }

 private:
  ReservationOutcome decide();

  std::string job_key_;
  std::vector<Binding> bindings_;
  std::set<std::string> asked_, confirmed_, refused_, silent_;
  ReservationOutcome outcome_ = ReservationOutcome::Pending;
  std::string why_;
};

}  // namespace caldera
