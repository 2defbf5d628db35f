#include "client/render.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <ctime>

#include <fmt/format.h>

namespace caldera {
namespace {

using nlohmann::json;

json string_map(const std::map<std::string, std::string>& m) {
  json out = json::object();
  for (const auto& [k, v] : m) out[k] = v;
  return out;
}

json resource_map(const ResourceList& r) {
  json out = json::object();
  for (const auto& [k, v] : r.values) out[k] = format_quantity(v);
  return out;
}

void set_if_time(json& out, const char* key, int64_t ms) {
  if (ms > 0) out[key] = format_timestamp(ms);
}

json policies_to_json(const std::vector<LifecyclePolicy>& policies) {
  json out = json::array();
  for (const auto& p : policies) {
    json j;
    // Volcano accepts both; one event reads best as `event`, as its examples write it.
    if (p.events.size() == 1) {
      j["event"] = to_string(p.events[0]);
    } else if (!p.events.empty()) {
      j["events"] = json::array();
      for (Event e : p.events) j["events"].push_back(to_string(e));
    }
    if (p.exit_code) j["exitCode"] = *p.exit_code;
    j["action"] = to_string(p.action);
    if (p.timeout_ms) j["timeout"] = format_duration(*p.timeout_ms);
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace

json container_to_json(const Container& c) {
  json j;
  j["name"] = c.name;
  if (!c.image.empty()) j["image"] = c.image;
  j["command"] = c.command;
  if (!c.args.empty()) j["args"] = c.args;
  if (!c.env.empty()) {
    j["env"] = json::array();
    for (const auto& e : c.env) j["env"].push_back({{"name", e.name}, {"value", e.value}});
  }
  if (!c.working_dir.empty()) j["workingDir"] = c.working_dir;
  json resources = json::object();
  if (!c.requests.values.empty()) resources["requests"] = resource_map(c.requests);
  if (!c.limits.values.empty()) resources["limits"] = resource_map(c.limits);
  j["resources"] = std::move(resources);
  return j;
}

namespace {

json task_to_json(const TaskSpec& t) {
  json j;
  j["name"] = t.name;
  j["replicas"] = t.replicas;
  if (t.min_available) j["minAvailable"] = *t.min_available;
  if (t.max_retry) j["maxRetry"] = *t.max_retry;
  if (!t.policies.empty()) j["policies"] = policies_to_json(t.policies);
  if (t.depends_on) {
    j["dependsOn"] = {{"name", t.depends_on->names}, {"iteration", t.depends_on->iteration}};
    // caldera's extension; Volcano's own value is left out so the JSON stays Volcano's.
    if (t.depends_on->condition != "Running") j["dependsOn"]["condition"] = t.depends_on->condition;
  }
  if (t.partition_policy)
    j["partitionPolicy"] = {{"partitionSize", t.partition_policy->partition_size},
                            {"minPartitions", t.partition_policy->min_partitions}};
  json metadata = json::object();
  if (!t.template_.labels.empty()) metadata["labels"] = string_map(t.template_.labels);
  if (!t.template_.annotations.empty())
    metadata["annotations"] = string_map(t.template_.annotations);
  json spec;
  if (!t.template_.restart_policy.empty()) spec["restartPolicy"] = t.template_.restart_policy;
  if (!t.template_.node_selector.empty())
    spec["nodeSelector"] = string_map(t.template_.node_selector);
  if (t.template_.termination_grace_seconds)
    spec["terminationGracePeriodSeconds"] = *t.template_.termination_grace_seconds;
  if (!t.template_.priority_class_name.empty())
    spec["priorityClassName"] = t.template_.priority_class_name;
  spec["containers"] = json::array();
  for (const auto& c : t.template_.containers) spec["containers"].push_back(container_to_json(c));
  j["template"] = {{"metadata", std::move(metadata)}, {"spec", std::move(spec)}};
  return j;
}

json spec_to_json(const JobSpec& s) {
  json j;
  j["minAvailable"] = s.effective_min_available();
  if (s.min_success) j["minSuccess"] = *s.min_success;
  j["maxRetry"] = s.effective_max_retry();
  j["queue"] = s.queue;
  if (!s.priority_class_name.empty()) j["priorityClassName"] = s.priority_class_name;
  if (!s.scheduler_name.empty()) j["schedulerName"] = s.scheduler_name;
  if (!s.policies.empty()) j["policies"] = policies_to_json(s.policies);
  if (!s.plugins.empty()) {
    j["plugins"] = json::object();
    for (const auto& p : s.plugins) j["plugins"][p.name] = p.args;
  }
  if (s.ttl_seconds_after_finished) j["ttlSecondsAfterFinished"] = *s.ttl_seconds_after_finished;
  if (s.active_deadline_seconds) j["activeDeadlineSeconds"] = *s.active_deadline_seconds;
  j["tasks"] = json::array();
  for (const auto& t : s.tasks) j["tasks"].push_back(task_to_json(t));
  return j;
}

// Volcano's TaskStatusCount: {"phase": {"Running": 1}}, zero counts left out.
json task_count_to_json(const TaskStatusCount& c) {
  json phases = json::object();
  const std::array<std::pair<PodPhase, int32_t>, 5> counts{{{PodPhase::Pending, c.pending},
                                                            {PodPhase::Running, c.running},
                                                            {PodPhase::Succeeded, c.succeeded},
                                                            {PodPhase::Failed, c.failed},
                                                            {PodPhase::Unknown, c.unknown}}};
  for (const auto& [phase, n] : counts)
    if (n != 0) phases[std::string(to_string(phase))] = n;
  return {{"phase", std::move(phases)}};
}

json status_to_json(const JobStatus& s) {
  json state;
  state["phase"] = to_string(s.state.phase);
  if (!s.state.reason.empty()) state["reason"] = s.state.reason;
  if (!s.state.message.empty()) state["message"] = s.state.message;
  set_if_time(state, "lastTransitionTime", s.state.last_transition_ms);
  json j;
  j["state"] = std::move(state);
  j["minAvailable"] = s.min_available;
  j["pending"] = s.pending;
  j["running"] = s.running;
  j["succeeded"] = s.succeeded;
  j["failed"] = s.failed;
  j["terminating"] = s.terminating;
  j["unknown"] = s.unknown;
  j["version"] = s.version;
  j["retryCount"] = s.retry_count;
  if (!s.task_status_count.empty()) {
    j["taskStatusCount"] = json::object();
    for (const auto& [task, c] : s.task_status_count)
      j["taskStatusCount"][task] = task_count_to_json(c);
  }
  if (!s.conditions.empty()) {
    j["conditions"] = json::array();
    for (const auto& c : s.conditions) {
      json cj{{"status", to_string(c.status)}};
      set_if_time(cj, "lastTransitionTime", c.last_transition_ms);
      j["conditions"].push_back(std::move(cj));
    }
  }
  if (s.running_duration_ms > 0) j["runningDuration"] = format_duration(s.running_duration_ms);
  if (s.observed_generation > 0) j["observedGeneration"] = s.observed_generation;
  return j;
}

// Kubernetes' ObjectMeta of a Job, JobTemplate (both a JobSpec) or JobFlowSpec.
template <class Spec>
json metadata_to_json(const Spec& spec, const std::string& uid, int64_t created_ms) {
  json metadata{{"name", spec.name}, {"namespace", spec.namespace_}, {"uid", uid}};
  set_if_time(metadata, "creationTimestamp", created_ms);
  if (!spec.labels.empty()) metadata["labels"] = string_map(spec.labels);
  if (!spec.annotations.empty()) metadata["annotations"] = string_map(spec.annotations);
  return metadata;
}

json container_status_to_json(const ContainerStatus& c) {
  json state;
  switch (c.state) {
    case ContainerState::Running: {
      json running = json::object();
      set_if_time(running, "startedAt", c.started_ms);
      state["running"] = std::move(running);
      break;
    }
    case ContainerState::Terminated: {
      json t{{"exitCode", c.exit_code}, {"signal", c.signal}};
      if (!c.reason.empty()) t["reason"] = c.reason;
      set_if_time(t, "startedAt", c.started_ms);
      set_if_time(t, "finishedAt", c.finished_ms);
      state["terminated"] = std::move(t);
      break;
    }
    case ContainerState::Waiting: {
      json w = json::object();
      if (!c.reason.empty()) w["reason"] = c.reason;
      state["waiting"] = std::move(w);
      break;
    }
  }
  return {{"name", c.name}, {"ready", c.state == ContainerState::Running}, {"state", state}};
}

// ---- YAML ----

bool is_yaml_word(const std::string& s) {
  static constexpr std::array<std::string_view, 14> kWords{
      "true", "false", "yes", "no", "on", "off", "y", "n", "null", "~", ".inf", ".nan", "-", "<<"};
  std::string lower = s;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return std::find(kWords.begin(), kWords.end(), lower) != kWords.end();
}

// Numbers, dates, times and IPs start with a digit and use only these characters; quoting
// every such string is simpler than resolving YAML 1.1's and 1.2's number grammars. Quantities
// like "500m" or "1Gi" hold another letter and stay plain, as kubectl prints them.
bool looks_numeric(const std::string& s) {
  static constexpr std::string_view kNumeric = "0123456789+-.:_eExXoObBabcdefABCDEFtTzZ ";
  return std::isdigit(static_cast<unsigned char>(s[0])) &&
         s.find_first_not_of(kNumeric) == std::string::npos;
}

bool needs_quotes(const std::string& s) {
  if (s.empty() || is_yaml_word(s) || looks_numeric(s)) return true;
  unsigned char first = static_cast<unsigned char>(s[0]);
  if (!std::isalnum(first) && first != '_' && first != '/') return true;
  if (s.back() == ' ' || s.back() == ':') return true;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (std::isalnum(c)) continue;
    if (c == ':' && s[i + 1] == ' ') return true;  // s.back() is not ':', so s[i + 1] exists
    if (std::string_view("_-./:@+=(),").find(static_cast<char>(c)) != std::string_view::npos)
      continue;
    if (c == ' ' && s[i + 1] != '#') continue;
    return true;
  }
  return false;
}

// JSON's string syntax is a subset of YAML's double-quoted scalars.
std::string yaml_string(const std::string& s) {
  if (!needs_quotes(s)) return s;
  return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string yaml_scalar(const json& j) {
  if (j.is_string()) return yaml_string(j.get<std::string>());
  return j.dump();
}

// The one-line form of a scalar or an empty container.
std::string yaml_inline(const json& j) {
  if (j.is_object()) return "{}";
  if (j.is_array()) return "[]";
  return yaml_scalar(j);
}

void emit_yaml(const json& j, int indent, std::string& out);

// Emits the entries of an object or the items of an array; the first line continues whatever
// already stands on the current line (a "- " for objects nested in arrays).
void emit_object(const json& j, int indent, bool first_inline, std::string& out) {
  bool first = true;
  for (const auto& [key, value] : j.items()) {
    if (!(first && first_inline)) out.append(indent, ' ');
    first = false;
    out += yaml_string(key);
    out += ':';
    if (value.is_object() && !value.empty()) {
      out += '\n';
      emit_object(value, indent + 2, false, out);
    } else if (value.is_array() && !value.empty()) {
      out += '\n';
      emit_yaml(value, indent, out);  // kubectl puts a list's dashes under its key
    } else {
      out += ' ' + yaml_inline(value) + '\n';
    }
  }
}

void emit_array(const json& j, int indent, bool first_inline, std::string& out) {
  bool first = true;
  for (const auto& item : j) {
    if (!(first && first_inline)) out.append(indent, ' ');
    first = false;
    out += "- ";
    if (item.is_object() && !item.empty())
      emit_object(item, indent + 2, true, out);
    else if (item.is_array() && !item.empty())
      emit_array(item, indent + 2, true, out);
    else
      out += yaml_inline(item) + '\n';
  }
}

void emit_yaml(const json& j, int indent, std::string& out) {
  if (j.is_object() && !j.empty())
    emit_object(j, indent, false, out);
  else if (j.is_array() && !j.empty())
    emit_array(j, indent, false, out);
  else
    out += yaml_inline(j) + '\n';
}

// ---- Tables ----

using Row = std::vector<std::string>;

// kubectl's tabwriter: each column as wide as its widest cell plus 3 spaces, the last unpadded.
std::string format_table(const std::vector<Row>& rows, int indent = 0) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line(indent, ' ');
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line.append(widths[i] - row[i].size() + 3, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + '\n';
  }
  return out;
}

std::string age_since(int64_t created_ms, int64_t now_ms) {
  return created_ms > 0 ? format_age(now_ms - created_ms) : "<unknown>";
}

int32_t shown_min_available(const Job& job) {
  return job.status.min_available > 0 ? job.status.min_available
                                      : job.spec.effective_min_available();
}

bool has_space(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); });
}

// kubectl's STATUS column: the pod's reason, else what its containers say, else the phase.
std::string pod_status_word(const Pod& pod) {
  if (!pod.reason.empty() && !has_space(pod.reason)) return pod.reason;
  if (pod.phase == PodPhase::Succeeded) return "Completed";
  if (pod.phase == PodPhase::Failed) {
    for (const auto& c : pod.containers) {
      if (c.state != ContainerState::Terminated || (c.exit_code == 0 && c.signal == 0)) continue;
      return !c.reason.empty() && !has_space(c.reason) ? c.reason : "Error";
    }
    return "Failed";
  }
  return std::string(to_string(pod.phase));
}

std::string pod_exit_codes(const Pod& pod) {
  if (pod.containers.empty()) return "<none>";
  std::string out;
  for (const auto& c : pod.containers) {
    if (!out.empty()) out += ',';
    if (c.state != ContainerState::Terminated)
      out += '-';
    else if (c.signal != 0 && c.exit_code == 0)
      out += "sig" + std::to_string(c.signal);
    else
      out += std::to_string(c.exit_code);
  }
  return out;
}

// What its pods hold of what pods may use, as `kubectl describe node` counts it.
std::string allocated_of_allocatable(const NodeInfo& n, const std::string& resource) {
  return format_quantity(n.allocated.get(resource)) + "/" +
         format_quantity(n.capacity.get(resource));
}

// ---- describe ----

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += sep;
    out += p;
  }
  return out;
}

