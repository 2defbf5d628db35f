// Reading a task's pod template (Kubernetes PodTemplateSpec, the parts caldera runs) from YAML.
#pragma once

#include <string>

#include "messages/model/job_spec.hpp"
#include "messages/yaml/yaml_reader.hpp"

namespace caldera {

// `priority_class`: where a Kubernetes Job's pod names its PriorityClass (the job's); without
// it, spec.priorityClassName is the template's own (a Volcano task's priority).
PodTemplate read_pod_template(YamlContext& ctx, const YamlNode& node, const std::string& path,
                              std::string* priority_class = nullptr);

}  // namespace caldera
