// Queues as a session sees them (Volcano's Queue and its proportion plugin): each queue deserves
// a share of the cluster by weight, never more than it asks for nor than its capability, and a
// queue that holds its share waits while others catch up.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "messages/model/resources.hpp"

namespace caldera::sched {

struct Snapshot;

struct QueueInfo {
  std::string name;
  int32_t weight = 1;                      // below 1 counts as 1 (Volcano's least weight)
  std::optional<ResourceList> capability;  // a hard cap on what its pods hold
  bool reclaimable = true;
  // Set by queue_shares(): what its pods hold, that plus what its waiting pods ask, and its
  // deserved share.
  ResourceList allocated, request, deserved;
  bool operator==(const QueueInfo&) const = default;
};

// Sets every queue's allocated, request and deserved from the snapshot: the ready nodes'
// allocatable is dealt out by weight, round after round; a queue gets no more than it requests
// or its capability allows, and what it cannot use goes to the others.
void queue_shares(Snapshot& s);

// queue_shares' dealing alone, for a caller that keeps each queue's allocated and request
// itself: sets every queue's deserved share of `total` (the ready nodes' allocatable).
void deal_shares(std::map<std::string, QueueInfo>& queues, const ResourceList& total);

// A queue that holds at least its share of every resource it deserves some of: allocate passes
// its gangs over this session (proportion's overused).
bool overused(const QueueInfo& q);

// Whether the queue's pods hold more than its share of some resource (Volcano's proportion
// Overused): a gang of such a queue takes no room from others' pods, nor from its own (it could
// not be bound with it).
bool above_share(const QueueInfo& q);

// Whether the queue's pods hold all its capability of some resource.
bool at_capability(const QueueInfo& q);

// Whether the queue's pods may hold `ask` more than `held` (its allocated plus what the running
// statement has given it) under its capability.
bool within_capability(const QueueInfo& q, const ResourceList& held, const ResourceList& ask);

// What a queue's share is dealt in, as a message says it: a pod slot is a node's limit, not part
// of a share.
std::string share_text(ResourceList r);

// Why a queue's gangs wait: "queue a holds its share (cpu 1500m)". Its share, not what it holds,
// which changes with every pod (and each change would be a write of every waiting job).
std::string share_message(const QueueInfo& q);

}  // namespace caldera::sched
