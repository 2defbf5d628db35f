#include "actors/job/core/pod_group.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "actors/job/core/pod_template.hpp"
#include "actors/scheduler/core/gang_fit.hpp"
#include "messages/model/partition_order.hpp"

namespace caldera {

PodGroupInfo pod_group_info(const JobModel& m) {
  const auto& spec = m.job.spec;
  return {spec.queue.empty() ? std::string(kDefaultQueue) : spec.queue, spec.priority_class_name,
          spec.effective_min_available()};
}

GangRequest pod_group_request(const JobModel& m) {
  const auto& spec = m.job.spec;
  GangRequest r;
  r.job_key = m.key();
  r.created_ms = m.job.created_ms;
  r.group = pod_group_info(m);
  int32_t bound = 0, waiting = 0;
  std::map<std::string, int32_t> bound_of, waiting_of;
  std::map<std::string, ResourceList> request_of;
  std::map<std::string, const TaskSpec*> task_of;
  for (const auto& t : spec.tasks) {
    request_of[t.name] = pod_resource_request(t);
    task_of[t.name] = &t;
  }
  for (const auto& [key, c] : m.pods.census()) {
    bound += c.bound;
    bound_of[key.first] += c.bound;
    if (!request_of.count(key.first)) continue;
    waiting += c.waiting;
    waiting_of[key.first] += c.waiting;
  }
  r.min_count = std::clamp(spec.effective_min_available() - bound, 0, waiting);
  r.placed = bound;

  int32_t task_min_total = 0;
  for (const auto& t : spec.tasks) task_min_total += t.min_available.value_or(t.replicas);
  if (spec.effective_min_available() >= task_min_total) {
    for (const auto& t : spec.tasks) {
      auto need = std::clamp(t.min_available.value_or(t.replicas) - bound_of[t.name], 0,
                             waiting_of[t.name]);
      if (need > 0) r.task_min[t.name] = need;
    }
  }
  // A task's minPartitions are whole partitions, whatever the job's minAvailable says.
  bool partitioned = false;
  for (const auto& t : spec.tasks) {
    if (!t.partition_policy || t.partition_policy->partition_size < 1) continue;
    partitioned = true;
    const int32_t pods = t.partition_policy->min_partitions * t.partition_policy->partition_size;
    const int32_t need = std::clamp(pods - bound_of[t.name], 0, waiting_of[t.name]);
    if (need > 0) r.partition_min[t.name] = need;
  }

  // The asks: every pod the gang needs at once, then more up to the cap; the rest are asked for
  // once these are bound.
  int32_t quota_total = 0;
  for (const auto& [task, need] : r.task_min) quota_total += need;
  const int32_t cap = std::max(kMaxPodAsks, r.min_count);
  int32_t extras = std::max(0, cap - quota_total);
  // Without task minimums (or with one task), the first `cap` waiting pods are the asks: the
  // rest of a long queue is not looked at.
  // A partition is asked whole: a job with partitions asks every waiting pod of their tasks.
  const bool any_first = (r.task_min.empty() || spec.tasks.size() == 1) && !partitioned;
  const size_t look_at = any_first ? static_cast<size_t>(cap) : SIZE_MAX;
  // A job's pods come task by task: the task looked up last is most often the next one's too
  // (a big job asks a thousand pods at a time, in one message handler).
  struct TaskAsks {
    const ResourceList* requests = nullptr;
    const TaskSpec* task = nullptr;
    int32_t quota = 0;
    int32_t taken = 0;
  };
  std::map<std::string, TaskAsks, std::less<>> asks_of;
  for (const auto& [name, req] : request_of) {
    auto quota = r.task_min.find(name);
    asks_of[name] = {&req, task_of[name], quota == r.task_min.end() ? 0 : quota->second, 0};
  }
  const auto pods = m.pods.waiting(look_at);
  r.pods.reserve(std::min<size_t>(pods.size(), static_cast<size_t>(cap)));
  const std::string* last_task = nullptr;
  TaskAsks* asks = nullptr;
  for (const Pod* pod : pods) {
    const Pod& p = *pod;
    if (!last_task || *last_task != p.task_name) {
      auto it = asks_of.find(p.task_name);
      asks = it == asks_of.end() ? nullptr : &it->second;
      last_task = &p.task_name;
    }
    if (!asks) continue;
    if (p.partition >= 0) {
      // whole partitions: asked beyond the cap
    } else if (asks->taken < asks->quota) {
      ++asks->taken;
    } else if (extras > 0) {
      --extras;
    } else {
      continue;
    }
    const auto& tpl = asks->task->template_;
    r.pods.push_back({p.uid, *asks->requests, p.task_name, tpl.node_selector,
                      tpl.priority_class_name, p.partition, tpl.tolerations});
  }
  // Pods come in name order (w-10 before w-2): a task's partitions are asked one after another,
  // in the places its pods hold, so that a cut of the asks takes at most one partition apart.
  if (partitioned)
    order_partitions(
        r.pods, [](const PodAsk& a) -> const std::string& { return a.task; },
        [](const PodAsk& a) { return a.partition; });
  return r;
}

std::optional<std::string> cluster_fit_warning(const JobSpec& spec, const ResourceList& cluster) {
  const auto need = first_gang_minimum(spec);
  std::string needs, has;
  for (const auto& [name, amount] : need.values) {
    if (amount <= cluster.get(name)) continue;
    const char* sep = needs.empty() ? "" : " and ";
    needs += fmt::format("{}{} {}", sep, format_quantity(amount), name);
    has += fmt::format("{}{} {}", sep, format_quantity(cluster.get(name)), name);
  }
  if (needs.empty()) return std::nullopt;
  return fmt::format("job {} needs {} for its minAvailable {} pods; the cluster has {} in all",
                     spec.name, needs, spec.effective_min_available(), has);
}

}  // namespace caldera
