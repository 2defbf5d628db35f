// Reading a task's pod template (Kubernetes PodTemplateSpec, the parts caldera runs) from YAML.
#pragma once

#include <string>

#include "messages/model/job_spec.hpp"
#include "messages/yaml/yaml_reader.hpp"

namespace caldera {

PodTemplate read_pod_template(YamlContext& ctx, const YamlNode& node, const std::string& path);

}  // namespace caldera
