// Admission of a JobFlow: Volcano's defaults and the rules its flows must follow, every violation
// reported with its field path.
#pragma once

#include <functional>
#include <string>

#include "messages/model/diagnostic.hpp"
#include "messages/model/job_flow.hpp"

namespace caldera {

// Whether a JobTemplate (namespace, name) exists, stored or arriving in the same submission.
using TemplateExists = std::function<bool(const std::string& ns, const std::string& name)>;

// namespace "default" and jobRetainPolicy "retain" when empty.
void apply_defaults(JobFlowSpec& spec);

// Checks the (defaulted) spec: names are DNS-1123 labels, flows unique and non-empty, dependsOn
// targets name flows of this JobFlow without self-dependencies or cycles, jobRetainPolicy is
// retain or delete, each `<flow>-<template>` job name is a valid job name. A flow whose template
// does not exist is a warning: the flow waits for it.
void admit(const JobFlowSpec& spec, const TemplateExists& template_exists, Diagnostics& diags);

}  // namespace caldera
