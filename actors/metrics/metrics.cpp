#include "actors/metrics/metrics.hpp"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <map>
#include <mutex>
#include <utility>

namespace caldera {
namespace {

double seconds(std::chrono::nanoseconds d) {
  return std::chrono::duration<double>(d).count();
}

// From 10 us to about 10 s, doubling: DAG steps and commits take well under a millisecond when
// all is well, and the tail is what an operator looks for.
prometheus::Histogram::BucketBoundaries latency_buckets() {
  prometheus::Histogram::BucketBoundaries b;
  for (double s = 10e-6; s < 11; s *= 2) b.push_back(s);
  return b;
}

}  // namespace

struct Metrics::Impl {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Counter>& job_phase = prometheus::BuildCounter()
                                                           .Name("caldera_job_phase_total")
                                                           .Help("Jobs that entered each phase")
                                                           .Register(*registry);
  prometheus::Family<prometheus::Counter>& batch_finished =
      prometheus::BuildCounter()
          .Name("caldera_jobs_batch_finished_total")
          .Help("Kubernetes Jobs (batch/v1) that ended, by result and reason")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& pods_started = prometheus::BuildCounter()
                                                              .Name("caldera_pods_started_total")
                                                              .Help("Pods started on this node")
                                                              .Register(*registry);
  prometheus::Family<prometheus::Counter>& pods_failed = prometheus::BuildCounter()
                                                             .Name("caldera_pods_failed_total")
                                                             .Help("Pods that failed on this node")
                                                             .Register(*registry);
  prometheus::Family<prometheus::Counter>& flow_succeed =
      prometheus::BuildCounter()
          .Name("caldera_jobflow_succeed_phase_count")
          .Help("JobFlows that reached Succeed")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& flow_failed =
      prometheus::BuildCounter()
          .Name("caldera_jobflow_failed_phase_count")
          .Help("JobFlows that reached Failed")
          .Register(*registry);
  prometheus::Family<prometheus::Histogram>& dag_step =
      prometheus::BuildHistogram()
          .Name("caldera_jobflow_dag_step_seconds")
          .Help("From a JobFlow target's job Completed to its successor's job created")
          .Register(*registry);
  prometheus::Family<prometheus::Histogram>& commit =
      prometheus::BuildHistogram()
          .Name("caldera_store_commit_seconds")
          .Help("Time to write and sync one group commit")
          .Register(*registry);
  prometheus::Family<prometheus::Histogram>& batch = prometheus::BuildHistogram()
                                                         .Name("caldera_store_commit_batch_writes")
                                                         .Help("Writes in one group commit")
                                                         .Register(*registry);
  prometheus::Family<prometheus::Histogram>& session =
      prometheus::BuildHistogram()
          .Name("caldera_scheduler_session_seconds")
          .Help("Time of one scheduling session")
          .Register(*registry);
  prometheus::Gauge& job_actors = prometheus::BuildGauge()
                                      .Name("caldera_job_actors")
                                      .Help("Jobs with an actor: live ones, and woken settled ones")
                                      .Register(*registry)
                                      .Add({});
  prometheus::Gauge& node_pods = prometheus::BuildGauge()
                                     .Name("caldera_node_pods")
                                     .Help(
                                         "Pods this node holds in memory (live, or ended and not "
                                         "yet acknowledged by their job)")
                                     .Register(*registry)
                                     .Add({});
  prometheus::Counter& passivated =
      prometheus::BuildCounter()
          .Name("caldera_jobs_passivated_total")
          .Help("Job actors stopped because their job settled (it is read from the store)")
          .Register(*registry)
          .Add({});
  prometheus::Counter& woken = prometheus::BuildCounter()
                                   .Name("caldera_jobs_woken_total")
                                   .Help("Settled jobs whose actor was started again")
                                   .Register(*registry)
                                   .Add({});
  prometheus::Gauge& flow_actors = prometheus::BuildGauge()
                                       .Name("caldera_flow_actors")
                                       .Help(
                                           "JobFlows with an actor: running ones, and woken "
                                           "finished ones")
                                       .Register(*registry)
                                       .Add({});
  prometheus::Counter& flows_passivated =
      prometheus::BuildCounter()
          .Name("caldera_flows_passivated_total")
          .Help("Flow actors stopped because their flow finished (it is read from the store)")
          .Register(*registry)
          .Add({});
  prometheus::Counter& flows_woken = prometheus::BuildCounter()
                                         .Name("caldera_flows_woken_total")
                                         .Help("Finished flows whose actor was started again")
                                         .Register(*registry)
                                         .Add({});
  prometheus::Gauge& history_jobs = prometheus::BuildGauge()
                                        .Name("caldera_history_jobs")
                                        .Help("Settled jobs the store keeps (history)")
                                        .Register(*registry)
                                        .Add({});
  prometheus::Family<prometheus::Counter>& history_deleted =
      prometheus::BuildCounter()
          .Name("caldera_history_deleted_total")
          .Help("Settled jobs deleted by history retention, by reason (count or age)")
          .Register(*registry);
  prometheus::Counter& deleted_by_count = history_deleted.Add({{"reason", "count"}});
  prometheus::Counter& deleted_by_age = history_deleted.Add({{"reason", "age"}});
  prometheus::Counter& started = pods_started.Add({});
  prometheus::Counter& failed = pods_failed.Add({});
  prometheus::Histogram& dag = dag_step.Add({}, latency_buckets());
  prometheus::Histogram& commit_time = commit.Add({}, latency_buckets());
  prometheus::Histogram& batch_size =
      batch.Add({}, prometheus::Histogram::BucketBoundaries{1, 2, 4, 8, 16, 32, 64, 128, 256, 512,
                                                            1024, 2048, 4096});
  prometheus::Histogram& session_time = session.Add({}, latency_buckets());
  // Each job counts several phases: its (namespace, phase) counter is found once, not built
  // from labels every time (Family::Add hashes them under its own lock).
  std::mutex phase_mu;
  std::map<std::pair<std::string, JobPhase>, prometheus::Counter*> phase_counters;
};

Metrics::Metrics() : impl_(std::make_unique<Impl>()) {}
Metrics::~Metrics() = default;

std::shared_ptr<prometheus::Registry> Metrics::registry() const {
  return impl_->registry;
}

void Metrics::job_phase(const std::string& ns, JobPhase phase) {
  prometheus::Counter* counter = nullptr;
  {
    std::lock_guard lock(impl_->phase_mu);
    auto& c = impl_->phase_counters[{ns, phase}];
    if (!c)
      c = &impl_->job_phase.Add({{"namespace", ns}, {"phase", std::string(to_string(phase))}});
    counter = c;
  }
  counter->Increment();
}

void Metrics::batch_job_finished(const std::string& ns, const std::string& completion_mode,
                                 bool succeeded, const std::string& reason) {
  // Few series (a namespace's modes, results and reasons): prometheus-cpp finds the one there.
  impl_->batch_finished
      .Add({{"namespace", ns},
            {"completion_mode", completion_mode.empty() ? "NonIndexed" : completion_mode},
            {"result", succeeded ? "succeeded" : "failed"},
            {"reason", reason}})
      .Increment();
}

void Metrics::pod_started() {
  impl_->started.Increment();
}
void Metrics::pod_failed() {
  impl_->failed.Increment();
}

void Metrics::flow_finished(const std::string& ns, FlowPhase phase) {
  if (phase == FlowPhase::Succeed) impl_->flow_succeed.Add({{"namespace", ns}}).Increment();
  if (phase == FlowPhase::Failed) impl_->flow_failed.Add({{"namespace", ns}}).Increment();
}

void Metrics::dag_step(std::chrono::nanoseconds d) {
  impl_->dag.Observe(seconds(d));
}

void Metrics::store_batch(std::chrono::nanoseconds d, size_t writes) {
  impl_->commit_time.Observe(seconds(d));
  impl_->batch_size.Observe(static_cast<double>(writes));
}

void Metrics::scheduler_session(std::chrono::nanoseconds d) {
  impl_->session_time.Observe(seconds(d));
}

void Metrics::job_actor_started(bool woken) {
  impl_->job_actors.Increment();
  if (woken) impl_->woken.Increment();
}

void Metrics::node_pods(size_t n) {
  impl_->node_pods.Set(static_cast<double>(n));
}

void Metrics::job_actor_stopped(bool passivated) {
  impl_->job_actors.Decrement();
  if (passivated) impl_->passivated.Increment();
}

void Metrics::flow_actor_started(bool woken) {
  impl_->flow_actors.Increment();
  if (woken) impl_->flows_woken.Increment();
}

void Metrics::flow_actor_stopped(bool passivated) {
  impl_->flow_actors.Decrement();
  if (passivated) impl_->flows_passivated.Increment();
}

void Metrics::history_jobs(int64_t kept) {
  impl_->history_jobs.Set(static_cast<double>(kept));
}

void Metrics::history_deleted(const std::string& reason, uint64_t n) {
  (reason == "age" ? impl_->deleted_by_age : impl_->deleted_by_count)
      .Increment(static_cast<double>(n));
}

}  // namespace caldera