std::string describe_policy(const LifecyclePolicy& p) {
  std::vector<std::string> when;
  for (Event e : p.events) when.emplace_back(to_string(e));
  std::string out = join(when, ",");
  if (p.exit_code) out += (out.empty() ? "" : " ") + fmt::format("exitCode={}", *p.exit_code);
  out += fmt::format(" -> {}", to_string(p.action));
  if (p.timeout_ms) out += fmt::format(" (timeout {})", format_duration(*p.timeout_ms));
  return out;
}

std::string task_counts_text(const TaskStatusCount& c) {
  std::vector<std::string> parts;
  const std::array<std::pair<const char*, int32_t>, 5> counts{{{"Pending", c.pending},
                                                               {"Running", c.running},
                                                               {"Succeeded", c.succeeded},
                                                               {"Failed", c.failed},
                                                               {"Unknown", c.unknown}}};
  for (const auto& [name, n] : counts)
    if (n != 0) parts.push_back(fmt::format("{}: {}", name, n));
  return parts.empty() ? "<none>" : join(parts, "  ");
}

std::string task_command(const TaskSpec& t) {
  std::vector<std::string> per_container;
  for (const auto& c : t.template_.containers) {
    std::vector<std::string> words = c.command;
    words.insert(words.end(), c.args.begin(), c.args.end());
    per_container.push_back(join(words, " "));
  }
  std::string out = join(per_container, "; ");
  std::replace(out.begin(), out.end(), '\n', ' ');
  return out.empty() ? "<none>" : out;
}

}  // namespace

