// A JobFlow's DAG (seed 002, sections 4 and 5): which flows' jobs are due to be created, how each
// job counts in the flow's status, and the flow's phase. Pure: the flow actor feeds it the phases
// of the jobs it created and carries out what it decides.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "messages/model/job_flow.hpp"
#include "messages/model/job_status.hpp"

namespace caldera {

// The phase of the job each flow entry created, by the entry's name; an entry that is absent has
// created no job yet.
// Hashed: every status message of a large flow looks up each entry (names share long prefixes,
// so an ordered map's compares dominated a 1,000-job fan-in).
using FlowJobs = std::unordered_map<std::string, JobPhase>;
// The task status counts of the job each entry created, by entry name: what probes look at.
using FlowTasks = std::map<std::string, std::map<std::string, TaskStatusCount>>;
// How many times `retry` has created each entry's job again, by entry name.
using FlowRestarts = std::map<std::string, int32_t>;
// The targets whose endpoint probes (httpGet, tcpSocket) passed, by the entry waiting on them.
using FlowAnswers = std::map<std::string, std::set<std::string>>;

// An endpoint probe to make: `entry` waits on `target`, whose job runs and has not reached what
// the entry waits for otherwise.
struct ProbeWanted {
  std::string entry;
  std::string target;
  bool operator==(const ProbeWanted&) const = default;
};

// The flow entries whose job does not exist and whose dependsOn targets' jobs have all
// Completed (seed 002's judge), in the spec's order. An entry downstream of a job that failed or
// was terminated is never due: its target never completes. With a probe, a target also counts
// once a pod of a probed task is in the probe's phase (`tasks`; Running counts pods that ran and
// succeeded since), or an endpoint probe of the entry's passed on it (`answered`).
std::vector<std::string> due_flows(const JobFlowSpec& spec, const FlowJobs& jobs,
                                   const FlowTasks& tasks = {}, const FlowAnswers& answered = {});

// The endpoint probes the flow waits on now: for each entry not created yet whose dependsOn has
// httpGet or tcpSocket probes, each target whose job is Running and not yet reached.
std::vector<ProbeWanted> endpoint_probes_wanted(const JobFlowSpec& spec, const FlowJobs& jobs,
                                                const FlowTasks& tasks,
                                                const FlowAnswers& answered);

// The entries whose job Failed and that `retry` still allows to create again.
std::vector<std::string> retry_due(const JobFlowSpec& spec, const FlowJobs& jobs,
                                   const FlowRestarts& restarts);

// The jobs as the flow judges them: a Failed job about to be created again is left out, as if
// not created yet, so that it neither fails the flow nor counts in its lists.
FlowJobs judged_jobs(const JobFlowSpec& spec, const FlowJobs& jobs, const FlowRestarts& restarts);

// The entry whose job failed the flow (the first in the spec's order), if any.
std::optional<std::string> failed_entry(const JobFlowSpec& spec, const FlowJobs& jobs);

// The status lists (seed 002's getAllJobStatus): each created job's name under its phase;
// phases other than Pending, Running, Completed, Failed and Terminated under unknownJobs, as
// Volcano lists them. The phase field is left as it is.
void fill_job_lists(const JobFlowSpec& spec, const FlowJobs& jobs, JobFlowStatus& status);

// The flow's phase once its jobs are as `jobs` says (seed 002, 4.3), from `current`:
//   Pending -> Failed      a job Failed or was Terminated
//   Pending -> Running     a job runs or has completed, and none failed
//   Running -> Succeed     every entry's job Completed
//   Running -> Failed      a job Failed or was Terminated (Volcano leaves a flow whose job was
//                          terminated Running for good: volcano#4134, #4442)
// Succeed, Failed and Terminating are final. Several arrows may follow at once (a flow whose
// jobs all completed between two looks goes Pending -> Running -> Succeed).
FlowPhase next_phase(FlowPhase current, const JobFlowSpec& spec, const FlowJobs& jobs);

}  // namespace caldera
