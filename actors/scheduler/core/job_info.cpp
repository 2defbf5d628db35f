#include "actors/scheduler/core/job_info.hpp"

#include <fmt/format.h>

namespace caldera::sched {

namespace {

bool valid_status(TaskStatus s) {
  return allocated_status(s) || s == TaskStatus::Succeeded || s == TaskStatus::Pipelined ||
         s == TaskStatus::Pending;
}

// Each task's minimum is met by its pods whose status `counts`.
template <class Counts>
bool check_tasks(const JobInfo& job, Counts counts) {
  if (job.min_available < job.task_min_available_total()) return true;
  std::map<std::string, int32_t> occupied;
  for (const auto& t : job.tasks)
    if (counts(t.status)) ++occupied[t.task];
  for (const auto& [task, min] : job.task_min_available) {
    auto it = occupied.find(task);
    if ((it == occupied.end() ? 0 : it->second) < min) return false;
  }
  return true;
}

template <class Pred>
int32_t count_tasks(const JobInfo& job, Pred pred) {
  int32_t n = 0;
  for (const auto& t : job.tasks)
    if (pred(t)) ++n;
  return n;
}

}  // namespace

std::string_view to_string(PodGroupPhase p) {
  switch (p) {
    case PodGroupPhase::Pending:
      return "Pending";
    case PodGroupPhase::Inqueue:
      return "Inqueue";
    case PodGroupPhase::Running:
      return "Running";
    case PodGroupPhase::Unknown:
      return "Unknown";
  }
  return "Unknown";
}

int32_t JobInfo::task_min_available_total() const {
  int32_t sum = 0;
  for (const auto& [task, min] : task_min_available) sum += min;
  return sum;
}

int32_t JobInfo::ready_task_num() const {
  return count_tasks(*this, [](const TaskInfo& t) { return allocated_status(t.status); });
}

int32_t JobInfo::waiting_task_num() const {
  return count_tasks(*this, [](const TaskInfo& t) { return t.status == TaskStatus::Pipelined; });
}

int32_t JobInfo::valid_task_num() const {
  return count_tasks(*this, [](const TaskInfo& t) { return valid_status(t.status); });
}

int32_t JobInfo::pending_best_effort_task_num() const {
  return count_tasks(
      *this, [](const TaskInfo& t) { return t.status == TaskStatus::Pending && t.best_effort(); });
}

bool JobInfo::check_task_valid() const {
  return check_tasks(*this, valid_status);
}

bool JobInfo::check_task_ready() const {
  return check_tasks(*this, allocated_status);
}

bool JobInfo::check_task_pipelined() const {
  return check_tasks(
      *this, [](TaskStatus s) { return allocated_status(s) || s == TaskStatus::Pipelined; });
}

bool JobInfo::is_ready() const {
  return ready_task_num() + pending_best_effort_task_num() >= min_available;
}

bool JobInfo::is_pipelined() const {
  return waiting_task_num() + ready_task_num() + pending_best_effort_task_num() >= min_available;
}

bool JobInfo::is_starving() const {
  return waiting_task_num() + ready_task_num() < min_available;
}

std::optional<Invalid> job_valid(const JobInfo& job) {
  if (!job.check_task_valid())
    return Invalid{"NotEnoughPodsOfTask", "Not enough valid pods of each task for gang-scheduling"};
  if (auto valid = job.valid_task_num(); valid < job.min_available)
    return Invalid{"NotEnoughPods",
                   fmt::format("Not enough valid tasks for gang-scheduling, valid: {}, min: {}",
                               valid, job.min_available)};
  return std::nullopt;
}

bool job_ready(const JobInfo& job) {
  return job.check_task_ready() && job.is_ready();
}

bool job_pipelined(const JobInfo& job) {
  return job.check_task_pipelined() && job.is_pipelined();
}

bool job_starving(const JobInfo& job) {
  return job.is_starving();
}

JobOrderKey job_order_key(const JobInfo& job) {
  return {-job.priority, job.is_ready(), job.created_ms, job.uid};
}

bool job_before(const JobInfo& l, const JobInfo& r) {
  return job_order_key(l) < job_order_key(r);
}

bool task_before(const TaskInfo& l, const TaskInfo& r) {
  if (l.priority != r.priority) return l.priority > r.priority;
  return l.name < r.name;
}

std::vector<const TaskInfo*> preemptable(
    const std::map<std::string, const JobInfo*>& jobs_by_uid,
    const std::vector<std::pair<std::string, const TaskInfo*>>& preemptees) {
  std::vector<const TaskInfo*> victims;
  std::map<std::string, int32_t> occupied;  // ready pods each job keeps, victims taken out
  for (const auto& [job_uid, task] : preemptees) {
    auto job = jobs_by_uid.find(job_uid);
    if (job == jobs_by_uid.end()) continue;
    auto [it, fresh] = occupied.try_emplace(job_uid, 0);
    if (fresh) it->second = job->second->ready_task_num();
    if (it->second > job->second->min_available) {
      --it->second;
      victims.push_back(task);
    }
  }
  return victims;
}

}  // namespace caldera::sched
