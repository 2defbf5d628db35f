// Volcano's JobFlow (flow.volcano.sh/v1alpha1): JobTemplates run as jobs in dependency order.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "messages/model/job_spec.hpp"
#include "messages/model/job_status.hpp"

namespace caldera {

// Volcano's JobFlow phases.
enum class FlowPhase { Pending, Running, Succeed, Failed, Terminating };

std::string_view to_string(FlowPhase p);
std::optional<FlowPhase> parse_flow_phase(std::string_view s);
inline bool is_finished(FlowPhase p) {
  return p == FlowPhase::Succeed || p == FlowPhase::Failed || p == FlowPhase::Terminating;
}

// Volcano's probe TaskStatus (reserved there, run here): a target counts as reached once a pod
// of its task `task_name` is in `phase` (Running or Succeeded), without waiting for the whole
// target job to complete.
struct TaskProbe {
  std::string task_name;
  std::string phase;
  bool operator==(const TaskProbe&) const = default;
};

// Volcano's probe HttpGet (reserved there, run here): a target counts as reached once a Running
// pod of its task `task_name` answers GET `path` on `port` at its node's address with a status
// from 200 to 399, as a kubelet's httpGet probe counts.
struct HttpGetProbe {
  std::string task_name;
  std::string path = "/";
  int32_t port = 0;
  std::string header_name;  // Volcano's httpHeader: one header sent with the request, if named
  std::string header_value;
  bool operator==(const HttpGetProbe&) const = default;
};

// Volcano's probe TcpSocket: a target counts as reached once a Running pod of its task
// `task_name` accepts a connection on `port`.
struct TcpSocketProbe {
  std::string task_name;
  int32_t port = 0;
  bool operator==(const TcpSocketProbe&) const = default;
};

// Without probes each target must complete; with them, a target also counts as reached once
// any one probe passes.
struct FlowDependsOn {
  std::vector<std::string> targets;   // names of other flows of the same JobFlow
  std::vector<TaskProbe> probe = {};  // taskStatusList
  std::vector<HttpGetProbe> http_get = {};
  std::vector<TcpSocketProbe> tcp_socket = {};
  bool operator==(const FlowDependsOn&) const = default;

  bool probes_endpoints() const { return !http_get.empty() || !tcp_socket.empty(); }
  bool has_probes() const { return !probe.empty() || probes_endpoints(); }
};

struct Flow {
  std::string name;  // also the name of the JobTemplate it runs
  std::optional<FlowDependsOn> depends_on;
  int32_t retry = 0;  // a Failed job is created again up to this many times (volcano#3838)
  // Applied over the JobTemplate's spec when the job is created: what it sets replaces the
  // template's (tasks and containers matched by name, env, resources, labels and annotations
  // merged key by key); what it leaves unset (replicas 0, an empty queue) stays.
  std::optional<JobSpec> patch = std::nullopt;
  bool operator==(const Flow&) const = default;
};

struct JobFlowSpec {
  std::string name;
  std::string namespace_ = "default";
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::vector<Flow> flows;
  std::string job_retain_policy = "retain";  // "retain" | "delete"
  bool operator==(const JobFlowSpec&) const = default;

  std::string key() const { return namespace_ + "/" + name; }
};

// The job a flow creates: Volcano's getJobName, "<flow>-<template>".
inline std::string flow_job_name(const std::string& job_flow, const std::string& flow) {
  return job_flow + "-" + flow;
}

// One phase a flow's job went through, as its flow saw it.
struct JobRunningHistory {
  std::string state;     // the job's phase
  int64_t start_ms = 0;  // when the flow saw it enter the phase
  int64_t end_ms = 0;    // when it left it; 0 while it is still there
  bool operator==(const JobRunningHistory&) const = default;
};

// Volcano's JobFlow JobStatus: one per flow entry whose job was created.
struct FlowJobStatus {
  std::string name;  // the job's name, "<jobflow>-<flow>"
  std::string uid;   // the job the flow created last for this entry
  std::string state;
  int64_t start_ms = 0;       // the job's creation
  int64_t end_ms = 0;         // when it finished; 0 while not
  int32_t restart_count = 0;  // how many times `retry` created it again
  std::vector<JobRunningHistory> running_histories;
  bool operator==(const FlowJobStatus&) const = default;
};

// Volcano's JobFlow Condition, by job name.
struct FlowJobCondition {
  std::string phase;
  int64_t create_ms = 0;
  int64_t running_duration_ms = 0;
  std::map<std::string, TaskStatusCount> task_status_count;
  bool operator==(const FlowJobCondition&) const = default;
};

struct JobFlowStatus {
  std::string phase = "Pending";  // Volcano's flow phases: Pending, Running, Succeed, Failed, ...
  std::string reason;             // why it is Failed: the job that failed, and its own reason
  std::string message;
  int64_t last_transition_ms = 0;
  std::vector<std::string> pending_jobs;
  std::vector<std::string> running_jobs;
  std::vector<std::string> completed_jobs;
  std::vector<std::string> failed_jobs;
  std::vector<std::string> terminated_jobs;
  std::vector<std::string> unknown_jobs;
  std::vector<FlowJobStatus> job_status_list;  // in the spec's order
  std::map<std::string, FlowJobCondition> conditions;
  bool operator==(const JobFlowStatus&) const = default;
};

struct JobFlow {
  std::string uid;
  int64_t created_ms = 0;
  JobFlowSpec spec;
  JobFlowStatus status;
  bool operator==(const JobFlow&) const = default;
};

}  // namespace caldera