std::string format_timestamp(int64_t ms) {
  std::time_t secs = static_cast<std::time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

std::string format_duration(int64_t ms) {
  std::string out = std::to_string(ms / 1000);
  if (int64_t frac = ms % 1000; frac != 0) {
    std::string digits = fmt::format("{:03}", frac < 0 ? -frac : frac);
    while (digits.back() == '0') digits.pop_back();
    if (ms < 0 && ms > -1000) out = "-0";
    out += "." + digits;
  }
  return out + "s";
}

// k8s.io/apimachinery/pkg/util/duration.HumanDuration, the AGE column of kubectl.
std::string format_age(int64_t ms) {
  int64_t seconds = ms / 1000;
  if (seconds < -1) return "<invalid>";
  if (seconds < 0 || ms < 0) return "0s";
  if (seconds < 60 * 2) return fmt::format("{}s", seconds);
  int64_t minutes = seconds / 60;
  if (minutes < 10) {
    int64_t s = seconds % 60;
    return s == 0 ? fmt::format("{}m", minutes) : fmt::format("{}m{}s", minutes, s);
  }
  if (minutes < 60 * 3) return fmt::format("{}m", minutes);
  int64_t hours = minutes / 60;
  if (hours < 8) {
    int64_t m = minutes % 60;
    return m == 0 ? fmt::format("{}h", hours) : fmt::format("{}h{}m", hours, m);
  }
  if (hours < 48) return fmt::format("{}h", hours);
  if (hours < 24 * 8) {
    int64_t h = hours % 24;
    return h == 0 ? fmt::format("{}d", hours / 24) : fmt::format("{}d{}h", hours / 24, h);
  }
  if (hours < 24 * 365 * 2) return fmt::format("{}d", hours / 24);
  if (hours < 24 * 365 * 8) {
    int64_t days = (hours / 24) % 365;
    return days == 0 ? fmt::format("{}y", hours / 24 / 365)
                     : fmt::format("{}y{}d", hours / 24 / 365, days);
  }
  return fmt::format("{}y", hours / 24 / 365);
}

nlohmann::json job_to_json(const Job& job) {
  return {{"apiVersion", "batch.volcano.sh/v1alpha1"},
          {"kind", "Job"},
          {"metadata",
           [&] {
             auto meta = metadata_to_json(job.spec, job.uid, job.created_ms);
             meta["generation"] = job.spec.generation;
             return meta;
           }()},
          {"spec", spec_to_json(job.spec)},
          {"status", status_to_json(job.status)}};
}

json queue_to_json(const QueueView& v) {
  const auto& q = v.queue.spec;
  json meta{{"name", q.name}};
  if (!v.queue.uid.empty()) meta["uid"] = v.queue.uid;
  meta["generation"] = v.queue.generation;
  set_if_time(meta, "creationTimestamp", v.queue.created_ms);
  if (!q.labels.empty()) meta["labels"] = string_map(q.labels);
  if (!q.annotations.empty()) meta["annotations"] = string_map(q.annotations);
  json spec{{"weight", q.weight}, {"reclaimable", q.reclaimable}};
  if (q.capability) spec["capability"] = resource_map(*q.capability);
  json status{{"state", v.status.state.empty() ? observed_state(q, v.status) : v.status.state},
              {"allocated", resource_map(v.status.allocated)},
              {"deserved", resource_map(v.status.deserved)},
              {"pending", v.status.pending},
              {"inqueue", v.status.inqueue},
              {"running", v.status.running}};
  return {{"apiVersion", "scheduling.volcano.sh/v1beta1"},
          {"kind", "Queue"},
          {"metadata", meta},
          {"spec", spec},
          {"status", status}};
}

json priority_class_to_json(const PriorityClass& c) {
  json meta{{"name", c.name}, {"uid", c.uid}};
  set_if_time(meta, "creationTimestamp", c.created_ms);
  json out{{"apiVersion", "scheduling.k8s.io/v1"},
           {"kind", "PriorityClass"},
           {"metadata", meta},
           {"value", c.value},
           {"preemptionPolicy", c.preemption_policy}};
  if (c.global_default) out["globalDefault"] = true;
  if (!c.description.empty()) out["description"] = c.description;
  return out;
}

nlohmann::json template_to_json(const JobTemplate& t) {
  return {{"apiVersion", kFlowApiVersion},
          {"kind", "JobTemplate"},
          {"metadata", metadata_to_json(t.spec, t.uid, t.created_ms)},
          {"spec", spec_to_json(t.spec)}};
}

nlohmann::json flow_to_json(const JobFlow& f) {
  json flows = json::array();
  for (const auto& flow : f.spec.flows) {
    json j{{"name", flow.name}};
    if (flow.depends_on) {
      j["dependsOn"] = {{"targets", flow.depends_on->targets}};
      const auto& dep = *flow.depends_on;
      json probe = json::object();
      for (const auto& p : dep.probe)
        probe["taskStatusList"].push_back({{"taskName", p.task_name}, {"phase", p.phase}});
      for (const auto& p : dep.http_get) {
        json g{{"taskName", p.task_name}, {"path", p.path}, {"port", p.port}};
        if (!p.header_name.empty())
          g["httpHeader"] = {{"name", p.header_name}, {"value", p.header_value}};
        probe["httpGetList"].push_back(std::move(g));
      }
      for (const auto& p : dep.tcp_socket)
        probe["tcpSocketList"].push_back({{"taskName", p.task_name}, {"port", p.port}});
      if (!probe.empty()) j["dependsOn"]["probe"] = std::move(probe);
    }
    if (flow.retry > 0) j["retry"] = flow.retry;
    if (flow.patch) j["patch"] = {{"jobSpec", spec_to_json(*flow.patch)}};
    flows.push_back(std::move(j));
  }
  json state{{"phase", f.status.phase}};
  if (!f.status.reason.empty()) state["reason"] = f.status.reason;
  if (!f.status.message.empty()) state["message"] = f.status.message;
  set_if_time(state, "lastTransitionTime", f.status.last_transition_ms);
  json status{{"state", std::move(state)}};
  const std::array<std::pair<const char*, const std::vector<std::string>*>, 6> lists{
      {{"pendingJobs", &f.status.pending_jobs},
       {"runningJobs", &f.status.running_jobs},
       {"completedJobs", &f.status.completed_jobs},
       {"failedJobs", &f.status.failed_jobs},
       {"terminatedJobs", &f.status.terminated_jobs},
       {"unKnowJobs", &f.status.unknown_jobs}}};
  for (const auto& [key, names] : lists)
    if (!names->empty()) status[key] = *names;
  if (!f.status.job_status_list.empty()) {
    json list = json::array();
    for (const auto& j : f.status.job_status_list) {
      json line{{"name", j.name}, {"state", j.state}, {"restartCount", j.restart_count}};
      set_if_time(line, "startTimestamp", j.start_ms);
      set_if_time(line, "endTimestamp", j.end_ms);
      json histories = json::array();
      for (const auto& h : j.running_histories) {
        json hj{{"state", h.state}};
        set_if_time(hj, "startTimestamp", h.start_ms);
        set_if_time(hj, "endTimestamp", h.end_ms);
        histories.push_back(std::move(hj));
      }
      line["runningHistories"] = std::move(histories);
      list.push_back(std::move(line));
    }
    status["jobStatusList"] = std::move(list);
  }
  if (!f.status.conditions.empty()) {
    json conditions = json::object();
    for (const auto& [job, c] : f.status.conditions) {
      json cj{{"phase", c.phase}};
      set_if_time(cj, "createTimestamp", c.create_ms);
      if (c.running_duration_ms > 0) cj["runningDuration"] = format_duration(c.running_duration_ms);
      json counts = json::object();
      for (const auto& [task, count] : c.task_status_count)
        counts[task] = task_count_to_json(count);
      cj["taskStatusCount"] = std::move(counts);
      conditions[job] = std::move(cj);
    }
    status["conditions"] = std::move(conditions);
  }
  return {{"apiVersion", kFlowApiVersion},
          {"kind", "JobFlow"},
          {"metadata", metadata_to_json(f.spec, f.uid, f.created_ms)},
          {"spec", {{"flows", std::move(flows)}, {"jobRetainPolicy", f.spec.job_retain_policy}}},
          {"status", std::move(status)}};
}

nlohmann::json pod_to_json(const Pod& pod) {
  json labels, annotations;
  if (pod.batch_job) {
    // A Kubernetes Job's pod: the labels and the index annotation its controller puts on it.
    labels = {{"batch.kubernetes.io/job-name", pod.job_name}, {"job-name", pod.job_name}};
    annotations = json::object();
    if (pod.index >= 0) {
      labels["batch.kubernetes.io/job-completion-index"] = std::to_string(pod.index);
      annotations["batch.kubernetes.io/job-completion-index"] = std::to_string(pod.index);
    }
  } else {
    labels = {{"volcano.sh/job-name", pod.job_name},
              {"volcano.sh/task-spec", pod.task_name},
              {"volcano.sh/task-index", std::to_string(pod.index)}};
    if (pod.partition >= 0) labels["volcano.sh/task-partition-id"] = std::to_string(pod.partition);
    annotations = {{"volcano.sh/job-version", std::to_string(pod.job_version)}};
  }
  json metadata{{"name", pod.name},
                {"namespace", pod.namespace_},
                {"uid", pod.uid},
                {"labels", std::move(labels)},
                {"annotations", std::move(annotations)}};
  if (pod.batch_job)
    metadata["ownerReferences"] = json::array({{{"apiVersion", "batch/v1"},
                                                {"kind", "Job"},
                                                {"name", pod.job_name},
                                                {"controller", true}}});
  set_if_time(metadata, "creationTimestamp", pod.created_ms);
  json spec = json::object();
  if (!pod.node.empty()) spec["nodeName"] = pod.node;
  json status{{"phase", to_string(pod.phase)}};
  if (!pod.reason.empty()) status["reason"] = pod.reason;
  if (!pod.message.empty()) status["message"] = pod.message;
  if (!pod.host_ip.empty()) status["hostIP"] = pod.host_ip;
  set_if_time(status, "startTime", pod.started_ms);
  status["containerStatuses"] = json::array();
  for (const auto& c : pod.containers)
    status["containerStatuses"].push_back(container_status_to_json(c));
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", std::move(metadata)},
          {"spec", std::move(spec)},
          {"status", std::move(status)}};
}

