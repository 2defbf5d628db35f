// The store's completions, carried into the actor system in one message per group commit.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/send.hpp>

#include "actors/protocol/atoms.hpp"

namespace caldera {

using Completions = std::vector<std::function<void()>>;

}  // namespace caldera

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(caldera::Completions)

namespace caldera {

// A relay that runs the completions of each group commit it is handed (StoreOptions::deliver):
// the store's writer thread then wakes the actor system once per batch, and the relay's sends to
// the committing actors go out from a worker, as any actor's sends do.
caf::actor spawn_commit_relay(caf::actor_system& sys);
void relay_completions(const caf::actor& relay, Completions batch);

namespace detail {
// Set while the relay runs completions: the worker its sends go out from.
caf::execution_unit* relay_context();
}  // namespace detail

// Tells `to` that its store write `id` is done: (committed_atom, id, error).
template <class Id>
void notify_committed(const caf::actor& to, Id id, std::string error) {
  if (!to) return;
  if (auto* context = detail::relay_context()) {
    caf::actor_cast<caf::abstract_actor*>(to)->eq_impl(caf::make_message_id(), nullptr, context,
                                                       committed_atom::value, std::move(id),
                                                       std::move(error));
    return;
  }
  caf::anon_send(to, committed_atom::value, std::move(id), std::move(error));
}

}  // namespace caldera
