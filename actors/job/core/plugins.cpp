#include "actors/job/core/plugins.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

#include "actors/job/core/slow_start.hpp"

namespace caldera {
namespace {

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
  out.views["/etc/volcano"] = "volcano";
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

// Volcano's mpi plugin: the master task's pods get MPI_HOST, the workers' hosts; every pod gets
// the workers' hostfile and Open MPI's variables for it and for --port (ssh's).
void mpi(const JobSpec& spec, const Plugin& p, const Pod& pod, const PodTable& pods,
         PluginOutput& out) {
  auto master = plugin_arg(p, "master", "master");
  auto worker = plugin_arg(p, "worker", "worker");
  auto port = plugin_arg(p, "port", "22");
  const TaskSpec* w = find(spec, worker);
  if (!w) return;
  auto hosts = task_hosts(spec, *w, pod.job_version, pods);
  const std::string hostfile = "volcano/" + worker + ".host";
  out.files[hostfile] = join(hosts, "\n") + "\n";
  out.views["/etc/volcano"] = "volcano";
  if (pod.task_name == master) out.env.push_back({"MPI_HOST", join(hosts, ",")});
  out.env.push_back({"MPI_PORT", port});
  // $(VC_POD_DIR) is expanded by the node, as Kubernetes expands $(VAR) in env values.
  out.env.push_back({"OMPI_MCA_orte_default_hostfile", "$(VC_POD_DIR)/" + hostfile});
  out.env.push_back({"OMPI_MCA_plm_rsh_args", "-p " + port});
}

int32_t port_arg(const Plugin& p, const std::string& key, int32_t fallback) {
  auto text = plugin_arg(p, key, "");
  if (text.empty()) return fallback;
  try {
    return std::stoi(text);
  } catch (const std::exception&) {
    return fallback;  // admission refuses it; a stored job from before keeps the default
  }
}

// TF_CONFIG, as Volcano's tensorflow plugin writes it: every role task's pods as host:port, and
// this pod's role and index. Pods share their node's network, so each gets a port of its own:
// --port plus its place in the cluster (ps, then worker, chief, evaluator, by index), where
// Volcano gives every pod --port at its own DNS name.
void tensorflow(const JobSpec& spec, const Plugin& p, const Pod& pod, const PodTable& pods,
                PluginOutput& out) {
  if (spec.tasks.size() == 1 && spec.tasks[0].replicas == 1) return;  // stand-alone: none
  const std::vector<std::pair<std::string, std::string>> roles{
      {"ps", plugin_arg(p, "ps", "ps")},
      {"worker", plugin_arg(p, "worker", "worker")},
      {"chief", plugin_arg(p, "chief", "chief")},
      {"evaluator", plugin_arg(p, "evaluator", "evaluator")}};
  const int32_t base = port_arg(p, "port", 2222);
  int32_t next = 0;
  std::string cluster, type = pod.task_name;
  for (const auto& [role, task_name] : roles) {
    const TaskSpec* t = find(spec, task_name);
    if (pod.task_name == task_name) type = role;
    if (!t) continue;
    std::vector<std::string> entries;
    for (const auto& host : task_hosts(spec, *t, pod.job_version, pods))
      entries.push_back(fmt::format("\"{}:{}\"", host, base + next++));
    cluster += fmt::format("{}\"{}\":[{}]", cluster.empty() ? "" : ",", role, join(entries, ","));
  }
  out.env.push_back({"TF_CONFIG", fmt::format("{{\"cluster\":{{{}}},\"task\":{{\"type\":\"{}\","
                                              "\"index\":{}}}}}",
                                              cluster, type, pod.index)});
}

// Volcano's ray plugin: the head container runs `ray start --head`, each worker container
// `ray start --address=` the head's host and port.
void ray(const JobSpec& spec, const Plugin& p, const Pod& pod, const PodTable& pods,
         PluginOutput& out) {
  const auto head = plugin_arg(p, "head", "head");
  const auto worker = plugin_arg(p, "worker", "worker");
  const TaskSpec* h = find(spec, head);
  if (!h || h->replicas < 1) return;  // admission refuses a ray job without its head task
  const int32_t port = port_arg(p, "port", 6379);
  if (pod.task_name == head)
    out.commands[plugin_arg(p, "headContainer", "head")] = {
        "sh", "-c",
        fmt::format("ray start --head --block --dashboard-host=0.0.0.0 --port={} "
                    "--dashboard-port={} --ray-client-server-port={}",
                    port, port_arg(p, "dashboardPort", 8265), port_arg(p, "clientPort", 10001))};
  if (pod.task_name == worker) {
    auto head_host = task_hosts(spec, *h, pod.job_version, pods).front();
    out.commands[plugin_arg(p, "workerContainer", "worker")] = {
        "sh", "-c", fmt::format("ray start --block --address={}:{}", head_host, port)};
  }
}

// Volcano's hcclrank plugin: the pod's rank as the annotation hccl/rankIndex: its RANK when the
// pod sets one, else its index among the masters, then the workers after them.
void hcclrank(const JobSpec& spec, const Plugin& p, const Pod& pod, PluginOutput& out) {
  const auto master = plugin_arg(p, "master", "master");
  const auto worker = plugin_arg(p, "worker", "worker");
  const TaskSpec* task = find(spec, pod.task_name);
  if (task)
    for (const auto& c : task->template_.containers)
      for (const auto& e : c.env)
        if (e.name == "RANK" && !e.value.empty()) {
          out.annotations["hccl/rankIndex"] = e.value;
          return;
        }
  if (pod.task_name == master) {
    out.annotations["hccl/rankIndex"] = std::to_string(pod.index);
  } else if (pod.task_name == worker) {
    const TaskSpec* m = find(spec, master);
    out.annotations["hccl/rankIndex"] = std::to_string((m ? m->replicas : 0) + pod.index);
  }
}

// Volcano's ssh plugin: the job's key pair, authorized for itself, and an ssh config naming every
// pod of the job, in the pod's .ssh directory, seen at --ssh-key-file-path (/root/.ssh). Where
// Volcano names a pod by its DNS name, a pod here is reached at its node's address.
void ssh(const JobSpec& spec, const Plugin& p, int32_t version, const PodTable& pods,
         const SshKeyPair& keys, PluginOutput& out) {
  out.files[".ssh/id_rsa"] = keys.private_key;
  out.files[".ssh/id_rsa.pub"] = keys.public_key;
  out.files[".ssh/authorized_keys"] = keys.public_key;
  const int32_t port = port_arg(p, "ssh-port", 22);
  std::string config = "StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\n";
  for (const auto& t : spec.tasks) {
    auto hosts = task_hosts(spec, t, version, pods);
    for (int32_t i = 0; i < t.replicas; ++i)
      config += fmt::format("Host {}\n  HostName {}\n  Port {}\n", pod_name(spec.name, t.name, i),
                            hosts[static_cast<size_t>(i)], port);
  }
  out.files[".ssh/config"] = std::move(config);
  out.views[plugin_arg(p, "ssh-key-file-path", kSshKeyFilePath)] = ".ssh";
}

}  // namespace

bool uses_ssh_keys(const JobSpec& spec) {
  return !spec.batch && std::any_of(spec.plugins.begin(), spec.plugins.end(),
                                    [](const Plugin& p) { return p.name == "ssh"; });
}

void refresh_plugin_files(JobModel& m, Effects& fx) {
  const auto& spec = m.job.spec;
  if (spec.batch || std::none_of(spec.plugins.begin(), spec.plugins.end(), [](const Plugin& p) {
        return p.name == "svc" || p.name == "mpi" || p.name == "ssh";
      }))
    return;
  Pod any;
  any.job_version = m.job.status.version;
  auto files = plugin_output(spec, any, m.pods, m.ssh_keys).files;
  if (files == m.plugin_files) return;
  m.plugin_files = files;
  // Pods launched by these very effects start with the files already.
  std::set<std::string> starting(fx.launch.begin(), fx.launch.end());
  for (const auto& [name, p] : std::as_const(m.pods))
    if (!starting.count(name) && !p.out_of_sync && p.job_version == m.job.status.version &&
        !is_terminal(p.phase) && !p.node.empty() && launched(m, p))
      fx.files.push_back({p.uid, p.node, files});
}

PluginOutput plugin_output(const JobSpec& spec, const Pod& pod, const PodTable& pods,
                           const std::optional<SshKeyPair>& ssh_keys) {
  PluginOutput out;
  for (const auto& p : spec.plugins) {
    if (p.name == "svc") svc(spec, pod, pods, out);
    if (p.name == "pytorch") pytorch(spec, p, pod, pods, out);
    if (p.name == "mpi") mpi(spec, p, pod, pods, out);
    if (p.name == "tensorflow") tensorflow(spec, p, pod, pods, out);
    if (p.name == "ray") ray(spec, p, pod, pods, out);
    if (p.name == "hcclrank") hcclrank(spec, p, pod, out);
    if (p.name == "ssh" && ssh_keys) ssh(spec, p, pod.job_version, pods, *ssh_keys, out);
    // env: VK_TASK_INDEX / VC_TASK_INDEX are given to every pod (pod_template.cpp).
  }
  return out;
}

}  // namespace caldera
