// `caldera apply` (kubectl's verb): each document of a file updates the object it names, through
// that object's owner, and those that do not exist yet are created together as a submission.
#pragma once

#include <cstdint>
#include <string>

#include <caf/actor.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/result.hpp>

#include "actors/protocol/directory.hpp"
#include "actors/protocol/flow_directory.hpp"
#include "actors/protocol/membership.hpp"

namespace caldera {

struct ApplyEnv {
  protocol::directory directory;    // Volcano and Kubernetes Jobs; the creates
  protocol::flow_directory flows;   // JobTemplates and JobFlows
  caf::actor scheduling;            // Queues and PriorityClasses (actors/scheduler)
  protocol::membership membership;  // the nodes, for what a template's pods may ask
};

// Answers with a Response: `applied` (what was done with each document, and every refusal), or
// errors when the text itself is refused. Documents are applied one by one, as kubectl does:
// one refused leaves the others done. The updates go first, so that a new JobFlow in the same
// file runs the JobTemplate the file changes.
caf::result<std::string> apply_yaml(caf::event_based_actor* self, const ApplyEnv& env, uint64_t id,
                                    std::string_view text, const std::string& ns);

// `caldera queue open|close NAME`: ok, or why not.
caf::result<std::string> operate_queue(caf::event_based_actor* self, const ApplyEnv& env,
                                       uint64_t id, const std::string& name,
                                       const std::string& action);

}  // namespace caldera
