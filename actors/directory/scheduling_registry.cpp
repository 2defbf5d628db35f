#include "actors/directory/scheduling_registry.hpp"

#include <capnp/message.h>
#include <kj/exception.h>
#include <spdlog/spdlog.h>

#include "actors/api/responses.hpp"
#include "messages/admission.hpp"
#include "messages/flat.hpp"
#include "messages/queue_codec.hpp"

namespace caldera {

bool SchedulingRegistry::queue_exists(const std::string& name) const {
  if (deleting_queues.count(name)) return false;
  return name == kDefaultQueue || queues.count(name) || creating_queues.count(name);
}

bool SchedulingRegistry::class_exists(const std::string& name) const {
  if (deleting_classes.count(name)) return false;
  return classes.count(name) || creating_classes.count(name);
}

std::vector<Queue> SchedulingRegistry::all_queues() const {
  std::vector<Queue> out;
  if (!queues.count(kDefaultQueue)) out.push_back(Queue{"", 0, QueueSpec{kDefaultQueue}});
  for (const auto& [name, q] : queues) out.push_back(q);
  return out;
}

std::vector<PriorityClass> SchedulingRegistry::all_classes() const {
  std::vector<PriorityClass> out;
  for (const auto& [name, c] : classes) out.push_back(c);
  return out;
}

std::string queue_key(const std::string& name) {
  return "queue/" + name;
}

std::string priority_class_key(const std::string& name) {
  return "priorityclass/" + name;
}

std::string queue_record(const Queue& q) {
  SmallMessageBuilder b;
  encode(q, b.initRoot<api::Queue>());
  return to_bytes(b);
}

std::string priority_class_record(const PriorityClass& c) {
  SmallMessageBuilder b;
  encode(c, b.initRoot<api::PriorityClass>());
  return to_bytes(b);
}

void recover(SchedulingRegistry& registry, Store& store) {
  store.scan(Family::Scheduling, [&](std::string_view key, std::string_view value) {
    try {
      FlatReader reader(value);
      if (key.starts_with("queue/")) {
        auto q = decode(reader.root<api::Queue>());
        registry.queues[q.spec.name] = std::move(q);
      } else if (key.starts_with("priorityclass/")) {
        auto c = decode(reader.root<api::PriorityClass>());
        registry.classes[c.name] = std::move(c);
      } else {
        spdlog::error("store: unknown scheduling record {}, skipped", key);
      }
    } catch (const kj::Exception& e) {
      spdlog::error("store: corrupt scheduling record {}, skipped: {}", key,
                    e.getDescription().cStr());
    }
  });
}

namespace {

std::string already(const char* resource, const std::string& name) {
  return std::string(resource) + " \"" + name + "\" already exists";
}

}  // namespace

void admit_scheduling(const ParsedDocuments& docs, const SchedulingRegistry& registry,
                      Diagnostics& diags) {
  std::set<std::string> queues, classes;  // this submission's
  for (const auto& q : docs.queues) {
    const auto path = prefixed(q.prefix, "metadata.name");
    Diagnostics one;
    check_dns_label(one, "metadata.name", "the queue's name", q.value.name);
    for (const auto& e : one.errors) diags.error(prefixed(q.prefix, e.path), e.message);
    if (!one.ok()) continue;
    // `default` exists without a document; writing it once sets its weight and capability.
    const bool taken = registry.queues.count(q.value.name) ||
                       registry.creating_queues.count(q.value.name) ||
                       !queues.insert(q.value.name).second;
    if (taken)
      diags.error(path, already("queues.scheduling.volcano.sh", q.value.name) +
                            " (to change it, delete it once no job or template uses it)");
  }
  const PriorityClass* stored_default = nullptr;
  for (const auto& [name, c] : registry.classes)
    if (c.global_default) stored_default = &c;
  const Parsed<PriorityClass>* new_default = nullptr;
  for (const auto& c : docs.priority_classes) {
    Diagnostics one;
    check_dns_label(one, "metadata.name", "the priority class's name", c.value.name);
    for (const auto& e : one.errors) diags.error(prefixed(c.prefix, e.path), e.message);
    if (!one.ok()) continue;
    if (c.value.name.starts_with("system-"))
      diags.error(prefixed(c.prefix, "metadata.name"),
                  "names starting with \"system-\" are reserved for Kubernetes' system classes");
    if (registry.classes.count(c.value.name) || registry.creating_classes.count(c.value.name) ||
        !classes.insert(c.value.name).second)
      diags.error(prefixed(c.prefix, "metadata.name"),
                  already("priorityclasses.scheduling.k8s.io", c.value.name));
    if (!c.value.global_default) continue;
    // Kubernetes' rule: at most one class is the global default.
    const std::string other = stored_default ? stored_default->name
                              : new_default  ? new_default->value.name
                                             : "";
    if (!other.empty())
      diags.error(prefixed(c.prefix, "globalDefault"),
                  "PriorityClass \"" + other + "\" is already marked as the global default");
    else
      new_default = &c;
  }
  auto check_refs = [&](const Parsed<JobSpec>& j) {
    const auto& s = j.value;
    if (!s.queue.empty() && !registry.queue_exists(s.queue) && !queues.count(s.queue))
      diags.error(prefixed(j.prefix, "spec.queue"),
                  "queue \"" + s.queue + "\" does not exist (create it with a Queue document)");
    if (!s.priority_class_name.empty() && !registry.class_exists(s.priority_class_name) &&
        !classes.count(s.priority_class_name))
      diags.error(prefixed(j.prefix, "spec.priorityClassName"),
                  "no PriorityClass named \"" + s.priority_class_name + "\"");
  };
  for (const auto& j : docs.jobs) check_refs(j);
  for (const auto& t : docs.templates) check_refs(t);
}

}  // namespace caldera
