// Volcano's and Kubernetes' words for phases, events and actions, and the small rules on them.
#include <algorithm>
#include <array>
#include <utility>

#include "messages/model/diagnostic.hpp"
#include "messages/model/job_flow.hpp"
#include "messages/model/job_spec.hpp"
#include "messages/model/job_status.hpp"
#include "messages/model/lifecycle.hpp"
#include "messages/model/pod.hpp"

namespace caldera {
namespace {

template <class E, size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& table, E value) {
  for (const auto& [e, name] : table)
    if (e == value) return name;
  return "Unknown";
}

template <class E, size_t N>
std::optional<E> value_of(const std::array<std::pair<E, std::string_view>, N>& table,
                          std::string_view name) {
  for (const auto& [e, n] : table)
    if (n == name) return e;
  return std::nullopt;
}

constexpr std::array<std::pair<Event, std::string_view>, 10> kEvents{{
    {Event::Any, "*"},
    {Event::PodPending, "PodPending"},
    {Event::PodRunning, "PodRunning"},
    {Event::PodFailed, "PodFailed"},
    {Event::PodEvicted, "PodEvicted"},
    {Event::TaskCompleted, "TaskCompleted"},
    {Event::TaskFailed, "TaskFailed"},
    {Event::JobUnknown, "Unknown"},
    {Event::OutOfSync, "OutOfSync"},
    {Event::CommandIssued, "CommandIssued"},
}};

constexpr std::array<std::pair<Action, std::string_view>, 9> kActions{{
    {Action::SyncJob, "SyncJob"},
    {Action::RestartJob, "RestartJob"},
    {Action::AbortJob, "AbortJob"},
    {Action::TerminateJob, "TerminateJob"},
    {Action::CompleteJob, "CompleteJob"},
    {Action::ResumeJob, "ResumeJob"},
    {Action::RestartTask, "RestartTask"},
    {Action::RestartPod, "RestartPod"},
    {Action::RestartPartition, "RestartPartition"},
}};

constexpr std::array<std::pair<JobPhase, std::string_view>, 10> kJobPhases{{
    {JobPhase::Pending, "Pending"},
    {JobPhase::Aborting, "Aborting"},
    {JobPhase::Aborted, "Aborted"},
    {JobPhase::Running, "Running"},
    {JobPhase::Restarting, "Restarting"},
    {JobPhase::Completing, "Completing"},
    {JobPhase::Completed, "Completed"},
    {JobPhase::Terminating, "Terminating"},
    {JobPhase::Terminated, "Terminated"},
    {JobPhase::Failed, "Failed"},
}};

constexpr std::array<std::pair<PodPhase, std::string_view>, 5> kPodPhases{{
    {PodPhase::Pending, "Pending"},
    {PodPhase::Running, "Running"},
    {PodPhase::Succeeded, "Succeeded"},
    {PodPhase::Failed, "Failed"},
    {PodPhase::Unknown, "Unknown"},
}};

constexpr std::array<std::pair<ContainerState, std::string_view>, 3> kContainerStates{{
    {ContainerState::Waiting, "Waiting"},
    {ContainerState::Running, "Running"},
    {ContainerState::Terminated, "Terminated"},
}};

constexpr std::array<std::pair<FlowPhase, std::string_view>, 5> kFlowPhases{{
    {FlowPhase::Pending, "Pending"},
    {FlowPhase::Running, "Running"},
    {FlowPhase::Succeed, "Succeed"},
    {FlowPhase::Failed, "Failed"},
    {FlowPhase::Terminating, "Terminating"},
}};

}  // namespace

std::string_view to_string(FlowPhase p) {
  return name_of(kFlowPhases, p);
}
std::optional<FlowPhase> parse_flow_phase(std::string_view s) {
  return value_of(kFlowPhases, s);
}
std::string_view to_string(Event e) {
  return name_of(kEvents, e);
}
std::string_view to_string(Action a) {
  return name_of(kActions, a);
}
std::string_view to_string(JobPhase p) {
  return name_of(kJobPhases, p);
}
std::string_view to_string(PodPhase p) {
  return name_of(kPodPhases, p);
}
std::string_view to_string(ContainerState s) {
  return name_of(kContainerStates, s);
}

