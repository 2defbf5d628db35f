// Reads Volcano YAML (one or more documents) into Job, JobTemplate, JobFlow, Queue and
// PriorityClass objects, and Kubernetes Jobs (batch/v1).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "messages/model/batch_job.hpp"
#include "messages/model/diagnostic.hpp"
#include "messages/model/job_flow.hpp"
#include "messages/model/job_spec.hpp"
#include "messages/model/priority_class.hpp"
#include "messages/model/queue.hpp"

namespace caldera {

// One object read from a document, with where it came from, so that later checks (admission,
// name clashes) report paths the user can find in a file that mixes kinds.
template <class T>
struct Parsed {
  T value;
  std::string prefix;   // "documents[N]." when the text holds several documents, else ""
  size_t document = 0;  // index among the non-empty documents
};

struct ParsedDocuments {
  std::vector<Parsed<JobSpec>> jobs;             // `kind: Job` of Volcano, in file order
  std::vector<Parsed<BatchJobSpec>> batch_jobs;  // `kind: Job` of Kubernetes (batch/v1)
  std::vector<Parsed<JobSpec>> templates;  // `kind: JobTemplate`: its metadata and its Job spec
  std::vector<Parsed<JobFlowSpec>> flows;  // `kind: JobFlow`
  std::vector<Parsed<QueueSpec>> queues;   // `kind: Queue`
  std::vector<Parsed<PriorityClass>> priority_classes;  // `kind: PriorityClass`

  bool empty() const {
    return jobs.empty() && batch_jobs.empty() && templates.empty() && flows.empty() &&
           queues.empty() && priority_classes.empty();
  }
};

// Mappings and lists nested deeper than this are refused before the text is loaded.
inline constexpr int kMaxYamlDepth = 100;

// Parses every document. Problems land in `diags` with field paths ("spec.tasks[1].replicas"; when
// the text holds several documents, prefixed "documents[N]."). Unknown fields are warnings.
// A NUL byte anywhere, or nesting deeper than kMaxYamlDepth, rejects the whole text.
// `default_namespace` (kubectl -n), when not empty, is the namespace of documents that name none,
// and a document naming another one is an error at its metadata.namespace. Never throws.
ParsedDocuments parse_yaml(std::string_view text, Diagnostics& diags,
                           std::string_view default_namespace = {});

}  // namespace caldera
