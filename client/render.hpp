// What the caldera CLI prints: Volcano-shaped JSON, kubectl-style YAML, tables and describe text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/pod_group.hpp"
#include "messages/model/job.hpp"
#include "messages/model/job_flow.hpp"
#include "messages/model/job_template.hpp"
#include "messages/model/node_info.hpp"
#include "messages/model/pod.hpp"
#include "messages/model/priority_class.hpp"
#include "messages/model/queue.hpp"

namespace caldera {

// batch.volcano.sh/v1alpha1 Job with Volcano's field names; unset optionals are left out.
nlohmann::json job_to_json(const Job& job);
// A pod template's container as Kubernetes shows it (a Volcano task's and a batch/v1 Job's).
nlohmann::json container_to_json(const Container& c);
// v1 Pod with the labels Volcano puts on its pods (volcano.sh/job-name, ...).
nlohmann::json pod_to_json(const Pod& pod);
nlohmann::json node_to_json(const NodeInfo& n);
// flow.volcano.sh/v1alpha1 JobTemplate (its spec is a Job's spec) and JobFlow; a flow's status
// lists only the job lists that are not empty.
nlohmann::json template_to_json(const JobTemplate& t);
nlohmann::json flow_to_json(const JobFlow& f);

// A queue as `get queues` shows it: its document and the scheduler's view of it.
struct QueueView {
  Queue queue;
  QueueStatus status;
};
// scheduling.volcano.sh/v1beta1 Queue (status: allocated, deserved, pending, running) and
// scheduling.k8s.io/v1 PriorityClass.
nlohmann::json queue_to_json(const QueueView& q);
nlohmann::json priority_class_to_json(const PriorityClass& c);

// Block-style YAML of any JSON value, quoting strings only where YAML would misread them.
std::string to_yaml(const nlohmann::json& j);

// kubectl-aligned tables (header in caps, columns 3 spaces apart); "No resources found." when
// empty. `namespaces` (get -A) puts a NAMESPACE column first, as -o wide does for jobs.
std::string jobs_table(const std::vector<Job>& jobs, bool wide, int64_t now_ms,
                       bool namespaces = false);
std::string pods_table(const std::vector<Pod>& pods, bool wide, int64_t now_ms,
                       bool namespaces = false);
// NAME STATUS MINMEMBER RUNNINGS AGE (wide: QUEUE and the condition's message).
std::string pod_groups_table(const std::vector<PodGroupView>& groups, bool wide, int64_t now_ms,
                             bool namespaces = false);
std::string nodes_table(const std::vector<NodeInfo>& nodes, bool wide, int64_t now_ms);
// NAME AGE (wide: TASKS REPLICAS) and NAME STATUS AGE (wide: FLOWS RETAIN).
std::string templates_table(const std::vector<JobTemplate>& templates, bool wide, int64_t now_ms);
std::string flows_table(const std::vector<JobFlow>& flows, bool wide, int64_t now_ms);
// NAME WEIGHT CAPABILITY ALLOCATED DESERVED PENDING RUNNING AGE (wide: RECLAIMABLE).
std::string queues_table(const std::vector<QueueView>& queues, bool wide, int64_t now_ms);
// kubectl's NAME VALUE GLOBAL-DEFAULT AGE PREEMPTIONPOLICY (wide: DESCRIPTION).
std::string priority_classes_table(const std::vector<PriorityClass>& classes, bool wide,
                                   int64_t now_ms);

// `kubectl describe`-style text of a job and its pods, and of one pod.
std::string describe_job(const Job& job, const std::vector<Pod>& pods, int64_t now_ms);
std::string describe_pod(const Pod& pod, int64_t now_ms);
// A JobFlow: its phase, its DAG in depth order with each job's phase and times, and every job's
// running histories.
std::string describe_flow(const JobFlow& flow, int64_t now_ms);

// The last `n` lines of `text` (kubectl logs --tail): a final line without its newline counts.
std::string last_lines(std::string_view text, int64_t n);

// kubectl's human age: 5s, 119s, 3m12s, 15m, 2h30m, 20h, 4d3h, 30d, 2y100d.
std::string format_age(int64_t ms);

// "2023-11-14T22:13:20Z": RFC 3339 in UTC, to the second, as Kubernetes prints timestamps.
std::string format_timestamp(int64_t ms);

// A duration the way Volcano's YAML accepts it: 300000 -> "300s", 12500 -> "12.5s".
std::string format_duration(int64_t ms);

}  // namespace caldera
