#include "actors/directory/submission.hpp"

#include <algorithm>
#include <set>

#include <capnp/message.h>

#include "actors/api/responses.hpp"
#include "messages/flat.hpp"
#include "messages/flow_admission.hpp"

namespace caldera {
namespace {

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

// A probe waits for a task of its targets: a target whose template is known must have one of
// the probed tasks, or the flow would wait for ever.
template <class TemplateOf>
void check_probe_tasks(const JobFlowSpec& s, TemplateOf&& template_of, Diagnostics& d) {
  for (size_t i = 0; i < s.flows.size(); ++i) {
    const auto& dep = s.flows[i].depends_on;
    if (!dep || dep->probe.empty()) continue;
    for (const auto& target : dep->targets) {
      const JobSpec* tmpl = template_of(s.namespace_, target);
      if (!tmpl) continue;
      bool has = false;
      for (const auto& p : dep->probe)
        for (const auto& t : tmpl->tasks) has |= t.name == p.task_name;
      if (!has)
        d.error("spec.flows[" + std::to_string(i) + "].dependsOn.probe.taskStatusList",
                "JobTemplate " + target + " has none of the probed tasks");
    }
  }
}

}  // namespace

void admit_submission(ParsedDocuments& docs, const AdmissionContext& ctx,
                      const FlowRegistry& registry,
                      const std::function<bool(const std::string&)>& job_taken,
                      Diagnostics& diags) {
  std::set<std::string> templates, flows, jobs;  // keys seen so far in this submission
  auto admit_job_spec = [&](const JobSpec& s, Diagnostics& d) { admit(s, ctx, d); };
  for (auto& t : docs.templates) apply_defaults(t.value);
  for (auto& t : docs.templates) {
    const auto key = t.value.key();
    const bool taken = registry.templates.taken(key) || !templates.insert(key).second;
    admit_one(t, taken, FlowKind<JobTemplate>::resource, admit_job_spec, diags);
  }
  // A flow may name a template stored before or arriving in the same submission.
  auto template_exists = [&](const std::string& ns, const std::string& name) {
    const auto key = ns + "/" + name;
    return registry.templates.taken(key) || templates.count(key) > 0;
  };
  // The template a flow entry would run now: this submission's, else the stored one.
  auto template_of = [&](const std::string& ns, const std::string& name) -> const JobSpec* {
    for (const auto& t : docs.templates)
      if (t.value.namespace_ == ns && t.value.name == name) return &t.value;
    const auto* stored = registry.templates.find(ns + "/" + name);
    return stored ? &stored->spec : nullptr;
  };
  for (auto& f : docs.flows) {
    apply_defaults(f.value);
    const auto key = f.value.key();
    const bool taken = registry.flows.taken(key) || !flows.insert(key).second;
    admit_one(
        f, taken, FlowKind<JobFlow>::resource,
        [&](const JobFlowSpec& s, Diagnostics& d) {
          admit(s, template_exists, d);
          check_probe_tasks(s, template_of, d);
        },
        diags);
  }
  for (auto& j : docs.jobs) {
    apply_defaults(j.value);
    const auto key = j.value.key();
    const bool taken = job_taken(key) || !jobs.insert(key).second;
    admit_one(j, taken, "jobs.batch.volcano.sh", admit_job_spec, diags);
  }
}

std::string rejection_response(uint64_t id, const Diagnostics& diags) {
  std::vector<ApiError> errors;
  for (const auto& e : diags.errors) {
    bool exists = e.message.find("already exists") != std::string::npos;
    errors.push_back(
        {exists ? api::Error::Code::ALREADY_EXISTS : api::Error::Code::INVALID_ARGUMENT, e.message,
         e.path});
  }
  return error_response(id, errors, warning_lines(diags));
}

void PendingSubmit::finish() {
  if (--left > 0) return;
  if (!failures.empty()) {
    rp.deliver(error_response(id, api::Error::Code::INTERNAL, failures.front()));
    return;
  }
  SmallMessageBuilder b;
  auto r = b.initRoot<api::Response>();
  r.setId(id);
  if (!warnings.empty()) {
    auto w = r.initWarnings(static_cast<unsigned>(warnings.size()));
    for (unsigned i = 0; i < warnings.size(); ++i) w.set(i, warnings[i]);
  }
  std::stable_sort(created.begin(), created.end(),
                   [](const Created& a, const Created& b) { return a.document < b.document; });
  auto list = r.initSubmitted(static_cast<unsigned>(created.size()));
  for (unsigned i = 0; i < created.size(); ++i) {
    const auto& c = created[i];
    auto slash = c.key.find('/');
    list[i].setKind(c.kind);
    list[i].setNamespace(c.key.substr(0, slash));
    list[i].setName(c.key.substr(slash + 1));
    list[i].setUid(c.uid);
  }
  rp.deliver(to_bytes(b));
}

}  // namespace caldera
