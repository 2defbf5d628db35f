// Volcano's JobTemplate (flow.volcano.sh/v1alpha1): a named Job spec that JobFlows refer to.
#pragma once

#include <cstdint>
#include <string>

#include "messages/model/job_spec.hpp"

namespace caldera {

inline constexpr const char* kFlowApiVersion = "flow.volcano.sh/v1alpha1";

struct JobTemplate {
  std::string uid;
  int64_t created_ms = 0;
  JobSpec spec;  // spec.name and spec.namespace_ are the template's own metadata
  bool operator==(const JobTemplate&) const = default;
};

}  // namespace caldera
