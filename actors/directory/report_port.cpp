#include "actors/directory/report_port.hpp"

#include <caf/all.hpp>

namespace caldera {
namespace {

protocol::report_port::behavior_type report_port(protocol::report_port::pointer,
                                                 const protocol::directory& directory) {
  return {
      [=](report_atom a, const std::string& bytes) { caf::anon_send(directory, a, bytes); },
  };
}

}  // namespace

protocol::report_port spawn_report_port(caf::actor_system& sys, protocol::directory directory) {
  return sys.spawn(report_port, std::move(directory));
}

}  // namespace caldera
