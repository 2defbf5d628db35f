// Turns a task's pod template into what a node runs for one pod: containers with their env.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "actors/job/core/pod_table.hpp"
#include "actors/job/core/ssh_key_pair.hpp"
#include "messages/admission/admission.hpp"
#include "messages/model/job_spec.hpp"
#include "messages/model/pod.hpp"

namespace caldera {

struct PodRuntime {
  std::vector<Container> containers;       // env includes VK_TASK_INDEX, VC_TASK_INDEX, ...
  ResourceList requests;                   // the pod's total, including one "pods" slot
  std::optional<int64_t> sim_duration_ms;  // set: a simulated pod (a timer, no process)
  int32_t sim_exit_code = 0;
  std::map<std::string, std::string> files;         // plugin files, relative to the pod's directory
  std::map<std::string, std::string> views;         // where the pod sees them (PluginOutput::views)
  int64_t grace_ms = kPodGraceMs;                   // pod_grace_ms
  int64_t lease_stop_grace_ms = kLeaseStopGraceMs;  // lease_stop_grace_ms
};

// The grace period between SIGTERM and SIGKILL of a pod of this task: its template's
// terminationGracePeriodSeconds, else kPodGraceMs.
int64_t pod_grace_ms(const JobSpec& spec, const std::string& task_name);

// The same when the pod is stopped because its node's lease ran out: the template's
// terminationGracePeriodSeconds, else kLeaseStopGraceMs (a replacement elsewhere waits for it, so
// a pod that asks for nothing gets a short one).
int64_t lease_stop_grace_ms(const JobSpec& spec, const std::string& task_name);

// Finds the pod's task in the spec; nullopt when the task is gone. `pods` (the job's pod table)
// gives the plugins their peers' hosts, `ssh_keys` the ssh plugin its keys.
std::optional<PodRuntime> pod_runtime(const JobSpec& spec, const Pod& pod,
                                      const PodTable& pods = {},
                                      const std::optional<SshKeyPair>& ssh_keys = std::nullopt);

}  // namespace caldera
