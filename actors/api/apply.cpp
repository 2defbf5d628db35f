#include "actors/api/apply.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <utility>
#include <vector>

#include <capnp/message.h>
#include <kj/exception.h>
#include <caf/all.hpp>

#include "actors/api/responses.hpp"
#include "actors/protocol/atoms.hpp"
#include "actors/protocol/local_types.hpp"
#include "messages/codec/flat.hpp"
#include "messages/yaml/job_yaml.hpp"

namespace caldera {
namespace {

using namespace std::chrono_literals;
using Code = api::Error::Code;

struct Done {
  size_t document;
  std::string kind, ns, name, uid, action;
};

// One apply under way: the owners' answers come in any order.
struct ApplyRun {
  uint64_t id = 0;
  caf::typed_response_promise<std::string> rp;
  std::vector<std::string> warnings;
  size_t left = 0;          // updates not answered yet
  ParsedDocuments creates;  // the documents whose object does not exist
  std::vector<Done> done;
  std::vector<ApiError> errors;

  std::string answer() {
    std::stable_sort(done.begin(), done.end(),
                     [](const Done& a, const Done& b) { return a.document < b.document; });
    SmallMessageBuilder b;
    auto r = b.initRoot<api::Response>();
    r.setId(id);
    set_warnings(r, warnings);
    auto a = r.initApplied();
    auto objects = a.initObjects(static_cast<unsigned>(done.size()));
    for (unsigned i = 0; i < done.size(); ++i) {
      objects[i].setKind(done[i].kind);
      objects[i].setNamespace(done[i].ns);
      objects[i].setName(done[i].name);
      objects[i].setUid(done[i].uid);
      objects[i].setAction(done[i].action);
    }
    auto errs = a.initErrors(static_cast<unsigned>(errors.size()));
    for (unsigned i = 0; i < errors.size(); ++i) {
      errs[i].setCode(errors[i].code);
      errs[i].setMessage(errors[i].message);
      errs[i].setPath(errors[i].path);
    }
    return to_bytes(b);
  }
};

using Run = std::shared_ptr<ApplyRun>;

// The new objects, submitted together; then the answer.
void create_rest(caf::event_based_actor* self, const ApplyEnv& env, const Run& run) {
  if (run->creates.empty()) {
    run->rp.deliver(run->answer());
    return;
  }
  // Which document each created object came from: the submission answers in file order.
  std::vector<std::pair<std::string, size_t>> origin;  // (kind/namespace/name, document)
  auto note = [&](const char* kind, const std::string& ns, const std::string& name, size_t doc) {
    origin.emplace_back(std::string(kind) + "/" + ns + "/" + name, doc);
  };
  const auto& c = run->creates;
  for (const auto& j : c.jobs) note("Job", j.value.namespace_, j.value.name, j.document);
  for (const auto& j : c.batch_jobs)
    note("Job.batch", j.value.namespace_, j.value.name, j.document);
  for (const auto& t : c.templates)
    note("JobTemplate", t.value.namespace_, t.value.name, t.document);
  for (const auto& f : c.flows) note("JobFlow", f.value.namespace_, f.value.name, f.document);
  for (const auto& q : c.queues) note("Queue", "", q.value.name, q.document);
  for (const auto& p : c.priority_classes) note("PriorityClass", "", p.value.name, p.document);
  self->request(env.directory, 120s, create_atom::value, run->id, std::move(run->creates))
      .then(
          [run, origin](std::string& bytes) {
            try {
              FlatReader reader(bytes);
              auto r = reader.root<api::Response>();
              for (auto w : r.getWarnings()) run->warnings.emplace_back(w.cStr());
              if (r.isErrors()) {
                for (auto e : r.getErrors())
                  run->errors.push_back({e.getCode(), e.getMessage(), e.getPath()});
              } else if (r.isSubmitted()) {
                for (auto s : r.getSubmitted()) {
                  Done d{0, s.getKind(), s.getNamespace(), s.getName(), s.getUid(), "created"};
                  auto key = d.kind + "/" + d.ns + "/" + d.name;
                  for (const auto& [k, doc] : origin)
                    if (k == key) d.document = doc;
                  run->done.push_back(std::move(d));
                }
              }
            } catch (const kj::Exception& e) {
              run->errors.push_back({Code::INTERNAL, e.getDescription().cStr(), ""});
            }
            run->rp.deliver(run->answer());
          },
          [self, run](caf::error& err) {
            run->errors.push_back({Code::UNAVAILABLE,
                                   "the new objects were not created: the job directory did not "
                                   "answer (" +
                                       self->system().render(err) + "); retry",
                                   ""});
            run->rp.deliver(run->answer());
          });
}

// What an owner said of one document.
template <class Spec>
void take(const Run& run, std::vector<Parsed<Spec>> ParsedDocuments::*list, Parsed<Spec> doc,
          const char* kind, const std::string& ns, const std::string& name, ApplyOutcome& out) {
  if (!out.found) {
    (run->creates.*list).push_back(std::move(doc));
    return;
  }
  for (const auto& w : out.diags.warnings)
    run->warnings.push_back(to_string(Diagnostic{prefixed(doc.prefix, w.path), w.message}));
  if (!out.diags.ok()) {
    for (const auto& e : out.diags.errors)
      run->errors.push_back({Code::INVALID_ARGUMENT, e.message, prefixed(doc.prefix, e.path)});
    return;
  }
  run->done.push_back(
      {doc.document, kind, ns, name, out.uid, out.changed ? "configured" : "unchanged"});
}

// Sends each document to its owner; `ask(doc)` makes the request.
template <class Spec, class Ask>
void send_updates(caf::event_based_actor* self, const ApplyEnv& env, const Run& run,
                  std::vector<Parsed<Spec>> ParsedDocuments::*list, std::vector<Parsed<Spec>> docs,
                  const char* kind, Ask&& ask) {
  for (auto& doc : docs) {
    std::string ns, name;
    if constexpr (std::is_same_v<Spec, QueueSpec> || std::is_same_v<Spec, PriorityClass>) {
      name = doc.value.name;
    } else {
      ns = doc.value.namespace_;
      name = doc.value.name;
    }
    auto shared = std::make_shared<Parsed<Spec>>(doc);
    auto finish = [self, env, run] {
      if (--run->left == 0) create_rest(self, env, run);
    };
    ask(doc.value).then(
        [run, list, shared, kind, ns, name, finish](ApplyOutcome& out) {
          take(run, list, std::move(*shared), kind, ns, name, out);
          finish();
        },
        [self, run, shared, finish](caf::error& err) {
          run->errors.push_back(
              {Code::UNAVAILABLE,
               "its owner did not answer (" + self->system().render(err) + "); retry",
               prefixed(shared->prefix, "")});
          finish();
        });
  }
}

// The most of each resource one node offers, over every node the membership knows: what the job
// directory's admission checks a pod against too.
ResourceList largest_node(const std::vector<NodeInfo>& nodes) {
  ResourceList out;
  for (const auto& n : nodes)
    for (const auto& [k, v] : n.capacity.values) out.values[k] = std::max(out.get(k), v);
  return out;
}

void start_updates(caf::event_based_actor* self, const ApplyEnv& env, const Run& run,
                   ParsedDocuments docs, AdmissionContext context) {
  run->left = docs.jobs.size() + docs.batch_jobs.size() + docs.templates.size() +
              docs.flows.size() + docs.queues.size() + docs.priority_classes.size();
  send_updates(self, env, run, &ParsedDocuments::queues, std::move(docs.queues), "Queue",
               [&](const QueueSpec& q) {
                 return self->request(env.scheduling, 30s, update_atom::value, q);
               });
  send_updates(self, env, run, &ParsedDocuments::priority_classes, std::move(docs.priority_classes),
               "PriorityClass", [&](const PriorityClass& c) {
                 return self->request(env.scheduling, 30s, update_atom::value, c);
               });
  send_updates(self, env, run, &ParsedDocuments::templates, std::move(docs.templates),
               "JobTemplate", [&](const JobSpec& t) {
                 return self->request(env.flows, 30s, update_atom::value, t, context);
               });
  send_updates(
      self, env, run, &ParsedDocuments::flows, std::move(docs.flows), "JobFlow",
      [&](const JobFlowSpec& f) { return self->request(env.flows, 30s, update_atom::value, f); });
  send_updates(
      self, env, run, &ParsedDocuments::jobs, std::move(docs.jobs), "Job",
      [&](const JobSpec& j) { return self->request(env.directory, 60s, update_atom::value, j); });
  send_updates(self, env, run, &ParsedDocuments::batch_jobs, std::move(docs.batch_jobs),
               "Job.batch", [&](const BatchJobSpec& j) {
                 return self->request(env.directory, 60s, update_atom::value, j);
               });
}

}  // namespace

caf::result<std::string> apply_yaml(caf::event_based_actor* self, const ApplyEnv& env, uint64_t id,
                                    std::string_view text, const std::string& ns) {
  Diagnostics diags;
  auto docs = parse_yaml(text, diags, ns);
  if (docs.empty() && diags.ok())
    diags.error("", "no Job, JobTemplate, JobFlow, Queue or PriorityClass documents found");
  // A file that does not read is refused whole, as kubectl refuses it before sending anything.
  if (!diags.ok()) return diagnostics_response(id, diags);
  auto run = std::make_shared<ApplyRun>();
  run->id = id;
  run->rp = self->make_response_promise<std::string>();
  run->warnings = warning_lines(diags);
  auto shared = std::make_shared<ParsedDocuments>(std::move(docs));
  // What a template's pods may ask is checked against the largest node, as at create.
  self->request(env.membership, 10s, nodes_atom::value)
      .then(
          [self, env, run, shared](std::vector<NodeInfo>& nodes) {
            start_updates(self, env, run, std::move(*shared),
                          AdmissionContext{largest_node(nodes)});
          },
          [self, env, run, shared](caf::error&) {
            start_updates(self, env, run, std::move(*shared), AdmissionContext{});
          });
  return run->rp;
}

caf::result<std::string> operate_queue(caf::event_based_actor* self, const ApplyEnv& env,
                                       uint64_t id, const std::string& name,
                                       const std::string& action) {
  auto rp = self->make_response_promise<std::string>();
  self->request(env.scheduling, 30s, update_atom::value, name, action)
      .then(
          [rp, id, name](ApplyOutcome& out) mutable {
            if (!out.found) {
              rp.deliver(error_response(id, Code::NOT_FOUND,
                                        "queues.scheduling.volcano.sh \"" + name + "\" not found",
                                        "operateQueue.name"));
              return;
            }
            if (!out.diags.ok()) {
              rp.deliver(error_response(id, Code::INVALID_ARGUMENT,
                                        out.diags.errors.front().message, "operateQueue.action"));
              return;
            }
            rp.deliver(ok_response(id));
          },
          [self, rp, id](caf::error& err) mutable {
            rp.deliver(error_response(
                id, Code::UNAVAILABLE,
                "the queue's owner did not answer: " + self->system().render(err) + "; retry"));
          });
  return rp;
}

}  // namespace caldera
