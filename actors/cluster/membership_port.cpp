#include "actors/cluster/membership_port.hpp"

#include <caf/all.hpp>

namespace caldera {
namespace {

// Requests rather than delegation: the membership's answer goes back through this actor, whose
// requester is the remote link (a response delegated to a remote requester was seen lost).
protocol::membership_port::behavior_type membership_port(protocol::membership_port::pointer self,
                                                         const protocol::membership& membership) {
  return {
      [=](register_atom a, const std::string& bytes, const caf::actor& node)
          -> caf::result<std::string, caf::actor, caf::actor, std::string, uint64_t> {
        auto rp = self->make_response_promise<std::string, caf::actor, caf::actor, std::string,
                                              uint64_t>();
        self->request(membership, caf::infinite, a, bytes, node)
            .then(
                [=](std::string& refusal, caf::actor& reports, caf::actor& router,
                    std::string& cluster, uint64_t generation) mutable {
                  rp.deliver(std::move(refusal), std::move(reports), std::move(router),
                             std::move(cluster), generation);
                },
                [=](caf::error& e) mutable { rp.deliver(std::move(e)); });
        return rp;
      },
      [=](heartbeat_atom a, const std::string& node, uint64_t incarnation) -> caf::result<bool> {
        auto rp = self->make_response_promise<bool>();
        self->request(membership, caf::infinite, a, node, incarnation)
            .then([=](bool ok) mutable { rp.deliver(ok); },
                  [=](caf::error& e) mutable { rp.deliver(std::move(e)); });
        return rp;
      },
  };
}

}  // namespace

protocol::membership_port spawn_membership_port(caf::actor_system& sys,
                                                protocol::membership membership) {
  return sys.spawn(membership_port, std::move(membership));
}

}  // namespace caldera
