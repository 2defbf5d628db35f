// A submission's JobTemplates and JobFlows on their way to the flow directory's admission, and
// back with what it found.
#pragma once

#include <vector>

#include "messages/admission/admission.hpp"
#include "messages/model/diagnostic.hpp"
#include "messages/model/job_flow.hpp"
#include "messages/model/job_spec.hpp"
#include "messages/yaml/job_yaml.hpp"

namespace caldera {

struct FlowDocuments {
  std::vector<Parsed<JobSpec>> templates;  // `kind: JobTemplate`, in file order
  std::vector<Parsed<JobFlowSpec>> flows;  // `kind: JobFlow`
  AdmissionContext context;                // what the templates' jobs are admitted against
  Diagnostics diags;                       // what admission found, under each document's prefix

  bool empty() const { return templates.empty() && flows.empty(); }
};

}  // namespace caldera