std::optional<Event> parse_event(std::string_view s) {
  if (s == "Any") return Event::Any;  // Volcano's constant name for "*"
  if (s == "JobUnknown") return Event::JobUnknown;
  return value_of(kEvents, s);
}
std::optional<Action> parse_action(std::string_view s) {
  return value_of(kActions, s);
}
std::optional<JobPhase> parse_job_phase(std::string_view s) {
  return value_of(kJobPhases, s);
}
std::optional<PodPhase> parse_pod_phase(std::string_view s) {
  return value_of(kPodPhases, s);
}
std::optional<ContainerState> parse_container_state(std::string_view s) {
  return value_of(kContainerStates, s);
}

bool is_finished(JobPhase p) {
  return p == JobPhase::Completed || p == JobPhase::Terminated || p == JobPhase::Failed;
}

PodPhase derive_pod_phase(const std::vector<ContainerStatus>& containers) {
  if (containers.empty()) return PodPhase::Pending;
  bool any_running = false, all_terminated = true, any_failed = false, any_waiting = false;
  for (const auto& c : containers) {
    if (c.state == ContainerState::Running) any_running = true;
    if (c.state == ContainerState::Waiting) any_waiting = true;
    if (c.state != ContainerState::Terminated) all_terminated = false;
    if (c.state == ContainerState::Terminated && (c.exit_code != 0 || c.signal != 0))
      any_failed = true;
  }
  if (all_terminated) return any_failed ? PodPhase::Failed : PodPhase::Succeeded;
  if (any_running) return PodPhase::Running;
  if (any_waiting) return PodPhase::Pending;
  return PodPhase::Running;
}

std::string to_string(const Diagnostic& d) {
  return d.path.empty() ? d.message : d.path + ": " + d.message;
}

int32_t JobSpec::total_replicas() const {
  int32_t sum = 0;
  for (const auto& t : tasks) sum += t.replicas;
  return sum;
}

int32_t JobSpec::effective_min_available() const {
  return min_available ? *min_available : total_replicas();
}

int32_t JobSpec::effective_max_retry() const {
  return max_retry ? *max_retry : 3;
}

std::string JobSpec::key() const {
  return job_key(namespace_, name, batch.has_value());
}

namespace {
constexpr std::string_view kBatchKeyInfix = "/jobs.batch/";
}  // namespace

std::string job_key(std::string_view ns, std::string_view name, bool batch) {
  std::string key(ns);
  key += batch ? kBatchKeyInfix : std::string_view("/");
  key += name;
  return key;
}

std::optional<std::pair<std::string, std::string>> metadata_field(std::string_view path) {
  for (std::string_view map : {"labels", "annotations"}) {
    const std::string prefix = "metadata." + std::string(map) + "['";
    if (path.size() > prefix.size() + 2 && path.substr(0, prefix.size()) == prefix &&
        path.substr(path.size() - 2) == "']")
      return std::pair{std::string(map),
                       std::string(path.substr(prefix.size(), path.size() - prefix.size() - 2))};
  }
  return std::nullopt;
}

std::string plugin_arg(const Plugin& p, const std::string& key, const std::string& fallback) {
  const std::string prefix = "--" + key + "=";
  for (const auto& a : p.args)
    if (a.rfind(prefix, 0) == 0) return a.substr(prefix.size());
  return fallback;
}

bool names_priority_class(const JobSpec& spec, const std::string& name) {
  if (spec.priority_class_name == name) return true;
  for (const auto& t : spec.tasks)
    if (t.template_.priority_class_name == name) return true;
  return false;
}

std::vector<std::string> task_priority_classes(const JobSpec& spec) {
  std::vector<std::string> out;
  for (const auto& t : spec.tasks) {
    const auto& c = t.template_.priority_class_name;
    if (!c.empty() && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

bool plugin_sets_command(const JobSpec& spec, const std::string& task,
                         const std::string& container) {
  for (const auto& p : spec.plugins)
    if (p.name == "ray" && ((task == plugin_arg(p, "head", "head") &&
                             container == plugin_arg(p, "headContainer", "head")) ||
                            (task == plugin_arg(p, "worker", "worker") &&
                             container == plugin_arg(p, "workerContainer", "worker"))))
      return true;
  return false;
}

bool field_path_known(std::string_view path) {
  for (const char* known : kFieldPaths)
    if (path == known) return true;
  return metadata_field(path).has_value();
}

bool is_batch_job_key(std::string_view key) {
  auto slash = key.find('/');
  return slash != std::string_view::npos &&
         key.substr(slash, kBatchKeyInfix.size()) == kBatchKeyInfix;
}

}  // namespace caldera
