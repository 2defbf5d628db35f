#include "messages/yaml/yaml_pod.hpp"

namespace caldera {
namespace {

std::vector<EnvVar> read_env(YamlContext& ctx, const YamlNode& node, const std::string& path) {
  std::vector<EnvVar> out;
  auto items = read_sequence(ctx, node, path);
  if (!items) return out;
  for (size_t i = 0; i < items->size(); ++i) {
    MapReader m(ctx, (*items)[i], index_path(path, i));
    if (!m.valid()) continue;
    EnvVar var;
    m.str("name", var.name);
    m.str("value", var.value);
    auto from = m.get("valueFrom");
    m.warn_unknown();
    if (from) {
      // The pod's own fields are caldera's to give (the downward API); Secrets, ConfigMaps and
      // resource fields need the Kubernetes API.
      MapReader v(ctx, *from, m.path("valueFrom"));
      auto field = v.get("fieldRef");
      for (const char* other : {"secretKeyRef", "configMapKeyRef", "resourceFieldRef"})
        v.get(other);  // said below, once
      v.warn_unknown();
      if (!field) {
        ctx.warn(m.path("valueFrom"),
                 "only valueFrom.fieldRef is read (the pod's own fields); the others need the "
                 "Kubernetes API, which caldera does not have: variable skipped");
        continue;
      }
      MapReader f(ctx, *field, v.path("fieldRef"));
      f.str("fieldPath", var.field_path);
      // Kubernetes' only version of the pod's fields: read as it says, so nothing to warn about.
      std::string version = "v1";
      f.str("apiVersion", version);
      if (!version.empty() && version != "v1")  // Kubernetes reads "" as v1
        ctx.error(f.path("apiVersion"), "fieldRef apiVersion \"" + version +
                                            "\" is not v1, the "
                                            "only version of a pod's fields");
      f.warn_unknown();
      if (!field_path_known(var.field_path)) {
        ctx.error(f.path("fieldPath"),
                  "fieldPath \"" + var.field_path +
                      "\" is not one caldera gives: metadata.name, metadata.namespace, "
                      "metadata.uid, metadata.labels['KEY'], metadata.annotations['KEY'], "
                      "spec.nodeName, status.hostIP, status.podIP");
        continue;
      }
    }
    out.push_back(std::move(var));
  }
  return out;
}

void read_resources(YamlContext& ctx, const YamlNode& node, const std::string& path, Container& c) {
  MapReader m(ctx, node, path);
  m.quantities("requests", c.requests);
  m.quantities("limits", c.limits);
  m.ignore({"claims"});
  m.warn_unknown();
}

Container read_container(YamlContext& ctx, const YamlNode& node, const std::string& path) {
  Container c;
  MapReader m(ctx, node, path);
  m.str("name", c.name);
  m.str("image", c.image);
  m.strings("command", c.command);
  m.strings("args", c.args);
  if (auto n = m.get("env")) c.env = read_env(ctx, *n, m.path("env"));
  m.str("workingDir", c.working_dir);
  if (auto n = m.get("resources")) read_resources(ctx, *n, m.path("resources"), c);
  m.ignore({"imagePullPolicy", "ports", "volumeMounts", "volumeDevices", "securityContext",
            "livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "stdin", "stdinOnce",
            "tty", "terminationMessagePath", "terminationMessagePolicy", "envFrom", "resizePolicy",
            "restartPolicy"});
  m.warn_unknown();
  return c;
}

// A pod's toleration, checked as Kubernetes' API server checks it.
Toleration read_toleration(YamlContext& ctx, const YamlNode& node, const std::string& path) {
  Toleration t;
  MapReader m(ctx, node, path);
  m.str("key", t.key);
  std::string op;
  m.str("operator", op);
  if (!op.empty()) t.op = op;
  m.str("value", t.value);
  m.str("effect", t.effect);
  m.i64("tolerationSeconds", t.seconds);
  m.warn_unknown();
  if (t.op != "Equal" && t.op != "Exists")
    ctx.error(m.path("operator"), "\"" + t.op + "\" is not an operator; use Equal or Exists");
  else if (t.op == "Exists" && !t.value.empty())
    ctx.error(m.path("value"), "must be empty when operator is Exists");
  else if (t.key.empty() && t.op != "Exists")
    ctx.error(m.path("operator"), "must be Exists when key is empty (a toleration of every taint)");
  if (!t.effect.empty() && t.effect != "NoSchedule" && t.effect != "PreferNoSchedule" &&
      t.effect != "NoExecute")
    ctx.error(m.path("effect"), "\"" + t.effect +
                                    "\" is not an effect; use NoSchedule, PreferNoSchedule or "
                                    "NoExecute (or none, for all three)");
  else if (t.seconds && !t.effect.empty() && t.effect != "NoExecute")
    ctx.error(m.path("tolerationSeconds"), "is for effect NoExecute only");
  return t;
}

}  // namespace

PodTemplate read_pod_template(YamlContext& ctx, const YamlNode& node, const std::string& path,
                              std::string* priority_class) {
  PodTemplate t;
  MapReader root(ctx, node, path);
  if (auto n = root.get("metadata")) {
    MapReader meta(ctx, *n, root.path("metadata"));
    meta.string_map("labels", t.labels);
    meta.string_map("annotations", t.annotations);
    meta.ignore({"name", "namespace", "generateName", "uid", "resourceVersion", "ownerReferences",
                 "finalizers", "creationTimestamp"});
    meta.warn_unknown();
  }
  if (auto n = root.get("spec")) {
    MapReader spec(ctx, *n, root.path("spec"));
    if (auto c = spec.get("containers")) {
      const std::string cpath = spec.path("containers");
      if (auto items = read_sequence(ctx, *c, cpath))
        for (size_t i = 0; i < items->size(); ++i)
          t.containers.push_back(read_container(ctx, (*items)[i], index_path(cpath, i)));
    }
    spec.str("restartPolicy", t.restart_policy);
    spec.string_map("nodeSelector", t.node_selector);
    if (auto n = spec.get("tolerations")) {
      const std::string tpath = spec.path("tolerations");
      if (auto items = read_sequence(ctx, *n, tpath))
        for (size_t i = 0; i < items->size(); ++i)
          t.tolerations.push_back(read_toleration(ctx, (*items)[i], index_path(tpath, i)));
    }
    spec.i64("terminationGracePeriodSeconds", t.termination_grace_seconds);
    // A Kubernetes Job's template names the job's class; a Volcano task's, its pods' order.
    spec.str("priorityClassName", priority_class ? *priority_class : t.priority_class_name);
    if (!t.restart_policy.empty() && t.restart_policy != "Never")
      ctx.warn(spec.path("restartPolicy"),
               "only restartPolicy Never is implemented: a failed pod is handled by the job's "
               "policies, never restarted in place");
    spec.ignore({"volumes",
                 "initContainers",
                 "nodeName",
                 "affinity",
                 "schedulerName",
                 "serviceAccountName",
                 "serviceAccount",
                 "automountServiceAccountToken",
                 "imagePullSecrets",
                 "hostNetwork",
                 "hostPID",
                 "hostIPC",
                 "dnsPolicy",
                 "dnsConfig",
                 "hostname",
                 "subdomain",
                 "securityContext",
                 "priorityClassName",
                 "priority",
                 "runtimeClassName",
                 "activeDeadlineSeconds",
                 "topologySpreadConstraints",
                 "enableServiceLinks",
                 "shareProcessNamespace",
                 "hostAliases",
                 "preemptionPolicy",
                 "overhead",
                 "readinessGates",
                 "ephemeralContainers",
                 "os",
                 "schedulingGates"});
    spec.warn_unknown();
  }
  root.warn_unknown();
  return t;
}

}  // namespace caldera