nlohmann::json node_to_json(const NodeInfo& n) {
  json metadata{{"name", n.name}};
  json labels(n.labels);
  if (n.coordinator) labels["node-role.kubernetes.io/coordinator"] = "";
  if (!labels.empty()) metadata["labels"] = std::move(labels);
  json ready{{"type", "Ready"}, {"status", n.ready ? "True" : "False"}};
  if (!n.ready && !n.reason.empty()) ready["message"] = n.reason;
  if (n.last_heartbeat_ms > 0) ready["lastHeartbeatTime"] = format_timestamp(n.last_heartbeat_ms);
  json status{{"address", n.address},
              {"conditions", json::array({std::move(ready)})},
              {"capacity", resource_map(n.capacity)},
              {"allocatable", resource_map(n.capacity)},
              {"allocated", resource_map(n.allocated)},
              {"pods", n.pods},
              {"incarnation", std::to_string(n.incarnation)}};
  if (n.joined_ms > 0) status["joinedTime"] = format_timestamp(n.joined_ms);
  if (!n.presented.values.empty()) status["presented"] = resource_map(n.presented);
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", std::move(metadata)},
          {"status", std::move(status)}};
}

std::string to_yaml(const nlohmann::json& j) {
  std::string out;
  emit_yaml(j, 0, out);
  return out;
}

