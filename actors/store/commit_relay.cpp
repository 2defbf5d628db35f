#include "actors/store/commit_relay.hpp"

#include <exception>

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

namespace caldera {
namespace {

using relay_atom = caf::atom_constant<caf::atom("relay")>;

thread_local caf::execution_unit* current_relay_context = nullptr;

caf::behavior commit_relay(caf::event_based_actor* self) {
  return {
      [=](relay_atom, Completions& batch) {
        // Every actor waiting for a commit hears of it through here: one completion that throws
        // must neither stop the others nor the relay.
        struct Context {
          explicit Context(caf::execution_unit* eu) { current_relay_context = eu; }
          ~Context() { current_relay_context = nullptr; }
        } context(self->context());
        for (auto& done : batch) {
          try {
            done();
          } catch (const std::exception& e) {
            spdlog::error("store commit completion failed: {}", e.what());
          }
        }
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
