// What calderad counts for Prometheus (prometheus-cpp): one object per process, handed to the
// actors that count; thread-safe. node/ exposes its registry on the node's metricsPort.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "messages/model/job_flow.hpp"
#include "messages/model/job_status.hpp"

namespace prometheus {
class Registry;
}

namespace caldera {

class Metrics {
 public:
  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  std::shared_ptr<prometheus::Registry> registry() const;

  // caldera_job_phase_total{namespace,phase}: jobs that entered the phase.
  void job_phase(const std::string& ns, JobPhase phase);
  // caldera_jobs_batch_finished_total{namespace,completion_mode,result,reason}: Kubernetes Jobs
  // that ended (result "succeeded" or "failed"), as Kubernetes' job_finished_total counts them;
  // they are not in caldera_job_phase_total, whose phases are Volcano's.
  void batch_job_finished(const std::string& ns, const std::string& completion_mode, bool succeeded,
                          const std::string& reason);
  // caldera_pods_started_total / caldera_pods_failed_total on this node.
  void pod_started();
  void pod_failed();
  // caldera_jobflow_succeed_phase_count / caldera_jobflow_failed_phase_count{namespace}, the
  // names Volcano's JobFlow controller uses.
  void flow_finished(const std::string& ns, FlowPhase phase);
  // caldera_jobflow_dag_step_seconds: a flow's target Completed to its successor created.
  void dag_step(std::chrono::nanoseconds d);
  // caldera_store_commit_seconds and caldera_store_commit_batch_writes, per group commit.
  void store_batch(std::chrono::nanoseconds d, size_t writes);
  // caldera_scheduler_session_seconds.
  void scheduler_session(std::chrono::nanoseconds d);
  // caldera_job_actors: jobs with an actor (live, or woken); a settled job has none.
  // caldera_jobs_passivated_total / caldera_jobs_woken_total: actors stopped when their job
  // settled, and started again for a settled job (a command, a delete, a report).
  void job_actor_started(bool woken);
  // caldera_node_pods: pods this node holds in memory (live, or ended and not yet acknowledged
  // by their job; the others are retired to its store).
  void node_pods(size_t n);
  void job_actor_stopped(bool passivated);
  // caldera_flow_actors, caldera_flows_passivated_total, caldera_flows_woken_total: the same
  // for JobFlows (a finished flow has no actor until one of its jobs changes).
  void flow_actor_started(bool woken);
  void flow_actor_stopped(bool passivated);
  // caldera_history_jobs: settled jobs the store keeps; caldera_history_deleted_total{reason}:
  // the ones history retention deleted, reason "count" (maxFinishedJobs) or "age" (maxAge).
  void history_jobs(int64_t kept);
  void history_deleted(const std::string& reason, uint64_t n);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace caldera
