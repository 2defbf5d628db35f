// How an applied Queue or PriorityClass changes the stored one: what Volcano and Kubernetes let
// change, and the generation that counts the changes.
#pragma once

#include <string>

#include "messages/model/diagnostic.hpp"
#include "messages/model/priority_class.hpp"
#include "messages/model/queue.hpp"

namespace caldera {

template <class T>
struct Change {
  T next;                  // the stored object after the update (the stored one when unchanged)
  bool changed = false;    // its spec differs: write it
  Diagnostics diags = {};  // refusals, paths within the document; next is meaningless then
};

// Every field of a queue may change (Volcano's webhook checks only values); a document that
// names no state keeps the stored one.
Change<Queue> update_queue(const Queue& stored, QueueSpec applied);

// Kubernetes' rules: value and preemptionPolicy are immutable; at most one class is the global
// default (`other_default`: the stored one, "" when none).
Change<PriorityClass> update_priority_class(const PriorityClass& stored,
                                            const PriorityClass& applied,
                                            const std::string& other_default);

// `open` or `close` (caldera queue open|close, vcctl queue operate): the queue with that state.
Change<Queue> operate_queue(const Queue& stored, const std::string& action);

}  // namespace caldera
