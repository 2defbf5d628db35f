// Turns a task's pod template into what a node runs for one pod: containers with their env.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "actors/job/core/pod_table.hpp"
#include "messages/admission.hpp"
#include "messages/job_spec.hpp"
#include "messages/pod.hpp"

namespace caldera {

struct PodRuntime {
  std::vector<Container> containers;       // env includes VK_TASK_INDEX, VC_TASK_INDEX, ...
  ResourceList requests;                   // the pod's total, including one "pods" slot
  std::optional<int64_t> sim_duration_ms;  // set: a simulated pod (a timer, no process)
  int32_t sim_exit_code = 0;
  std::map<std::string, std::string> files;  // plugin files, relative to the pod's directory
};

// Finds the pod's task in the spec; nullopt when the task is gone. `pods` (the job's pod table)
// gives the plugins their peers' hosts.
std::optional<PodRuntime> pod_runtime(const JobSpec& spec, const Pod& pod,
                                      const PodTable& pods = {});

}  // namespace caldera
