// The Queues and PriorityClasses as the job directory admits jobs against them: the names the
// scheduling objects actor (actors/scheduler) says are stored, and the creates and deletes the
// directory itself has under way.
#pragma once

#include <set>
#include <string>

#include "messages/model/diagnostic.hpp"
#include "messages/yaml/job_yaml.hpp"

namespace caldera {

struct SchedulingNames {
  std::set<std::string> queues, classes;  // stored (`default` only once written)
  std::string default_class;              // the stored global default PriorityClass; "": none
  std::set<std::string> creating_queues, creating_classes;  // store write in flight
  std::set<std::string> deleting_queues, deleting_classes;  // delete in flight: not nameable
  std::set<std::string> closed_queues;                      // stored Closed: they take no new job

  // `default` always exists: Volcano creates it.
  bool queue_exists(const std::string& name) const;
  bool class_exists(const std::string& name) const;
};

// Admits the submission's Queues and PriorityClasses (names, one global default, a name taken
// is "already exists"), then checks that every job and template names a queue and a priority
// class that exist, stored or in this submission. Problems land in diags under their prefixes.
void admit_scheduling(const ParsedDocuments& docs, const SchedulingNames& names,
                      Diagnostics& diags);

}  // namespace caldera
