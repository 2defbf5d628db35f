#include "messages/yaml/yaml_scheduling.hpp"

namespace caldera {
namespace {

// Cluster-scoped: a name, and no namespace (a namespace is a warning, as kubectl ignores it).
// Labels and annotations are kept where the object has them.
void read_cluster_metadata(YamlContext& ctx, MapReader& root, const std::string& kind,
                           std::string& name, std::map<std::string, std::string>* labels = nullptr,
                           std::map<std::string, std::string>* annotations = nullptr) {
  auto n = root.get("metadata");
  if (!n) return;
  MapReader m(ctx, *n, "metadata");
  m.str("name", name);
  if (m.get("namespace"))
    ctx.warn("metadata.namespace", "a " + kind + " is cluster-scoped: its namespace is ignored");
  if (labels) m.string_map("labels", *labels);
  if (annotations) m.string_map("annotations", *annotations);
  if (!labels) m.ignore({"labels", "annotations"});
  m.ignore({"generateName", "uid", "resourceVersion", "generation", "creationTimestamp",
            "deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences", "finalizers",
            "managedFields", "selfLink"});
  m.warn_unknown();
}

}  // namespace

void read_queue(YamlContext& ctx, MapReader& root, QueueSpec& out) {
  read_cluster_metadata(ctx, root, "Queue", out.name, &out.labels, &out.annotations);
  // Kept with the queue, but not honoured: the user hears it at submit, not from a share that
  // comes out flat.
  for (const char* key : {"volcano.sh/hierarchy", "volcano.sh/hierarchy-weights"})
    if (out.annotations.count(key))
      ctx.warn(std::string("metadata.annotations.") + key,
               "hierarchical queues are not built yet: this queue is shared as a flat one and "
               "the annotation is ignored");
  if (auto n = root.get("spec")) {
    MapReader spec(ctx, *n, "spec");
    if (auto w = spec.get("weight"))
      if (auto v = read_int(ctx, *w, spec.path("weight"), 1, 65535))
        out.weight = static_cast<int32_t>(*v);
    if (spec.get("capability")) {
      ResourceList cap;
      spec.quantities("capability", cap);
      out.capability = std::move(cap);
    }
    if (auto r = spec.get("reclaimable"))
      if (auto v = read_bool(ctx, *r, spec.path("reclaimable"))) out.reclaimable = *v;
    spec.ignore({"guarantee", "extendClusters", "affinity", "type", "parent", "deserved",
                 "priority", "dequeueStrategy"});
    spec.warn_unknown();
  }
  // Volcano's webhook takes status.state from the file (Open or Closed); the rest of a status
  // is what `get -o yaml` wrote, and is the cluster's to say.
  if (auto n = root.get("status")) {
    MapReader status(ctx, *n, "status");
    if (auto st = status.get("state"))
      if (auto v = read_string(ctx, *st, status.path("state"))) {
        // Closing is what `get -o yaml` writes of a Closed queue whose jobs still run: read
        // back, it asks for what it says.
        if (*v == kQueueOpen || *v == kQueueClosed || *v == kQueueClosing)
          out.state = *v == kQueueOpen ? kQueueOpen : kQueueClosed;
        else
          ctx.error(status.path("state"),
                    "queue state \"" + *v + "\" is not one of " + kQueueOpen + ", " + kQueueClosed);
      }
    // The rest is the cluster's report, read back from `get -o yaml`: known, and not a request.
    for (const char* reported : {"allocated", "deserved", "pending", "inqueue", "running",
                                 "unknown", "completed", "reservation", "conditions"})
      status.get(reported);
    status.warn_unknown();
  }
}

void read_priority_class(YamlContext& ctx, MapReader& root, PriorityClass& out) {
  read_cluster_metadata(ctx, root, "PriorityClass", out.name);
  if (auto v = root.get("value")) {
    if (auto n = read_int(ctx, *v, "value", -kMaxUserPriority, kMaxUserPriority))
      out.value = static_cast<int32_t>(*n);
  } else {
    ctx.error("value",
              "value is required (an integer up to " + std::to_string(kMaxUserPriority) + ")");
  }
  if (auto p = root.get("preemptionPolicy")) {
    if (auto s = read_string(ctx, *p, "preemptionPolicy")) {
      if (*s != kPreemptLowerPriority && *s != kPreemptNever)
        ctx.error("preemptionPolicy", "preemptionPolicy \"" + *s + "\" is not one of " +
                                          kPreemptLowerPriority + ", " + kPreemptNever);
      else
        out.preemption_policy = *s;
    }
  }
  if (auto g = root.get("globalDefault"))
    if (auto v = read_bool(ctx, *g, "globalDefault")) out.global_default = *v;
  root.str("description", out.description);
}

}  // namespace caldera
