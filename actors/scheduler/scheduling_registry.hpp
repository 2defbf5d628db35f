// The Queues and PriorityClasses the coordinator serves: their durable values and store records
// (actors/scheduler/scheduling_objects owns them).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "messages/model/priority_class.hpp"
#include "messages/model/queue.hpp"
#include "storage/store.hpp"

namespace caldera {

struct SchedulingRegistry {
  std::map<std::string, Queue> queues;  // durable, by name; `default` only once written
  std::map<std::string, PriorityClass> classes;

  // Every queue the scheduler knows, `default` included (weight 1 unless written): `default`
  // always exists, as Volcano creates it; a document written once sets its weight and
  // capability.
  std::vector<Queue> all_queues() const;
  std::vector<PriorityClass> all_classes() const;
  // The stored global default PriorityClass; "" when none is.
  std::string default_class() const;
};

std::string queue_key(const std::string& name);           // "queue/<name>"
std::string priority_class_key(const std::string& name);  // "priorityclass/<name>"
std::string queue_record(const Queue& q);
std::string priority_class_record(const PriorityClass& c);

// Loads the Scheduling family; a record that does not decode is logged and skipped.
void recover(SchedulingRegistry& registry, Store& store);

}  // namespace caldera
