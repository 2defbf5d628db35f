#include "actors/jobflow/core/flow_submission.hpp"

#include <set>

#include "messages/admission/admission.hpp"
#include "messages/admission/flow_admission.hpp"

namespace caldera {
namespace {

// A probe waits for a task of its targets: a target whose template is known must have one of
// the probed tasks, or the flow would wait for ever.
template <class TemplateOf>
void check_probe_tasks(const JobFlowSpec& s, TemplateOf&& template_of, Diagnostics& d) {
  for (size_t i = 0; i < s.flows.size(); ++i) {
    const auto& dep = s.flows[i].depends_on;
    if (!dep || !dep->has_probes()) continue;
    std::vector<std::string> probed;
    for (const auto& p : dep->probe) probed.push_back(p.task_name);
    for (const auto& p : dep->http_get) probed.push_back(p.task_name);
    for (const auto& p : dep->tcp_socket) probed.push_back(p.task_name);
    for (const auto& target : dep->targets) {
      auto tmpl = template_of(s.namespace_, target);
      if (!tmpl) continue;
      bool has = false;
      for (const auto& name : probed)
        for (const auto& t : tmpl->tasks) has |= t.name == name;
      if (!has)
        d.error("spec.flows[" + std::to_string(i) + "].dependsOn.probe",
                "JobTemplate " + target + " has none of the probed tasks");
    }
  }
}

}  // namespace

std::string already_exists(const char* resource, const std::string& ns, const std::string& name) {
  return std::string(resource) + " \"" + name + "\" already exists in namespace " + ns;
}

void admit_flow_objects(FlowDocuments& docs, const FlowNames& names) {
  auto& diags = docs.diags;
  std::set<std::string> templates, flows;  // keys seen so far in this submission
  auto admit_job_spec = [&](const JobSpec& s, Diagnostics& d) { admit(s, docs.context, d); };
  for (auto& t : docs.templates) apply_defaults(t.value);
  for (auto& t : docs.templates) {
    const auto key = t.value.key();
    const bool taken = names.template_taken(key) || !templates.insert(key).second;
    admit_one(t, taken, kJobTemplateResource, admit_job_spec, diags);
  }
  // A flow may name a template stored before or arriving in the same submission.
  auto template_exists = [&](const std::string& ns, const std::string& name) {
    const auto key = ns + "/" + name;
    return templates.count(key) > 0 || names.template_taken(key);
  };
  // The template a flow entry would run now: this submission's, else the stored one.
  auto template_of = [&](const std::string& ns, const std::string& name) -> std::optional<JobSpec> {
    for (const auto& t : docs.templates)
      if (t.value.namespace_ == ns && t.value.name == name) return t.value;
    return names.stored_template(ns + "/" + name);
  };
  for (auto& f : docs.flows) {
    apply_defaults(f.value);
    const auto key = f.value.key();
    const bool taken = names.flow_taken(key) || !flows.insert(key).second;
    admit_one(
        f, taken, kJobFlowResource,
        [&](const JobFlowSpec& s, Diagnostics& d) {
          admit(s, template_exists, d);
          check_probe_tasks(s, template_of, d);
        },
        diags);
  }
}

}  // namespace caldera
