// Reading a JobFlow's `spec:` (flows with their dependsOn, jobRetainPolicy) from YAML.
#pragma once

#include "messages/model/job_flow.hpp"
#include "messages/model/job_spec.hpp"
#include "messages/yaml/yaml_reader.hpp"

namespace caldera {

// A Job's `spec:` at `path`. With `patch`, what is not written stays unset (a task's replicas 0)
// so that a JobFlow patch changes only what it names.
void read_job_spec(YamlContext& ctx, const YamlNode& node, JobSpec& job,
                   const std::string& path = "spec", bool patch = false);

void read_flow_spec(YamlContext& ctx, const YamlNode& node, JobFlowSpec& flow);

}  // namespace caldera