std::string jobs_table(const std::vector<Job>& jobs, bool wide, int64_t now_ms, bool namespaces) {
  if (jobs.empty()) return "No resources found.";
  std::vector<Row> rows;
  Row header{"NAME", "STATUS", "MINAVAILABLE", "RUNNINGS", "AGE"};
  if (wide || namespaces) header.insert(header.begin(), "NAMESPACE");
  if (wide)
    header.insert(header.end(), {"PENDING", "SUCCEEDED", "FAILED", "RETRYCOUNT", "VERSION"});
  rows.push_back(std::move(header));
  for (const auto& job : jobs) {
    const auto& st = job.status;
    Row row{job.spec.name, std::string(to_string(st.state.phase)),
            std::to_string(shown_min_available(job)), std::to_string(st.running),
            age_since(job.created_ms, now_ms)};
    if (wide || namespaces) row.insert(row.begin(), job.spec.namespace_);
    if (wide)
      row.insert(row.end(), {std::to_string(st.pending), std::to_string(st.succeeded),
                             std::to_string(st.failed), std::to_string(st.retry_count),
                             std::to_string(st.version)});
    rows.push_back(std::move(row));
  }
  return format_table(rows);
}

std::string pod_groups_table(const std::vector<PodGroupView>& groups, bool wide, int64_t now_ms,
                             bool namespaces) {
  if (groups.empty()) return "No resources found.";
  std::vector<Row> rows;
  Row header{"NAME", "STATUS", "MINMEMBER", "RUNNINGS", "AGE"};
  if (wide || namespaces) header.insert(header.begin(), "NAMESPACE");
  if (wide) header.insert(header.end(), {"QUEUE", "MESSAGE"});
  rows.push_back(std::move(header));
  for (const auto& pg : groups) {
    Row row{pg.name, pg.phase, std::to_string(pg.min_member), std::to_string(pg.running),
            age_since(pg.created_ms, now_ms)};
    if (wide || namespaces) row.insert(row.begin(), pg.namespace_);
    if (wide) row.insert(row.end(), {pg.queue, pg.message.empty() ? "<none>" : pg.message});
    rows.push_back(std::move(row));
  }
  return format_table(rows);
}

std::string templates_table(const std::vector<JobTemplate>& templates, bool wide, int64_t now_ms) {
  if (templates.empty()) return "No resources found.";
  std::vector<Row> rows;
  Row header{"NAME", "AGE"};
  if (wide) header.insert(header.end(), {"TASKS", "REPLICAS"});
  rows.push_back(std::move(header));
  for (const auto& t : templates) {
    Row row{t.spec.name, age_since(t.created_ms, now_ms)};
    if (wide)
      row.insert(row.end(),
                 {std::to_string(t.spec.tasks.size()), std::to_string(t.spec.total_replicas())});
    rows.push_back(std::move(row));
  }
  return format_table(rows);
}

namespace {

// "cpu=2,memory=4Gi" in a table cell; "<none>" when nothing is left to say.
std::string resources_cell(const ResourceList& r, bool zeros = false) {
  std::string out;
  for (const auto& [k, v] : r.values) {
    // A pod slot is a node's, not a share anyone asked for; a zero says nothing, except in a
    // capability (a queue capped at nothing).
    if (k == "pods" || (v == 0 && !zeros)) continue;
    out += (out.empty() ? "" : ",") + k + "=" + format_quantity(v);
  }
  return out.empty() ? "<none>" : out;
}

}  // namespace

