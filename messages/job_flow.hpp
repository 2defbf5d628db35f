// Volcano's JobFlow (flow.volcano.sh/v1alpha1): JobTemplates run as jobs in dependency order.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace caldera {

struct FlowDependsOn {
  std::vector<std::string> targets;  // names of other flows of the same JobFlow
  bool operator==(const FlowDependsOn&) const = default;
};

struct Flow {
  std::string name;  // also the name of the JobTemplate it runs
  std::optional<FlowDependsOn> depends_on;
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

struct JobFlowStatus {
  std::string phase = "Pending";  // Volcano's flow phases: Pending, Running, Succeed, Failed, ...
  std::vector<std::string> pending_jobs;
  std::vector<std::string> running_jobs;
  std::vector<std::string> completed_jobs;
  std::vector<std::string> failed_jobs;
  std::vector<std::string> terminated_jobs;
  std::vector<std::string> unknown_jobs;
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
