#include "actors/job/core/plugins.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

#include "actors/job/core/slow_start.hpp"

namespace caldera {
namespace {

// "--master=chief" from a plugin's argument list, or the fallback.
std::string plugin_arg(const Plugin& p, const std::string& key, const std::string& fallback) {
  const std::string prefix = "--" + key + "=";
  for (const auto& a : p.args)
    if (a.rfind(prefix, 0) == 0) return a.substr(prefix.size());
  return fallback;
}

// VC_<TASK>_HOSTS: upper case, and '-' becomes '_' so that the name is a valid variable.
std::string env_task(const std::string& task) {
  std::string out = task;
  for (auto& c : out)
    c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string host_of(const Pod& p) {
  return p.host_ip.empty() ? p.name : p.host_ip;
}

// The hosts of a task's pods of the current version, in index order.
std::vector<std::string> task_hosts(const JobSpec& spec, const TaskSpec& task, int32_t version,
                                    const PodTable& pods) {
  std::vector<std::string> hosts;
  for (int32_t i = 0; i < task.replicas; ++i) {
    auto name = fmt::format("{}-{}-{}", spec.name, task.name, i);
    auto it = pods.find(name);
    hosts.push_back(it != pods.end() && it->second.job_version == version ? host_of(it->second)
                                                                          : name);
  }
  return hosts;
}

const TaskSpec* find(const JobSpec& spec, const std::string& name) {
  for (const auto& t : spec.tasks)
    if (t.name == name) return &t;
  return nullptr;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  return fmt::format("{}", fmt::join(v, sep));
}

void svc(const JobSpec& spec, const Pod& pod, const PodTable& pods, PluginOutput& out) {
  for (const auto& t : spec.tasks) {
    auto hosts = task_hosts(spec, t, pod.job_version, pods);
    out.env.push_back({"VC_" + env_task(t.name) + "_HOSTS", join(hosts, ",")});
    out.env.push_back({"VC_" + env_task(t.name) + "_NUM", std::to_string(t.replicas)});
    out.files["volcano/" + t.name + ".host"] = join(hosts, "\n") + "\n";
  }
}

void pytorch(const JobSpec& spec, const Plugin& p, const Pod& pod, const PodTable& pods,
             PluginOutput& out) {
  auto master = plugin_arg(p, "master", "master");
  auto worker = plugin_arg(p, "worker", "worker");
  auto port = plugin_arg(p, "port", "23456");
  const TaskSpec* m = find(spec, master);
  const TaskSpec* w = find(spec, worker);
  if (!m || (pod.task_name != master && pod.task_name != worker)) return;
  int32_t world = m->replicas + (w ? w->replicas : 0);
  int32_t rank = pod.task_name == master ? pod.index : m->replicas + pod.index;
  out.env.push_back({"MASTER_ADDR", task_hosts(spec, *m, pod.job_version, pods).front()});
  out.env.push_back({"MASTER_PORT", port});
  out.env.push_back({"WORLD_SIZE", std::to_string(world)});
  out.env.push_back({"RANK", std::to_string(rank)});
}

void mpi(const JobSpec& spec, const Plugin& p, const Pod& pod, const PodTable& pods,
         PluginOutput& out) {
  auto worker = plugin_arg(p, "worker", "worker");
  auto port = plugin_arg(p, "port", "22");
  const TaskSpec* w = find(spec, worker);
  if (!w) return;
  auto hosts = task_hosts(spec, *w, pod.job_version, pods);
  const std::string hostfile = "volcano/" + worker + ".host";
  out.files[hostfile] = join(hosts, "\n") + "\n";
  out.env.push_back({"MPI_HOST", join(hosts, ",")});
  out.env.push_back({"MPI_PORT", port});
  // $(VC_POD_DIR) is expanded by the node, as Kubernetes expands $(VAR) in env values.
  out.env.push_back({"OMPI_MCA_orte_default_hostfile", "$(VC_POD_DIR)/" + hostfile});
  out.env.push_back({"OMPI_MCA_plm_rsh_args", "-p " + port});
}

}  // namespace

void refresh_plugin_files(JobModel& m, Effects& fx) {
  const auto& spec = m.job.spec;
  if (spec.batch || std::none_of(spec.plugins.begin(), spec.plugins.end(), [](const Plugin& p) {
        return p.name == "svc" || p.name == "mpi";
      }))
    return;
  Pod any;
  any.job_version = m.job.status.version;
  auto files = plugin_output(spec, any, m.pods).files;
  if (files == m.plugin_files) return;
  m.plugin_files = files;
  // Pods launched by these very effects start with the files already.
  std::set<std::string> starting(fx.launch.begin(), fx.launch.end());
  for (const auto& [name, p] : std::as_const(m.pods))
    if (!starting.count(name) && !p.out_of_sync && p.job_version == m.job.status.version &&
        !is_terminal(p.phase) && !p.node.empty() && launched(m, p))
      fx.files.push_back({p.uid, p.node, files});
}

PluginOutput plugin_output(const JobSpec& spec, const Pod& pod, const PodTable& pods) {
  PluginOutput out;
  for (const auto& p : spec.plugins) {
    if (p.name == "svc") svc(spec, pod, pods, out);
    if (p.name == "pytorch") pytorch(spec, p, pod, pods, out);
    if (p.name == "mpi") mpi(spec, p, pod, pods, out);
    // env: VK_TASK_INDEX / VC_TASK_INDEX are given to every pod (pod_template.cpp).
  }
  return out;
}

}  // namespace caldera