std::string queues_table(const std::vector<QueueView>& queues, bool wide, int64_t now_ms) {
  if (queues.empty()) return "No resources found.";
  std::vector<Row> rows;
  Row header{"NAME",     "WEIGHT",  "STATE",   "CAPABILITY", "ALLOCATED",
             "DESERVED", "PENDING", "INQUEUE", "RUNNING",    "AGE"};
  if (wide) header.push_back("RECLAIMABLE");
  rows.push_back(std::move(header));
  for (const auto& v : queues) {
    const auto& q = v.queue.spec;
    Row row{q.name,
            std::to_string(q.weight),
            v.status.state.empty() ? observed_state(q, v.status) : v.status.state,
            q.capability ? resources_cell(*q.capability, true) : "<none>",
            resources_cell(v.status.allocated),
            resources_cell(v.status.deserved),
            std::to_string(v.status.pending),
            std::to_string(v.status.inqueue),
            std::to_string(v.status.running),
            age_since(v.queue.created_ms, now_ms)};
    if (wide) row.push_back(q.reclaimable ? "true" : "false");
    rows.push_back(std::move(row));
  }
  return format_table(rows);
}

std::string priority_classes_table(const std::vector<PriorityClass>& classes, bool wide,
                                   int64_t now_ms) {
  if (classes.empty()) return "No resources found.";
  std::vector<Row> rows;
  Row header{"NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"};
  if (wide) header.push_back("DESCRIPTION");
  rows.push_back(std::move(header));
  for (const auto& c : classes) {
    Row row{c.name, std::to_string(c.value), c.global_default ? "true" : "false",
            age_since(c.created_ms, now_ms), c.preemption_policy};
    if (wide) row.push_back(c.description.empty() ? "<none>" : c.description);
    rows.push_back(std::move(row));
  }
  return format_table(rows);
}

std::string flows_table(const std::vector<JobFlow>& flows, bool wide, int64_t now_ms) {
  if (flows.empty()) return "No resources found.";
  std::vector<Row> rows;
  Row header{"NAME", "STATUS", "AGE"};
  if (wide) header.insert(header.end(), {"FLOWS", "RETAIN"});
  rows.push_back(std::move(header));
  for (const auto& f : flows) {
    Row row{f.spec.name, f.status.phase, age_since(f.created_ms, now_ms)};
    if (wide)
      row.insert(row.end(), {std::to_string(f.spec.flows.size()), f.spec.job_retain_policy});
    rows.push_back(std::move(row));
  }
  return format_table(rows);
}

std::string pods_table(const std::vector<Pod>& pods, bool wide, int64_t now_ms, bool namespaces) {
  if (pods.empty()) return "No resources found.";
  std::vector<Row> rows;
  const bool partitions =
      std::any_of(pods.begin(), pods.end(), [](const Pod& p) { return p.partition >= 0; });
  Row header{"NAME", "READY", "STATUS", "RESTARTS", "AGE"};
  if (partitions) header.push_back("PARTITION");
  if (wide) header.insert(header.end(), {"IP", "NODE", "EXIT"});
  if (namespaces) header.insert(header.begin(), "NAMESPACE");
  rows.push_back(std::move(header));
  for (const auto& pod : pods) {
    auto running = std::count_if(pod.containers.begin(), pod.containers.end(),
                                 [](const auto& c) { return c.state == ContainerState::Running; });
    // A restarted pod is a new pod in caldera (Volcano's way), so containers never restart.
    Row row{pod.name, fmt::format("{}/{}", running, pod.containers.size()), pod_status_word(pod),
            "0", age_since(pod.created_ms, now_ms)};
    if (partitions) row.push_back(pod.partition >= 0 ? std::to_string(pod.partition) : "<none>");
    if (wide)
      row.insert(row.end(), {pod.host_ip.empty() ? "<none>" : pod.host_ip,
                             pod.node.empty() ? "<none>" : pod.node, pod_exit_codes(pod)});
    if (namespaces) row.insert(row.begin(), pod.namespace_);
    rows.push_back(std::move(row));
  }
  return format_table(rows);
}

std::string nodes_table(const std::vector<NodeInfo>& nodes, bool wide, int64_t now_ms) {
  if (nodes.empty()) return "No resources found.";
  std::vector<Row> rows;
  Row header{"NAME",
             "STATUS",
             "ROLES",
             "AGE",
             "CPU(ALLOCATED/ALLOCATABLE)",
             "MEMORY(ALLOCATED/ALLOCATABLE)",
             "PODS",
             "HEARTBEAT"};
  if (wide)
    header.insert(header.end(), {"ADDRESS", "INCARNATION", "LABELS", "PRESENTED", "REASON"});
  rows.push_back(std::move(header));
  for (const auto& n : nodes) {
    std::string pods = std::to_string(n.pods);
    if (n.capacity.values.count("pods")) pods += "/" + format_quantity(n.capacity.get("pods"));
    Row row{n.name,
            n.ready ? "Ready" : "NotReady",
            n.coordinator ? "coordinator" : "<none>",
            age_since(n.joined_ms, now_ms),
            allocated_of_allocatable(n, "cpu"),
            allocated_of_allocatable(n, "memory"),
            pods,
            n.last_heartbeat_ms > 0 ? format_age(now_ms - n.last_heartbeat_ms) + " ago" : "<none>"};
    if (wide) {
      std::string labels;
      for (const auto& [k, v] : n.labels) labels += (labels.empty() ? "" : ",") + k + "=" + v;
      // What the node claims beyond the config, which is believed instead: cpu=16,memory=64Gi.
      std::string presented;
      for (const auto& [k, v] : n.presented.values)
        presented += (presented.empty() ? "" : ",") + k + "=" + format_quantity(v);
      row.insert(
          row.end(),
          {n.address, std::to_string(n.incarnation), labels.empty() ? "<none>" : labels,
           presented.empty() ? "<none>" : presented, n.reason.empty() ? "<none>" : n.reason});
    }
    rows.push_back(std::move(row));
  }
  return format_table(rows);
}

namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

