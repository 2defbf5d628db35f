// Reading a Kubernetes Job's spec (batch/v1) from YAML.
#pragma once

#include <string>

#include "messages/model/batch_job.hpp"
#include "messages/yaml/yaml_reader.hpp"

namespace caldera {

// Reads `spec` of a batch/v1 Job into `job` (its metadata is the document's). Type errors and
// unknown fields land in ctx under `path`; what the API server would refuse is
// validate_batch_job's (messages/admission/batch_job_validation.hpp).
void read_batch_job_spec(YamlContext& ctx, const YamlNode& node, BatchJobSpec& job,
                         const std::string& path = "spec");

}  // namespace caldera
