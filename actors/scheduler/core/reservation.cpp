#include "actors/scheduler/core/reservation.hpp"

namespace caldera {

GangReservation::GangReservation(std::string job_key, std::vector<Binding> bindings)
    : job_key_(std::move(job_key)), bindings_(std::move(bindings)) {
  for (const auto& b : bindings_) asked_.insert(b.node);
}

std::map<std::string, std::vector<Binding>> GangReservation::by_node() const {
  std::map<std::string, std::vector<Binding>> out;
  for (const auto& b : bindings_) out[b.node].push_back(b);
  return out;
}

ReservationOutcome GangReservation::decide() {
  if (outcome_ != ReservationOutcome::Pending) return outcome_;
  if (!refused_.empty())
    outcome_ = ReservationOutcome::Cancel;
  else if (confirmed_.size() == asked_.size())
    outcome_ = ReservationOutcome::Commit;
  return outcome_;
}

ReservationOutcome GangReservation::confirmed(const std::string& node) {
  if (outcome_ == ReservationOutcome::Pending && asked_.count(node)) confirmed_.insert(node);
  return decide();
}

ReservationOutcome GangReservation::refused(const std::string& node, const std::string& why) {
  if (outcome_ == ReservationOutcome::Pending && asked_.count(node) && !confirmed_.count(node)) {
    refused_.insert(node);
    if (why_.empty()) why_ = "node " + node + " refused the reservation: " + why;
  }
  return decide();
}

ReservationOutcome GangReservation::timed_out() {
  if (outcome_ != ReservationOutcome::Pending) return outcome_;
  for (const auto& node : asked_) {
    if (confirmed_.count(node) || refused_.count(node)) continue;
    silent_.insert(node);
    if (why_.empty()) why_ = "node " + node + " did not answer the reservation in time";
  }
  if (!silent_.empty()) outcome_ = ReservationOutcome::Cancel;
  return decide();
}

std::vector<std::string> GangReservation::to_release() const {
  std::vector<std::string> out;
  if (outcome_ != ReservationOutcome::Cancel) return out;
  // Every node that did not refuse: those that confirmed hold a reservation, and those that have
  // not answered yet may hold one by the time the cancel reaches them (it comes after the
  // prepare, on the same path).
  for (const auto& node : asked_)
    if (!refused_.count(node)) out.push_back(node);
  return out;
}

}  // namespace caldera