// kubectl describe's "Label:   value" lines, values in one column. An empty label continues the
// field above (another label of Labels).
std::string format_fields(const Fields& fields, size_t indent = 0) {
  size_t width = 0;
  for (const auto& [label, value] : fields) width = std::max(width, label.size() + 2);
  std::string out;
  for (const auto& [label, value] : fields)
    out += fmt::format("{}{:<{}}{}\n", std::string(indent, ' '), label.empty() ? "" : label + ":",
                       width, value);
  return out;
}

}  // namespace

namespace {

// Each entry's depth in the DAG: 0 without targets, else one more than its deepest target.
// Admission refuses cycles; a depth is capped all the same, so a bad record cannot loop.
std::map<std::string, int> flow_depths(const JobFlowSpec& spec) {
  std::map<std::string, int> depth;
  for (const auto& f : spec.flows) depth[f.name] = 0;
  for (size_t round = 0; round < spec.flows.size(); ++round)
    for (const auto& f : spec.flows)
      if (f.depends_on)
        for (const auto& t : f.depends_on->targets)
          if (depth.count(t)) depth[f.name] = std::max(depth[f.name], depth[t] + 1);
  return depth;
}

std::string histories_text(const FlowJobStatus& line, int64_t now_ms) {
  std::string out;
  for (const auto& h : line.running_histories) {
    if (!out.empty()) out += " -> ";
    out += h.state;
    if (h.end_ms > 0)
      out += " " + format_duration(h.end_ms - h.start_ms);
    else if (!is_finished(parse_job_phase(h.state).value_or(JobPhase::Pending)))
      out += " " + format_duration(now_ms - h.start_ms) + "+";
  }
  return out;
}

}  // namespace

std::string describe_flow(const JobFlow& flow, int64_t now_ms) {
  const auto& st = flow.status;
  Fields fields{{"Name", flow.spec.name},
                {"Namespace", flow.spec.namespace_},
                {"UID", flow.uid},
                {"Created", flow.created_ms > 0
                                ? fmt::format("{} ({} ago)", format_timestamp(flow.created_ms),
                                              format_age(now_ms - flow.created_ms))
                                : "<unknown>"},
                {"Job Retain Policy", flow.spec.job_retain_policy},
                {"Phase", st.phase}};
  if (!st.reason.empty()) fields.emplace_back("Reason", st.reason);
  if (!st.message.empty()) fields.emplace_back("Message", st.message);
  std::string out = format_fields(fields);

  // The DAG, one entry per line in depth order, each under the entries it waits for.
  out += "DAG:\n";
  auto depth = flow_depths(flow.spec);
  std::vector<const Flow*> order;
  for (const auto& f : flow.spec.flows) order.push_back(&f);
  std::stable_sort(order.begin(), order.end(),
                   [&](const Flow* a, const Flow* b) { return depth[a->name] < depth[b->name]; });
  std::vector<Row> rows{{"FLOW", "AFTER", "JOB", "PHASE", "STARTED", "ENDED", "RETRIES"}};
  for (const Flow* f : order) {
    const auto job = flow_job_name(flow.spec.name, f->name);
    std::string after = "-";
    if (f->depends_on && !f->depends_on->targets.empty()) {
      after.clear();
      for (const auto& t : f->depends_on->targets) after += (after.empty() ? "" : ",") + t;
      if (!f->depends_on->probe.empty()) after += " (probe)";
    }
    const FlowJobStatus* line = nullptr;
    for (const auto& l : st.job_status_list)
      if (l.name == job) line = &l;
    rows.push_back({std::string(static_cast<size_t>(2 * depth[f->name]), ' ') + f->name, after, job,
                    line ? line->state : "<not created>",
                    line && line->start_ms > 0 ? format_timestamp(line->start_ms) : "-",
                    line && line->end_ms > 0 ? format_timestamp(line->end_ms) : "-",
                    line ? std::to_string(line->restart_count) + "/" + std::to_string(f->retry)
                         : "0/" + std::to_string(f->retry)});
  }
  out += format_table(rows, 2);

  out += "Histories:\n";
  if (st.job_status_list.empty()) out += "  <none>\n";
  std::vector<Row> hist;
  for (const auto& line : st.job_status_list)
    hist.push_back({line.name + ":", histories_text(line, now_ms)});
  out += format_table(hist, 2);
  return out;
}

