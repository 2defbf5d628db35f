#include "actors/directory/scheduling_names.hpp"

#include "messages/model/batch_job.hpp"

#include "messages/admission/admission.hpp"
#include "messages/model/queue.hpp"

namespace caldera {

bool SchedulingNames::queue_exists(const std::string& name) const {
  if (deleting_queues.count(name)) return false;
  return name == kDefaultQueue || queues.count(name) || creating_queues.count(name);
}

bool SchedulingNames::class_exists(const std::string& name) const {
  if (deleting_classes.count(name)) return false;
  return classes.count(name) || creating_classes.count(name);
}

namespace {

std::string already(const char* resource, const std::string& name) {
  return std::string(resource) + " \"" + name + "\" already exists";
}

}  // namespace

void admit_scheduling(const ParsedDocuments& docs, const SchedulingNames& names,
                      Diagnostics& diags) {
  std::set<std::string> queues, classes;  // this submission's
  for (const auto& q : docs.queues) {
    const auto path = prefixed(q.prefix, "metadata.name");
    Diagnostics one;
    check_dns_label(one, "metadata.name", "the queue's name", q.value.name);
    for (const auto& e : one.errors) diags.error(prefixed(q.prefix, e.path), e.message);
    if (!one.ok()) continue;
    // `default` exists without a document; writing it once sets its weight and capability.
    const bool taken = names.queues.count(q.value.name) ||
                       names.creating_queues.count(q.value.name) ||
                       !queues.insert(q.value.name).second;
    if (taken)
      diags.error(path, already("queues.scheduling.volcano.sh", q.value.name) +
                            " (caldera apply -f changes it)");
  }
  const Parsed<PriorityClass>* new_default = nullptr;
  for (const auto& c : docs.priority_classes) {
    Diagnostics one;
    check_dns_label(one, "metadata.name", "the priority class's name", c.value.name);
    for (const auto& e : one.errors) diags.error(prefixed(c.prefix, e.path), e.message);
    if (!one.ok()) continue;
    if (c.value.name.starts_with("system-"))
      diags.error(prefixed(c.prefix, "metadata.name"),
                  "names starting with \"system-\" are reserved for Kubernetes' system classes");
    if (names.classes.count(c.value.name) || names.creating_classes.count(c.value.name) ||
        !classes.insert(c.value.name).second)
      diags.error(prefixed(c.prefix, "metadata.name"),
                  already("priorityclasses.scheduling.k8s.io", c.value.name) +
                      " (caldera apply -f changes it)");
    if (!c.value.global_default) continue;
    // Kubernetes' rule: at most one class is the global default.
    const std::string other = !names.default_class.empty() ? names.default_class
                              : new_default                ? new_default->value.name
                                                           : "";
    if (!other.empty())
      diags.error(prefixed(c.prefix, "globalDefault"),
                  "PriorityClass \"" + other + "\" is already marked as the global default");
    else
      new_default = &c;
  }
  // Volcano's rule: only an Open queue takes new jobs (a template may still name a closed one).
  std::set<std::string> closed = names.closed_queues;
  for (const auto& q : docs.queues)
    if (q.value.state == kQueueClosed) closed.insert(q.value.name);
  auto check_open = [&](const std::string& queue, const std::string& path) {
    if (closed.count(queue))
      diags.error(path, "queue \"" + queue +
                            "\" is Closed: it takes no new jobs (caldera queue open " + queue +
                            " opens it)");
  };
  auto check_refs = [&](const Parsed<JobSpec>& j) {
    const auto& s = j.value;
    if (!s.queue.empty() && !names.queue_exists(s.queue) && !queues.count(s.queue))
      diags.error(prefixed(j.prefix, "spec.queue"),
                  "queue \"" + s.queue + "\" does not exist (create it with a Queue document)");
    if (!s.priority_class_name.empty() && !names.class_exists(s.priority_class_name) &&
        !classes.count(s.priority_class_name))
      diags.error(prefixed(j.prefix, "spec.priorityClassName"),
                  "no PriorityClass named \"" + s.priority_class_name + "\"");
    for (size_t i = 0; i < s.tasks.size(); ++i) {
      const auto& pc = s.tasks[i].template_.priority_class_name;
      if (!pc.empty() && !names.class_exists(pc) && !classes.count(pc))
        diags.error(prefixed(j.prefix, "spec.tasks[" + std::to_string(i) +
                                           "].template.spec.priorityClassName"),
                    "no PriorityClass named \"" + pc + "\"");
    }
  };
  for (const auto& j : docs.jobs) {
    check_refs(j);
    check_open(j.value.queue.empty() ? kDefaultQueue : j.value.queue,
               prefixed(j.prefix, "spec.queue"));
  }
  for (const auto& j : docs.batch_jobs) {
    auto q = j.value.annotations.find(kQueueNameAnnotation);
    if (q != j.value.annotations.end() && !q->second.empty() && !names.queue_exists(q->second) &&
        !queues.count(q->second))
      diags.error(prefixed(j.prefix, std::string("metadata.annotations.") + kQueueNameAnnotation),
                  "queue \"" + q->second + "\" does not exist (create it with a Queue document)");
    const bool named = q != j.value.annotations.end() && !q->second.empty();
    check_open(named ? q->second : kDefaultQueue,
               prefixed(j.prefix, std::string("metadata.annotations.") + kQueueNameAnnotation));
    const auto& pc = j.value.priority_class_name;
    if (!pc.empty() && !names.class_exists(pc) && !classes.count(pc))
      diags.error(prefixed(j.prefix, "spec.template.spec.priorityClassName"),
                  "no PriorityClass named \"" + pc + "\"");
  }
  for (const auto& t : docs.templates) check_refs(t);
}

}  // namespace caldera
