// Volcano's job plugins (env, svc, pytorch, mpi, tensorflow, ray, hcclrank, ssh) as what they give
// a pod at launch: environment variables, small files in the pod's directory and where the pod
// sees them, a container's command (ray) and annotations (hcclrank). Pure and idempotent: the
// same job and pods always give the same result.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "actors/job/core/effects.hpp"
#include "actors/job/core/job_model.hpp"
#include "actors/job/core/pod_table.hpp"
#include "actors/job/core/ssh_key_pair.hpp"
#include "messages/model/job_spec.hpp"
#include "messages/model/pod.hpp"

namespace caldera {

struct PluginOutput {
  std::vector<EnvVar> env;
  std::map<std::string, std::string> files;  // path relative to the pod's directory -> content
  // A container's command set by a plugin (ray's `ray start`), its args dropped: by name.
  std::map<std::string, std::vector<std::string>> commands;
  std::map<std::string, std::string> annotations;  // the pod's (hcclrank's hccl/rankIndex)
  // Where the pod sees its files, as Volcano mounts them: absolute path -> directory in the pod's
  // directory (/etc/volcano -> volcano, /root/.ssh -> .ssh).
  std::map<std::string, std::string> views;
};

// The plugins named in `spec.plugins`, for `pod`, given every pod of the job (by name). A pod's
// host is the address of the node it was placed on; a pod not placed yet is named instead.
// Pods share their node's network, so ports (pytorch --port, mpi --port) must not collide
// between jobs on one node. `ssh_keys`: the job's (JobModel::ssh_keys); none, no ssh files.
PluginOutput plugin_output(const JobSpec& spec, const Pod& pod, const PodTable& pods,
                           const std::optional<SshKeyPair>& ssh_keys = std::nullopt);

// Whether the job's pods are given the ssh plugin's key pair.
bool uses_ssh_keys(const JobSpec& spec);

// The files the svc, mpi and ssh plugins give every pod alike (the hosts of each task), as
// Volcano's ConfigMap and Secret that its pods mount: once they differ from what the job's launched
// pods have (pods placed on their nodes, a job scaled), every such pod gets them again (fx.files)
// and m.plugin_files keeps them.
void refresh_plugin_files(JobModel& m, Effects& fx);

}  // namespace caldera
