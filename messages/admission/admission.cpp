#include "messages/admission/admission.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "messages/model/pod.hpp"

namespace caldera {
namespace {

// Not a Volcano rule: the most pods one job may have, a figure the node is tested at
// (tests/integration/big_job_test.cpp: accepted within a second, kill -9 and restart, delete,
// other clients answered throughout). A job's pods live in its actor's memory, and a job's
// creation, restart, abort and delete touch every one of them in one step: the bound keeps such a
// step short for the clients that wait behind it.
constexpr int64_t kMaxTotalReplicas = kMaxJobReplicas;
constexpr size_t kMaxPodNameLength = 253;
// The job plugins caldera implements (actors/job/core/plugins.cpp).
constexpr std::array<std::string_view, 8> kKnownPlugins{"env",        "svc", "pytorch",  "mpi",
                                                        "tensorflow", "ray", "hcclrank", "ssh"};

std::string at(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

// Why `s` is not a DNS-1123 label, or "" when it is one.
std::string dns_label_problem(const std::string& s) {
  if (s.size() > 63) return "must be at most 63 characters (has " + std::to_string(s.size()) + ")";
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
      return "must consist of lower case letters, digits and '-'";
  if (s.front() == '-' || s.back() == '-') return "must start and end with a letter or digit";
  return "";
}

void check_policies(const std::vector<LifecyclePolicy>& policies, const std::string& base,
                    Diagnostics& d) {
  std::set<Event> events;
  std::set<int32_t> codes;
  for (size_t i = 0; i < policies.size(); ++i) {
    const auto& p = policies[i];
    const std::string path = at(base, i);
    const bool has_events = !p.events.empty(), has_code = p.exit_code.has_value();
    if (has_events && has_code)
      d.error(path, "a policy names either event(s) or an exitCode, not both");
    if (!has_events && !has_code) d.error(path, "a policy needs an event, events or an exitCode");
    for (Event e : p.events) {
      const std::string name(to_string(e));
      if (e == Event::OutOfSync || e == Event::CommandIssued)
        d.error(path + ".events", "event " + name +
                                      " is internal to the job controller and "
                                      "cannot be used in a policy");
      else if (!events.insert(e).second)
        d.error(path + ".events", "event " + name + " already has a policy in this list");
    }
    if (has_code) {
      const int32_t code = *p.exit_code;
      if (code == 0)
        d.error(path + ".exitCode", "exitCode 0 means success; a policy needs a failure code");
      else if (code < 0 || code > 255)
        d.error(path + ".exitCode", "exitCode " + std::to_string(code) + " is outside 1..255");
      else if (!codes.insert(code).second)
        d.error(path + ".exitCode",
                "exitCode " + std::to_string(code) + " already has a policy in this list");
    }
    const bool pending =
        std::find(p.events.begin(), p.events.end(), Event::PodPending) != p.events.end();
    if (pending && !p.timeout_ms) d.error(path + ".timeout", "PodPending policies need a timeout");
    if (p.timeout_ms && *p.timeout_ms <= 0) d.error(path + ".timeout", "timeout must be > 0");
    if (p.action == Action::ResumeJob)
      d.error(path + ".action",
              "ResumeJob cannot be a policy action: only a command resumes a job");
  }
  if (events.count(Event::Any) && events.size() > 1)
    d.error(base, "a policy on event \"*\" must be the only event policy in its list");
}

std::optional<int64_t> parse_int(const std::string& text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

void check_sim_annotations(const TaskSpec& task, const std::string& tpath, Diagnostics& d) {
  const auto& a = task.template_.annotations;
  const std::string base = tpath + ".template.metadata.annotations.";
  if (auto it = a.find(kSimDurationAnnotation); it != a.end()) {
    // 30 days at most: a timer far beyond any real job, and far from overflowing a clock.
    constexpr int64_t kMaxSimMs = 30LL * 24 * 3600 * 1000;
    auto v = parse_int(it->second);
    if (!v || *v < 0 || *v > kMaxSimMs)
      d.error(base + kSimDurationAnnotation,
              "must be an integer number of milliseconds in 0..2592000000 (30 days), got \"" +
                  it->second + "\"");
  }
  if (auto it = a.find(kSimExitCodeAnnotation); it != a.end()) {
    auto v = parse_int(it->second);
    if (!v || *v < 0 || *v > 255)
      d.error(base + kSimExitCodeAnnotation,
              "must be an integer exit code in 0..255, got \"" + it->second + "\"");
  }
}

void check_partition(const TaskSpec& task, const std::string& tpath, Diagnostics& d) {
  if (!task.partition_policy) return;
  const auto& p = *task.partition_policy;
  const std::string path = tpath + ".partitionPolicy";
  if (p.partition_size < 1) {
    d.error(path + ".partitionSize", "partitionSize must be >= 1");
  } else if (task.replicas % p.partition_size != 0) {
    d.error(path + ".partitionSize", "replicas (" + std::to_string(task.replicas) +
                                         ") must be a multiple of partitionSize (" +
                                         std::to_string(p.partition_size) + ")");
  }
  if (p.min_partitions < 0) {
    d.error(path + ".minPartitions", "minPartitions must be >= 0");
  } else if (p.partition_size >= 1 &&
             int64_t{p.min_partitions} * p.partition_size > int64_t{task.replicas}) {
    d.error(path + ".minPartitions",
            "minPartitions * partitionSize (" +
                std::to_string(int64_t{p.min_partitions} * p.partition_size) +
                ") exceeds replicas (" + std::to_string(task.replicas) + ")");
  } else if (p.partition_size >= 1 && p.min_partitions > 0 && task.min_available &&
             int64_t{*task.min_available} != int64_t{p.min_partitions} * p.partition_size) {
    // Volcano's rule: the task's gang is its minimum partitions, whole.
    d.error(tpath + ".minAvailable",
            "minAvailable (" + std::to_string(*task.min_available) +
                ") must be minPartitions * partitionSize (" +
                std::to_string(int64_t{p.min_partitions} * p.partition_size) +
                ") when the task names minPartitions");
  }
}

// `spec`: the job, whose plugins may give a container its command (null: none does).
void check_containers(const TaskSpec& task, const std::string& tpath, Diagnostics& d,
                      const JobSpec* spec) {
  const std::string base = tpath + ".template.spec.containers";
  if (task.template_.containers.empty()) d.error(base, "a task needs at least one container");
  std::set<std::string> names;
  for (size_t j = 0; j < task.template_.containers.size(); ++j) {
    const auto& c = task.template_.containers[j];
    const std::string path = at(base, j);
    check_dns_label(d, path + ".name", "container name", c.name);
    if (!c.name.empty() && !names.insert(c.name).second)
      d.error(path + ".name", "container name \"" + c.name + "\" is used twice in the pod");
    if (c.command.empty() && !(spec && plugin_sets_command(*spec, task.name, c.name)))
      d.error(path + ".command",
              "caldera runs processes: set command (image alone is not runnable)");
    if (!c.image.empty())
      d.warn(path + ".image", "image is ignored: caldera runs command directly on the node");
    for (size_t k = 0; k < c.env.size(); ++k) {
      const auto& name = c.env[k].name;
      if (name.empty()) d.error(at(path + ".env", k) + ".name", "env name is required");
      if (name.find('=') != std::string::npos)
        d.error(at(path + ".env", k) + ".name", "env name \"" + name + "\" may not contain '='");
    }
    auto has_nul = [](const std::string& v) { return v.find('\0') != std::string::npos; };
    bool nul = has_nul(c.working_dir);
    for (const auto& a : c.command) nul = nul || has_nul(a);
    for (const auto& a : c.args) nul = nul || has_nul(a);
    for (const auto& e : c.env) nul = nul || has_nul(e.name) || has_nul(e.value);
    if (nul) d.error(path, "a NUL byte in command, args, env or workingDir cannot reach a process");
    for (const auto& [name, amount] : c.requests.values) {
      auto limit = c.limits.values.find(name);
      if (limit != c.limits.values.end() && amount > limit->second)
        d.error(path + ".resources.requests." + name, "request " + format_quantity(amount) +
                                                          " exceeds the limit " +
                                                          format_quantity(limit->second));
    }
  }
}

void check_fit(const TaskSpec& task, const std::string& tpath, const AdmissionContext& ctx,
               Diagnostics& d) {
  if (ctx.largest_node.values.empty()) return;
  for (const auto& [name, amount] : pod_requests(task).values) {
    auto have = ctx.largest_node.values.find(name);
    if (have == ctx.largest_node.values.end()) {
      if (amount > 0)
        d.error(tpath + ".template.spec.containers",
                "the pod requests " + name + " " + format_quantity(amount) + " but no node has " +
                    name + ", so it can never be scheduled (a node offers " + name +
                    " once its entry in the cluster config lists it under resources)");
    } else if (amount > have->second) {
      d.error(tpath + ".template.spec.containers",
              "the pod requests " + name + " " + format_quantity(amount) +
                  " but the largest node has " + format_quantity(have->second) +
                  ", so it can never be scheduled");
    }
  }
}

void check_grace(const TaskSpec& task, const std::string& tpath, Diagnostics& d) {
  if (auto g = task.template_.termination_grace_seconds;
      g && (*g < 0 || *g > kMaxTerminationGraceSeconds))
    d.error(tpath + ".template.spec.terminationGracePeriodSeconds",
            "terminationGracePeriodSeconds (" + std::to_string(*g) + ") must be within 0.." +
                std::to_string(kMaxTerminationGraceSeconds) +
                ": a lost node's pods are replaced only after it");
}

void check_task(const JobSpec& spec, size_t i, const AdmissionContext& ctx, Diagnostics& d) {
  const TaskSpec& task = spec.tasks[i];
  const std::string tpath = at("spec.tasks", i);
  check_dns_label(d, tpath + ".name", "task name", task.name);
  const std::string pod_name =
      spec.name + "-" + task.name + "-" + std::to_string(std::max(task.replicas, 1) - 1);
  if (pod_name.size() > kMaxPodNameLength)
    d.error(tpath + ".name", "pod names such as \"" + pod_name.substr(0, 40) + "...\" would be " +
                                 std::to_string(pod_name.size()) + " characters; at most " +
                                 std::to_string(kMaxPodNameLength) + " are allowed");
  if (task.replicas < 0) d.error(tpath + ".replicas", "replicas must be >= 0");
  if (task.min_available && (*task.min_available < 0 || *task.min_available > task.replicas))
    d.error(tpath + ".minAvailable", "minAvailable (" + std::to_string(*task.min_available) +
                                         ") must be within 0..replicas (" +
                                         std::to_string(task.replicas) + ")");
  if (task.max_retry && *task.max_retry < 0) d.error(tpath + ".maxRetry", "maxRetry must be >= 0");
  check_policies(task.policies, tpath + ".policies", d);
  check_partition(task, tpath, d);
  admit_pod_template(task, tpath, ctx, d, &spec);
}

// Reports each dependency cycle once, starting at its lowest-indexed task.
void check_cycles(const JobSpec& spec, const std::vector<std::vector<size_t>>& edges,
                  Diagnostics& d) {
  for (const auto& cycle : find_cycles(edges)) {
    std::string text;
    for (size_t t : cycle) text += spec.tasks[t].name + " -> ";
    text += spec.tasks[cycle.front()].name;
    d.error(at("spec.tasks", cycle.front()) + ".dependsOn", "dependency cycle: " + text);
  }
}

void check_dependencies(const JobSpec& spec, Diagnostics& d) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < spec.tasks.size(); ++i) index.emplace(spec.tasks[i].name, i);
  std::vector<std::vector<size_t>> edges(spec.tasks.size());
  for (size_t i = 0; i < spec.tasks.size(); ++i) {
    const auto& dep = spec.tasks[i].depends_on;
    if (!dep) continue;
    const std::string path = at("spec.tasks", i) + ".dependsOn";
    if (dep->iteration != "any" && dep->iteration != "all")
      d.error(path + ".iteration",
              "iteration must be \"any\" or \"all\", got \"" + dep->iteration + "\"");
    if (dep->condition != "Running" && dep->condition != "Succeeded")
      d.error(path + ".condition",
              "condition must be \"Running\" or \"Succeeded\", got \"" + dep->condition + "\"");
    for (size_t k = 0; k < dep->names.size(); ++k) {
      const std::string& name = dep->names[k];
      auto it = index.find(name);
      if (name == spec.tasks[i].name)
        d.error(at(path + ".name", k), "a task cannot depend on itself");
      else if (it == index.end())
        d.error(at(path + ".name", k), "no task named \"" + name + "\" in this job");
      else
        edges[i].push_back(it->second);
    }
  }
  check_cycles(spec, edges, d);
}

// The ssh plugin's arguments: where the keys are shown (a directory the pod's mount namespace can
// hold), and the user's own pair, whole.
void check_ssh(const Plugin& p, Diagnostics& d) {
  const std::string path = plugin_arg(p, "ssh-key-file-path", kSshKeyFilePath);
  const auto last = path.rfind('/');
  if (path.empty() || path[0] != '/' || path.find("..") != std::string::npos ||
      path.find("//") != std::string::npos || path.find("/./") != std::string::npos ||
      path.ends_with("/.") || path.find_first_of(",=") != std::string::npos || last == 0 ||
      last + 1 == path.size() || path.size() > 512)
    d.error("spec.plugins.ssh", "--ssh-key-file-path=" + path +
                                    " must be an absolute directory below another than / "
                                    "(no \"..\", \".\", \"//\", \",\" or \"=\", at most 512 "
                                    "characters)");
  else if (path == "/etc/volcano" || path.starts_with("/etc/volcano/"))
    d.error("spec.plugins.ssh", "--ssh-key-file-path=" + path +
                                    " is where the svc plugin's "
                                    "files are shown: choose another directory");
  const auto private_key = plugin_arg(p, "ssh-private-key", "");
  const auto public_key = plugin_arg(p, "ssh-public-key", "");
  if (private_key.empty() != public_key.empty())
    d.error("spec.plugins.ssh",
            "--ssh-private-key and --ssh-public-key go together: the job's pods authorize the "
            "public key of the private one they hold");
  else if (!private_key.empty() && !private_key.starts_with("-----BEGIN "))
    d.error("spec.plugins.ssh", "--ssh-private-key is not a PEM private key (-----BEGIN ...)");
  for (const auto& a : p.args)
    if (!a.starts_with("--ssh-key-file-path=") && !a.starts_with("--ssh-private-key=") &&
        !a.starts_with("--ssh-public-key=") && !a.starts_with("--ssh-port="))
      d.error("spec.plugins.ssh", "unknown argument \"" + a.substr(0, 64) +
                                      "\": the ssh plugin takes --ssh-key-file-path, "
                                      "--ssh-private-key, --ssh-public-key and --ssh-port");
}

void check_job(const JobSpec& spec, Diagnostics& d) {
  int64_t total = 0;
  for (const auto& t : spec.tasks) total += std::max(t.replicas, 0);
  if (spec.tasks.empty()) {
    d.error("spec.tasks", "a job needs at least one task");
  } else if (total == 0) {
    d.error("spec.tasks", "job has no replicas: at least one task needs replicas > 0");
  } else if (total > kMaxTotalReplicas) {
    d.error("spec.tasks", "job has " + std::to_string(total) + " replicas; at most " +
                              std::to_string(kMaxTotalReplicas) + " are allowed");
  }
  const std::string total_text = std::to_string(total);
  if (spec.min_available && (*spec.min_available < 0 || *spec.min_available > total))
    d.error("spec.minAvailable", "minAvailable (" + std::to_string(*spec.min_available) +
                                     ") must be within 0..total replicas (" + total_text + ")");
  if (spec.min_success && (*spec.min_success < 1 || *spec.min_success > total))
    d.error("spec.minSuccess", "minSuccess (" + std::to_string(*spec.min_success) +
                                   ") must be within 1..total replicas (" + total_text + ")");
  if (spec.max_retry && *spec.max_retry < 0) d.error("spec.maxRetry", "maxRetry must be >= 0");
  if (spec.ttl_seconds_after_finished && *spec.ttl_seconds_after_finished < 0)
    d.error("spec.ttlSecondsAfterFinished", "ttlSecondsAfterFinished must be >= 0");
  if (spec.active_deadline_seconds && *spec.active_deadline_seconds < 1)
    d.error("spec.activeDeadlineSeconds", "activeDeadlineSeconds must be >= 1");
  for (const auto& p : spec.plugins)
    if (std::find(kKnownPlugins.begin(), kKnownPlugins.end(), p.name) == kKnownPlugins.end())
      d.error("spec.plugins." + p.name,
              "unknown plugin \"" + p.name +
                  "\"; caldera's plugins are env, svc, pytorch, mpi, tensorflow, ray, hcclrank, "
                  "ssh");
  for (const auto& p : spec.plugins)
    if (p.name == "ssh") check_ssh(p, d);
  for (const auto& p : spec.plugins) {
    if (p.name != "ray") continue;
    // Volcano's ray plugin fails every pod of a job without its head task.
    const auto head = plugin_arg(p, "head", "head");
    if (std::none_of(spec.tasks.begin(), spec.tasks.end(),
                     [&](const TaskSpec& t) { return t.name == head && t.replicas > 0; }))
      d.error("spec.plugins.ray", "the job has no task \"" + head +
                                      "\" with replicas for the ray head (--head names it)");
  }
  for (const auto& p : spec.plugins)
    for (const char* port : {"port", "dashboardPort", "clientPort", "ssh-port"}) {
      auto text = plugin_arg(p, port, "");
      if (text.empty() || (p.name != "ray" && p.name != "tensorflow" && p.name != "pytorch" &&
                           p.name != "mpi" && p.name != "ssh"))
        continue;
      char* end = nullptr;
      long v = std::strtol(text.c_str(), &end, 10);
      if (*end != '\0' || v < 1 || v > 65535)
        d.error("spec.plugins." + p.name,
                "--" + std::string(port) + "=" + text + " is not a port (1..65535)");
    }
}

}  // namespace

void check_dns_label(Diagnostics& d, const std::string& path, const std::string& what,
                     const std::string& value) {
  if (value.empty()) {
    d.error(path, what + " is required");
    return;
  }
  auto problem = dns_label_problem(value);
  if (!problem.empty())
    d.error(path, what + " \"" + value + "\" is not a DNS-1123 label: " + problem);
}

std::vector<std::vector<size_t>> find_cycles(const std::vector<std::vector<size_t>>& edges) {
  enum Color { White, Gray, Black };
  std::vector<Color> color(edges.size(), White);
  std::set<std::vector<size_t>> seen;
  std::vector<std::vector<size_t>> cycles;
  for (size_t root = 0; root < edges.size(); ++root) {
    if (color[root] != White) continue;
    std::vector<std::pair<size_t, size_t>> stack{{root, 0}};  // (node, next edge)
    color[root] = Gray;
    while (!stack.empty()) {
      auto& [u, next] = stack.back();
      if (next == edges[u].size()) {
        color[u] = Black;
        stack.pop_back();
        continue;
      }
      const size_t v = edges[u][next++];
      if (color[v] == White) {
        color[v] = Gray;
        stack.push_back({v, 0});
      } else if (color[v] == Gray) {
        std::vector<size_t> cycle;
        auto from = std::find_if(stack.begin(), stack.end(), [v](auto& f) { return f.first == v; });
        for (auto it = from; it != stack.end(); ++it) cycle.push_back(it->first);
        std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
        if (seen.insert(cycle).second) cycles.push_back(std::move(cycle));
      }
    }
  }
  return cycles;
}

void add_plugin_dependencies(JobSpec& spec) {
  if (spec.batch) return;
  auto has = [&](const char* name) {
    return std::any_of(spec.plugins.begin(), spec.plugins.end(),
                       [&](const Plugin& p) { return p.name == name; });
  };
  const auto mpi = std::find_if(spec.plugins.begin(), spec.plugins.end(),
                                [](const Plugin& p) { return p.name == "mpi"; });
  const bool has_mpi = mpi != spec.plugins.end();
  // mpirun reaches the workers' sshd on mpi's --port: the ssh config says the same port.
  const std::string mpi_port = has_mpi ? plugin_arg(*mpi, "port", "") : "";
  if ((has_mpi || has("tensorflow") || has("pytorch") || has("ray")) && !has("svc"))
    spec.plugins.push_back({"svc", {}});
  if (has_mpi && !has("ssh"))
    spec.plugins.push_back({"ssh", mpi_port.empty()
                                       ? std::vector<std::string>{}
                                       : std::vector<std::string>{"--ssh-port=" + mpi_port}});
}

void apply_job_defaults(JobSpec& spec) {
  // Volcano's webhook: a job without minAvailable needs what its tasks' minAvailable (or
  // replicas) add up to, as the file gives them (before the partitions' defaults). Left unset
  // when no task names one: it is every replica then, and stays so as the job scales.
  if (!spec.batch && !spec.min_available &&
      std::any_of(spec.tasks.begin(), spec.tasks.end(),
                  [](const TaskSpec& t) { return t.min_available.has_value(); })) {
    int64_t sum = 0;
    for (const auto& t : spec.tasks) sum += std::max(t.min_available.value_or(t.replicas), 0);
    spec.min_available = static_cast<int32_t>(std::min<int64_t>(sum, INT32_MAX));
  }
  apply_defaults(spec);
}

void apply_defaults(JobSpec& spec) {
  add_plugin_dependencies(spec);
  if (spec.namespace_.empty()) spec.namespace_ = "default";
  if (spec.queue.empty()) spec.queue = "default";
  for (size_t i = 0; i < spec.tasks.size(); ++i) {
    TaskSpec& task = spec.tasks[i];
    if (task.name.empty()) task.name = "default" + std::to_string(i);
    // Volcano's webhook: a task's minimum is its minimum partitions, whole.
    if (const auto& p = task.partition_policy;
        !task.min_available && p && p->min_partitions > 0 && p->partition_size > 0 &&
        int64_t{p->min_partitions} * p->partition_size <= int64_t{task.replicas})
      task.min_available = p->min_partitions * p->partition_size;
    if (task.template_.restart_policy.empty()) task.template_.restart_policy = "Never";
    auto& containers = task.template_.containers;
    if (containers.size() == 1 && containers[0].name.empty()) containers[0].name = "main";
    std::set<std::string> taken;
    for (const auto& c : containers) taken.insert(c.name);
    for (size_t j = 0; j < containers.size(); ++j) {
      Container& c = containers[j];
      if (c.name.empty()) {
        std::string name = "c" + std::to_string(j);
        for (int n = 1; taken.count(name); ++n)
          name = "c" + std::to_string(j) + "-" + std::to_string(n);
        c.name = name;
        taken.insert(name);
      }
      // Kubernetes' own defaulting: a limit without a request is also the request.
      for (const auto& [name, amount] : c.limits.values) c.requests.values.emplace(name, amount);
    }
  }
}

void admit_pod_template(const TaskSpec& task, const std::string& path, const AdmissionContext& ctx,
                        Diagnostics& d, const JobSpec* spec) {
  check_containers(task, path, d, spec);
  check_fit(task, path, ctx, d);
  check_sim_annotations(task, path, d);
  check_grace(task, path, d);
}

namespace {

// Annotations Volcano's scheduler or controllers act on that caldera does not: said at submit,
// where a user would otherwise trust them (issue 30 builds the scheduler's plugins).
struct Unhonoured {
  const char* key;
  const char* what;  // what Volcano does with it
};
constexpr Unhonoured kUnhonouredAnnotations[] = {
    {"volcano.sh/preemptable", "marks pods that may be preempted"},
    {"volcano.sh/revocable-zone", "lets pods use a revocable zone's resources"},
    {"volcano.sh/jdb-min-available", "sets a job disruption budget"},
    {"volcano.sh/jdb-max-unavailable", "sets a job disruption budget"},
    {"volcano.sh/task-topology-affinity", "packs tasks together (task-topology plugin)"},
    {"volcano.sh/task-topology-anti-affinity", "spreads tasks apart (task-topology plugin)"},
    {"volcano.sh/task-topology-task-order", "orders tasks for placement (task-topology plugin)"},
    {"volcano.sh/numa-topology-policy", "asks for a NUMA placement (numa-aware plugin)"},
    {"volcano.sh/hypernode-affinity", "places pods by network topology"},
};

void warn_unhonoured(const std::map<std::string, std::string>& annotations, const std::string& path,
                     Diagnostics& d) {
  for (const auto& u : kUnhonouredAnnotations)
    if (annotations.count(u.key))
      d.warn(path + "." + u.key, std::string("in Volcano this annotation ") + u.what +
                                     "; caldera does not honour it yet and ignores it");
}

}  // namespace

void admit(const JobSpec& spec, const AdmissionContext& ctx, Diagnostics& diags) {
  warn_unhonoured(spec.annotations, "metadata.annotations", diags);
  for (size_t i = 0; i < spec.tasks.size(); ++i)
    warn_unhonoured(spec.tasks[i].template_.annotations,
                    at("spec.tasks", i) + ".template.metadata.annotations", diags);
  check_dns_label(diags, "metadata.name", "job name", spec.name);
  check_dns_label(diags, "metadata.namespace", "namespace", spec.namespace_);
  check_job(spec, diags);
  check_policies(spec.policies, "spec.policies", diags);
  std::set<std::string> task_names;
  for (size_t i = 0; i < spec.tasks.size(); ++i) {
    check_task(spec, i, ctx, diags);
    const auto& name = spec.tasks[i].name;
    if (!name.empty() && !task_names.insert(name).second)
      diags.error(at("spec.tasks", i) + ".name", "task name \"" + name + "\" is used twice");
  }
  check_dependencies(spec, diags);
}

ResourceList pod_requests(const TaskSpec& task) {
  ResourceList total;
  for (const auto& c : task.template_.containers) total.add(c.requests);
  return total;
}

ResourceList pod_resource_request(const TaskSpec& task) {
  ResourceList r = pod_requests(task);
  r.add(ResourceList{{{"pods", 1000}}});
  return r;
}

}  // namespace caldera
