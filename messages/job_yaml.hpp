// Reads Volcano YAML (one or more documents) into Job specs.
#pragma once

#include <string_view>
#include <vector>

#include "messages/diagnostic.hpp"
#include "messages/job_spec.hpp"

namespace caldera {

struct ParsedDocuments {
  std::vector<JobSpec> jobs;  // every `kind: Job` document, in file order
};

// Parses every document. Problems land in `diags` with field paths ("spec.tasks[1].replicas"; when
// the text holds several documents, prefixed "documents[N]."). Unknown fields are warnings.
// kinds other than Job (JobFlow, JobTemplate) are reported as errors until they are supported.
// Never throws.
ParsedDocuments parse_yaml(std::string_view text, Diagnostics& diags);

}  // namespace caldera
