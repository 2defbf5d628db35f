// Queue and PriorityClass <-> their Cap'n Proto form (messages/api.capnp): client answers and
// store records alike.
#pragma once

#include "messages/api.capnp.h"
#include "messages/model/priority_class.hpp"
#include "messages/model/queue.hpp"

namespace caldera {

// The status is written only when given (list answers); records carry none.
void encode(const Queue& in, api::Queue::Builder out, const QueueStatus* status = nullptr);
void encode(const PriorityClass& in, api::PriorityClass::Builder out);

// Our own records and answers: unreadable quantities are skipped. May throw kj::Exception.
Queue decode(api::Queue::Reader in);
QueueStatus decode_status(api::Queue::Reader in);
PriorityClass decode(api::PriorityClass::Reader in);

}  // namespace caldera
