// Reading Volcano lifecycle policies (job- or task-level `policies:`) from YAML.
#pragma once

#include <string>
#include <vector>

#include "messages/model/lifecycle.hpp"
#include "messages/yaml/yaml_reader.hpp"

namespace caldera {

std::vector<LifecyclePolicy> read_policies(YamlContext& ctx, const YamlNode& node,
                                           const std::string& path);

}  // namespace caldera
