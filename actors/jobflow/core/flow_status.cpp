#include "actors/jobflow/core/flow_status.hpp"

#include <algorithm>

namespace caldera {

FlowJobStatus& job_status_line(JobFlowStatus& status, const std::string& job_name,
                               const std::string& uid, int64_t created_ms) {
  auto it = std::find_if(status.job_status_list.begin(), status.job_status_list.end(),
                         [&](const FlowJobStatus& s) { return s.name == job_name; });
  if (it == status.job_status_list.end()) {
    status.job_status_list.push_back({job_name, uid, "", created_ms, 0, 0, {}});
    return status.job_status_list.back();
  }
  if (it->uid != uid) {
    // The job was created again: its earlier histories stay, closed, before the new ones.
    if (!it->running_histories.empty() && it->running_histories.back().end_ms == 0)
      it->running_histories.back().end_ms = created_ms;
    it->uid = uid;
    it->state.clear();
    it->start_ms = created_ms;
    it->end_ms = 0;
    ++it->restart_count;
  }
  return *it;
}

bool observe_phase(FlowJobStatus& line, JobPhase phase, int64_t now_ms) {
  const std::string name(to_string(phase));
  if (line.state == name) return false;
  if (!line.running_histories.empty() && line.running_histories.back().end_ms == 0)
    line.running_histories.back().end_ms = now_ms;
  line.running_histories.push_back({name, now_ms, 0});
  line.state = name;
  line.end_ms = is_finished(phase) ? now_ms : 0;
  return true;
}

FlowJobCondition condition_of(const JobStatus& job, int64_t created_ms) {
  return {std::string(to_string(job.state.phase)), created_ms, job.running_duration_ms,
          job.task_status_count};
}

}  // namespace caldera