std::string describe_job(const Job& job, const std::vector<Pod>& pods, int64_t now_ms) {
  const JobSpec& spec = job.spec;
  const JobStatus& st = job.status;
  Fields fields{
      {"Name", spec.name},
      {"Namespace", spec.namespace_},
      {"UID", job.uid},
      {"Created", job.created_ms > 0 ? fmt::format("{} ({} ago)", format_timestamp(job.created_ms),
                                                   format_age(now_ms - job.created_ms))
                                     : "<unknown>"},
      {"Queue", spec.queue},
      {"Min Available", std::to_string(spec.effective_min_available())},
      {"Max Retry", std::to_string(spec.effective_max_retry())},
      {"Phase", std::string(to_string(st.state.phase))}};
  if (!st.state.reason.empty()) fields.emplace_back("Reason", st.state.reason);
  if (!st.state.message.empty()) fields.emplace_back("Message", st.state.message);
  fields.insert(fields.end(), {{"Retry Count", std::to_string(st.retry_count)},
                               {"Version", std::to_string(st.version)},
                               {"Running Duration", format_duration(st.running_duration_ms)},
                               {"Counts", fmt::format("Pending: {}  Running: {}  Succeeded: {}  "
                                                      "Failed: {}  Terminating: {}  Unknown: {}",
                                                      st.pending, st.running, st.succeeded,
                                                      st.failed, st.terminating, st.unknown)}});
  std::string out = format_fields(fields);

  out += "Task Status:\n";
  if (st.task_status_count.empty()) out += "  <none>\n";
  std::vector<Row> task_rows;
  for (const auto& [task, c] : st.task_status_count)
    task_rows.push_back({task + ":", task_counts_text(c)});
  out += format_table(task_rows, 2);

  out += "Conditions:\n";
  if (st.conditions.empty()) {
    out += "  <none>\n";
  } else {
    std::vector<Row> rows{{"PHASE", "TIME"}};
    for (const auto& c : st.conditions)
      rows.push_back({std::string(to_string(c.status)), format_timestamp(c.last_transition_ms)});
    out += format_table(rows, 2);
  }

  const auto pg = pod_group_of(job);
  out += "Pod Group:\n";
  std::string task_min;
  for (const auto& [task, n] : pg.min_task_member)
    task_min += fmt::format("{}{}={}", task_min.empty() ? "" : ", ", task, n);
  Fields group{{"Phase", pg.phase},
               {"Min Member", std::to_string(pg.min_member)},
               {"Min Task Member", task_min.empty() ? "<none>" : task_min},
               {"Queue", pg.queue},
               {"Priority Class", pg.priority_class.empty() ? "<none>" : pg.priority_class}};
  if (pg.min_resources) {
    const auto min = resource_text(*pg.min_resources);
    group.emplace_back("Min Resources", min.empty() ? "<none>" : min);
  }
  if (!pg.condition.empty())
    group.emplace_back("Condition", pg.condition + (pg.message.empty() ? "" : ": " + pg.message));
  out += format_fields(group, 2);

  out += "Policies:\n";
  std::vector<std::string> policies;
  for (const auto& p : spec.policies) policies.push_back(describe_policy(p));
  for (const auto& t : spec.tasks)
    for (const auto& p : t.policies)
      policies.push_back(fmt::format("task {}: {}", t.name, describe_policy(p)));
  if (policies.empty()) out += "  <none>\n";
  for (const auto& p : policies) out += "  " + p + "\n";

  out += "Tasks:\n";
  std::vector<Row> task_spec_rows{{"NAME", "REPLICAS", "COMMAND"}};
  for (const auto& t : spec.tasks)
    task_spec_rows.push_back({t.name, std::to_string(t.replicas), task_command(t)});
  out += format_table(task_spec_rows, 2);

  out += "Pods:\n";
  if (pods.empty()) {
    out += "  <none>\n";
  } else {
    std::vector<Row> rows{{"NAME", "STATUS", "NODE", "EXIT", "AGE"}};
    for (const auto& p : pods)
      rows.push_back({p.name, pod_status_word(p), p.node.empty() ? "<none>" : p.node,
                      pod_exit_codes(p), age_since(p.created_ms, now_ms)});
    out += format_table(rows, 2);
  }

  // kubectl's Events section: the most recent last.
  out += "Events:\n";
  if (job.events.empty()) {
    out += "  <none>\n";
  } else {
    std::vector<Row> rows{{"TYPE", "REASON", "AGE", "MESSAGE"}};
    for (const auto& e : job.events)
      rows.push_back({e.type, e.reason, age_since(e.time_ms, now_ms), e.message});
    out += format_table(rows, 2);
  }
  return out;
}

std::string last_lines(std::string_view text, int64_t n) {
  if (n <= 0) return "";
  size_t end = text.size();
  if (end > 0 && text[end - 1] == '\n') --end;  // the last line's own newline
  size_t start = end;
  for (int64_t lines = 0; start > 0; --start) {
    if (text[start - 1] == '\n' && ++lines == n) break;
  }
  return std::string(text.substr(start));
}

std::string describe_pod(const Pod& pod, int64_t now_ms) {
  auto when = [&](int64_t ms) {
    return ms > 0 ? fmt::format("{} ({} ago)", format_timestamp(ms), format_age(now_ms - ms))
                  : std::string("<none>");
  };
  std::string node = pod.node.empty() ? "<none>" : pod.node;
  if (!pod.node.empty() && !pod.host_ip.empty()) node += "/" + pod.host_ip;
  Fields fields{
      {"Name", pod.name}, {"Namespace", pod.namespace_},     {"UID", pod.uid},
      {"Node", node},     {"Created", when(pod.created_ms)}, {"Start Time", when(pod.started_ms)}};
  if (!pod.batch_job) {
    fields.emplace_back("Labels", "volcano.sh/job-name=" + pod.job_name);
    fields.emplace_back("", "volcano.sh/task-spec=" + pod.task_name);
    fields.emplace_back("", "volcano.sh/task-index=" + std::to_string(pod.index));
    if (pod.partition >= 0)
      fields.emplace_back("", "volcano.sh/task-partition-id=" + std::to_string(pod.partition));
    fields.emplace_back("Annotations", "volcano.sh/job-version=" + std::to_string(pod.job_version));
  } else {
    // A Kubernetes Job's pod: the labels and annotations -o yaml shows, one a line.
    const json meta = pod_to_json(pod)["metadata"];
    for (const auto& [what, title] :
         {std::pair{"labels", "Labels"}, {"annotations", "Annotations"}}) {
      bool first = true;
      for (const auto& [k, v] : meta[what].items()) {
        fields.emplace_back(first ? title : "", k + "=" + v.get<std::string>());
        first = false;
      }
      if (first) fields.emplace_back(title, "<none>");
    }
  }
  fields.emplace_back("Status", pod_status_word(pod));
  if (!pod.reason.empty()) fields.emplace_back("Reason", pod.reason);
  if (!pod.message.empty()) fields.emplace_back("Message", pod.message);
  fields.emplace_back("IP", pod.host_ip.empty() ? "<none>" : pod.host_ip);
  fields.emplace_back("Controlled By", "Job/" + pod.job_name);
  if (pod.finished_ms > 0) fields.emplace_back("Finished", when(pod.finished_ms));
  std::string out = format_fields(fields);

  out += "Containers:\n";
  if (pod.containers.empty()) out += "  <none>\n";
  for (const auto& c : pod.containers) {
    out += "  " + c.name + ":\n";
    std::vector<Row> rows{{"State:", std::string(to_string(c.state))}};
    if (!c.reason.empty()) rows.push_back({"  Reason:", c.reason});
    if (c.state == ContainerState::Terminated) {
      rows.push_back({"  Exit Code:", std::to_string(c.exit_code)});
      if (c.signal != 0) rows.push_back({"  Signal:", std::to_string(c.signal)});
    }
    if (c.started_ms > 0) rows.push_back({"  Started:", when(c.started_ms)});
    if (c.finished_ms > 0) rows.push_back({"  Finished:", when(c.finished_ms)});
    rows.push_back({"Ready:", c.state == ContainerState::Running ? "True" : "False"});
    out += format_table(rows, 4);
  }
  return out;
}

}  // namespace caldera
