#include "actors/store/commit_relay.hpp"

#include <caf/all.hpp>

namespace caldera {
namespace {

using relay_atom = caf::atom_constant<caf::atom("relay")>;

thread_local caf::execution_unit* current_relay_context = nullptr;

caf::behavior commit_relay(caf::event_based_actor* self) {
  return {
      [=](relay_atom, Completions& batch) {
        current_relay_context = self->context();
        for (auto& done : batch) done();
        current_relay_context = nullptr;
      },
  };
}

}  // namespace

namespace detail {
caf::execution_unit* relay_context() {
  return current_relay_context;
}
}  // namespace detail

caf::actor spawn_commit_relay(caf::actor_system& sys) {
  return sys.spawn(commit_relay);
}

void relay_completions(const caf::actor& relay, Completions batch) {
  caf::anon_send(relay, relay_atom::value, std::move(batch));
}

}  // namespace caldera
