// The Queues and PriorityClasses the coordinator serves: their durable values and store records,
// their admission, and what jobs may name in spec.queue and spec.priorityClassName.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "messages/diagnostic.hpp"
#include "messages/job_yaml.hpp"
#include "messages/priority_class.hpp"
#include "messages/queue.hpp"
#include "messages/result.hpp"
#include "storage/store.hpp"

namespace caldera {

struct SchedulingRegistry {
  std::map<std::string, Queue> queues;  // durable, by name; `default` only once written
  std::map<std::string, PriorityClass> classes;
  std::set<std::string> creating_queues, creating_classes;  // store write in flight
  std::set<std::string> deleting_queues, deleting_classes;  // delete in flight: not nameable

  // `default` always exists: Volcano creates it; a document written once (before any other of
  // that name) sets its weight and capability.
  bool queue_exists(const std::string& name) const;
  bool class_exists(const std::string& name) const;
  // Every queue the scheduler knows, `default` included (weight 1 unless written).
  std::vector<Queue> all_queues() const;
  std::vector<PriorityClass> all_classes() const;
};

std::string queue_key(const std::string& name);           // "queue/<name>"
std::string priority_class_key(const std::string& name);  // "priorityclass/<name>"
std::string queue_record(const Queue& q);
std::string priority_class_record(const PriorityClass& c);

// Loads the Scheduling family; a record that does not decode is logged and skipped.
void recover(SchedulingRegistry& registry, Store& store);

// Admits the submission's Queues and PriorityClasses (names, one global default, a name taken
// is "already exists"), then checks that every job and template names a queue and a priority
// class that exist, stored or in this submission. Problems land in diags under their prefixes.
void admit_scheduling(const ParsedDocuments& docs, const SchedulingRegistry& registry,
                      Diagnostics& diags);

}  // namespace caldera
