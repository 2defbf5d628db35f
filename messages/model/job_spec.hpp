// Volcano's Job specification (batch.volcano.sh/v1alpha1), as plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "messages/model/batch_job_fields.hpp"
#include "messages/model/lifecycle.hpp"
#include "messages/model/resources.hpp"
#include "messages/model/taint.hpp"

namespace caldera {

struct EnvVar {
  std::string name;
  std::string value;
  // valueFrom.fieldRef.fieldPath (Kubernetes' downward API): the value is this field of the pod,
  // read as it starts (kFieldPaths); "" for a plain value.
  std::string field_path = {};
  bool operator==(const EnvVar&) const = default;
};

// The fieldRef paths a pod's variables may name, as Kubernetes offers them to env; labels and
// annotations as metadata.labels['KEY'] and metadata.annotations['KEY'].
inline constexpr const char* kFieldPaths[] = {"metadata.name", "metadata.namespace",
                                              "metadata.uid",  "spec.nodeName",
                                              "status.hostIP", "status.podIP"};

// metadata.labels['KEY'] -> ("labels", KEY), metadata.annotations['KEY'] -> ("annotations", KEY);
// nullopt for any other path.
std::optional<std::pair<std::string, std::string>> metadata_field(std::string_view path);
// A path of kFieldPaths, or a label's or an annotation's.
bool field_path_known(std::string_view path);

struct Container {
  std::string name;
  std::string image;  // accepted for compatibility and ignored: caldera runs `command`
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::vector<EnvVar> env;
  std::string working_dir;
  ResourceList requests;
  ResourceList limits;
  bool operator==(const Container&) const = default;
};

struct PodTemplate {
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::vector<Container> containers;
  std::string restart_policy;  // only "Never" semantics are implemented; others warn
  std::map<std::string, std::string> node_selector;  // labels the pod's node must have
  std::vector<Toleration> tolerations;               // the node taints it may go past
  // Between SIGTERM and SIGKILL when the pod is stopped; unset: kPodGraceMs, and kLeaseStopGraceMs
  // when its node's lease runs out (messages/model/pod.hpp).
  std::optional<int64_t> termination_grace_seconds;
  // A Volcano task's pods' PriorityClass (Volcano's task priority): which pods of its gang go
  // first when not all fit. "": the job's order only.
  std::string priority_class_name;
  bool operator==(const PodTemplate&) const = default;
};

struct DependsOn {
  std::vector<std::string> names;
  std::string iteration = "all";  // "any" | "all"
  // What "ready" means for a dependency: minAvailable pods "Running" (or succeeded), as in
  // Volcano, or minAvailable pods "Succeeded", so that tasks can form a DAG (volcano#2135).
  std::string condition = "Running";
  bool operator==(const DependsOn&) const = default;
};

struct PartitionPolicy {
  int32_t partition_size = 0;
  int32_t min_partitions = 0;
  bool operator==(const PartitionPolicy&) const = default;
};

struct TaskSpec {
  std::string name;
  int32_t replicas = 0;
  std::optional<int32_t> min_available;
  std::optional<int32_t> max_retry;
  std::vector<LifecyclePolicy> policies;
  std::optional<DependsOn> depends_on;
  std::optional<PartitionPolicy> partition_policy;
  PodTemplate template_;
  bool operator==(const TaskSpec&) const = default;
};

struct Plugin {
  std::string name;
  std::vector<std::string> args;
  bool operator==(const Plugin&) const = default;
};

// Where Volcano's ssh plugin shows the job's keys unless --ssh-key-file-path says otherwise.
inline constexpr const char* kSshKeyFilePath = "/root/.ssh";

// "--master=chief" from a plugin's argument list (Volcano's flag syntax), or the fallback.
std::string plugin_arg(const Plugin& p, const std::string& key, const std::string& fallback);

struct JobSpec;
// Whether a plugin of `spec` gives the container `container` of task `task` its command (ray's
// head and worker containers: `ray start`), so that the template may leave it out.
bool plugin_sets_command(const JobSpec& spec, const std::string& task,
                         const std::string& container);

struct JobSpec {
  std::string name;
  std::string namespace_ = "default";
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::optional<int32_t> min_available;  // unset: the sum of replicas
  std::optional<int32_t> min_success;
  std::optional<int32_t> max_retry;  // unset: 3
  std::string queue = "default";
  std::string priority_class_name;
  std::string scheduler_name;
  std::vector<LifecyclePolicy> policies;
  std::vector<Plugin> plugins;
  std::optional<int64_t> ttl_seconds_after_finished;
  std::optional<int64_t> active_deadline_seconds;
  std::vector<TaskSpec> tasks;
  // Set: a Kubernetes Job (batch/v1) rather than a Volcano Job, run by its own controller, with
  // one task (kBatchJobTask). The kinds have names of their own: one of each may share a name.
  std::optional<BatchJobFields> batch;
  // metadata.generation: 1 at create, one more at each change `caldera apply` makes.
  int64_t generation = 1;
  bool operator==(const JobSpec&) const = default;

  int32_t total_replicas() const;
  int32_t effective_min_available() const;  // min_available, or total_replicas() when unset
  int32_t effective_max_retry() const;      // max_retry, or 3 when unset
  std::string key() const;
};

// Whether the job or one of its tasks names PriorityClass `name` (which then may not be deleted).
bool names_priority_class(const JobSpec& spec, const std::string& name);
// The classes its tasks name (Volcano's task priority), each once.
std::vector<std::string> task_priority_classes(const JobSpec& spec);

// A job's key: namespace/name, and namespace/jobs.batch/name for a batch/v1 Job (a Volcano Job's
// name is a DNS label, without dots). The namespace runs up to the first '/', the name from the
// last.
std::string job_key(std::string_view ns, std::string_view name, bool batch);
// Whether the key is a batch/v1 Job's.
bool is_batch_job_key(std::string_view key);

// kubectl's name of a batch/v1 Job's resource.
inline constexpr const char* kBatchJobResource = "jobs.batch";

// The one task of a batch/v1 Job: its pods have no task of their own.
inline constexpr const char* kBatchJobTask = "";

// Annotations on a task template that make its pods simulated (a timer instead of processes).
inline constexpr const char* kSimDurationAnnotation = "caldera.io/sim-duration-ms";
inline constexpr const char* kSimExitCodeAnnotation = "caldera.io/sim-exit-code";
// On a job: "immediately" has the pods of a lost node replaced as soon as it is NotReady, before
// its lease is over, though they may still run there for a while (speed over safety).
inline constexpr const char* kReplaceLostPodsAnnotation = "caldera.io/replace-lost-pods";

}  // namespace caldera
