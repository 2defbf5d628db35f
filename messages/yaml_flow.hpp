// Reading a JobFlow's `spec:` (flows with their dependsOn, jobRetainPolicy) from YAML.
#pragma once

#include "messages/job_flow.hpp"
#include "messages/yaml_reader.hpp"

namespace caldera {

void read_flow_spec(YamlContext& ctx, const YamlNode& node, JobFlowSpec& flow);

}  // namespace caldera
