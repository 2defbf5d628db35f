// Reading the scheduling objects from YAML: Queue (spec.weight, capability, reclaimable) and
// PriorityClass (value, preemptionPolicy, globalDefault, description).
#pragma once

#include "messages/model/priority_class.hpp"
#include "messages/model/queue.hpp"
#include "messages/yaml/yaml_reader.hpp"

namespace caldera {

// A Queue document's `metadata:` and `spec:`, from its root mapping.
void read_queue(YamlContext& ctx, MapReader& root, QueueSpec& out);

// A PriorityClass document: its fields sit at the top level, beside metadata.
void read_priority_class(YamlContext& ctx, MapReader& root, PriorityClass& out);

}  // namespace caldera
