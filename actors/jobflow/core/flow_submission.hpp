// Admission of a submission's JobTemplates and JobFlows: each one's own checks, names taken, and
// the templates a flow relies on (stored, in flight, or in the same submission).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "messages/model/diagnostic.hpp"
#include "messages/model/flow_documents.hpp"
#include "messages/model/job_spec.hpp"
#include "messages/yaml/job_yaml.hpp"

namespace caldera {

inline constexpr const char* kJobTemplateResource = "jobtemplates.flow.volcano.sh";
inline constexpr const char* kJobFlowResource = "jobflows.flow.volcano.sh";
inline constexpr const char* kJobResource = "jobs.batch.volcano.sh";

// `kind "name" already exists in namespace ns`, Volcano's (Kubernetes') wording.
std::string already_exists(const char* resource, const std::string& ns, const std::string& name);

// Admits one object and checks its name is free; problems land in diags under its prefix.
template <class Spec, class Admit>
void admit_one(Parsed<Spec>& item, bool taken, const char* resource, Admit&& admit_fn,
               Diagnostics& diags) {
  Diagnostics one;
  admit_fn(item.value, one);
  for (auto& e : one.errors) diags.error(prefixed(item.prefix, e.path), e.message);
  for (auto& w : one.warnings) diags.warn(prefixed(item.prefix, w.path), w.message);
  if (one.ok() && taken)
    diags.error(prefixed(item.prefix, "metadata.name"),
                already_exists(resource, item.value.namespace_, item.value.name));
}

// What the flow directory knows of the names, by "namespace/name".
struct FlowNames {
  std::function<bool(const std::string& key)> template_taken;  // stored, or being stored
  std::function<bool(const std::string& key)> flow_taken;
  std::function<std::optional<JobSpec>(const std::string& key)> stored_template;
};

// Defaults and admits every template and flow of `docs`; a name taken by one of the same kind
// (per `names`, or earlier in the submission) is an "already exists" error. Problems land in
// docs.diags.
void admit_flow_objects(FlowDocuments& docs, const FlowNames& names);

}  // namespace caldera
