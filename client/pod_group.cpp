#include "client/pod_group.hpp"

#include <numeric>

#include "messages/admission/gang_minimum.hpp"

namespace caldera {

PodGroupView pod_group_of(const Job& job) {
  const auto& spec = job.spec;
  const auto& st = job.status;
  PodGroupView pg;
  pg.name = spec.name;
  pg.namespace_ = spec.namespace_;
  pg.queue = spec.queue.empty() ? "default" : spec.queue;
  pg.priority_class = spec.priority_class_name;
  if (!spec.tasks.empty()) pg.min_resources = first_gang_minimum(spec);
  pg.created_ms = job.created_ms;
  // The job controller keeps minAvailable in the status; a summary's spec has no tasks.
  pg.min_member = st.min_available > 0 ? st.min_available : spec.effective_min_available();
  const int32_t task_total = std::accumulate(
      spec.tasks.begin(), spec.tasks.end(), 0,
      [](int32_t sum, const TaskSpec& t) { return sum + t.min_available.value_or(t.replicas); });
  for (const auto& t : spec.tasks)
    if (pg.min_member >= task_total)
      pg.min_task_member[t.name] = t.min_available.value_or(t.replicas);
  pg.running = st.running;
  pg.succeeded = st.succeeded;
  pg.failed = st.failed;
  const bool unschedulable = st.state.reason == "Unschedulable";
  if (is_finished(st.state.phase))
    pg.phase = "Completed";
  else if (st.running + st.succeeded >= pg.min_member)
    pg.phase = "Running";
  else if (unschedulable && st.running > 0)
    pg.phase = "Unknown";
  else if (st.pod_group_phase == "Inqueue" || st.state.phase != JobPhase::Pending)
    pg.phase = "Inqueue";  // admitted: its gang is placed, or waits for room it was promised
  else
    pg.phase = "Pending";  // the scheduler has not admitted it yet, or has refused to
  if (unschedulable) {
    pg.condition = "Unschedulable";
    pg.message = st.state.message;
  } else if (st.running + st.succeeded >= pg.min_member) {
    pg.condition = "Scheduled";
    pg.message = "tasks in gang are ready to be scheduled";
  }
  return pg;
}

nlohmann::json pod_group_to_json(const PodGroupView& pg) {
  nlohmann::json spec{{"minMember", pg.min_member}, {"queue", pg.queue}};
  if (!pg.min_task_member.empty()) spec["minTaskMember"] = pg.min_task_member;
  if (!pg.priority_class.empty()) spec["priorityClassName"] = pg.priority_class;
  if (pg.min_resources) {
    nlohmann::json min = nlohmann::json::object();
    for (const auto& [name, amount] : pg.min_resources->values) min[name] = format_quantity(amount);
    spec["minResources"] = std::move(min);
  }
  nlohmann::json status{{"phase", pg.phase},
                        {"running", pg.running},
                        {"succeeded", pg.succeeded},
                        {"failed", pg.failed}};
  if (!pg.condition.empty())
    status["conditions"] = nlohmann::json::array(
        {{{"type", pg.condition}, {"status", "True"}, {"message", pg.message}}});
  nlohmann::json metadata{{"name", pg.name}, {"namespace", pg.namespace_}};
  return {{"apiVersion", "scheduling.volcano.sh/v1beta1"},
          {"kind", "PodGroup"},
          {"metadata", std::move(metadata)},
          {"spec", std::move(spec)},
          {"status", std::move(status)}};
}

}  // namespace caldera
