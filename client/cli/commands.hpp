// The caldera CLI's commands; each returns the process exit code. main.cpp maps arguments to them.
#pragma once

#include <cstdint>
#include <string>

#include "client/cli/common.hpp"

namespace caldera::cli {

// ---- read.cpp: get, describe, version ----

// `get jobs|pods|jobtemplates|jobflows [NAME]` and `get nodes`; lists are read page by page.
int get_jobs(const Globals& g, const std::string& name, bool all_ns, JobKind kind);
// A job's pod group (Volcano's PodGroup, named after its job), read off the job.
int get_pod_groups(const Globals& g, const std::string& name, bool all_ns);
int get_pods(const Globals& g, const std::string& name, const std::string& job, bool all_ns);
int get_templates(const Globals& g, const std::string& name, bool all_ns);
int get_flows(const Globals& g, const std::string& name, bool all_ns);
int get_nodes(const Globals& g);
// Cluster-scoped: every queue (with the scheduler's view of it) or class, or the named one.
int get_queues(const Globals& g, const std::string& name);
int get_priority_classes(const Globals& g, const std::string& name);
// The scheduler conf the coordinator runs, as Volcano's volcano-scheduler.conf.
int get_scheduler_conf(const Globals& g);
int describe_job(const Globals& g, const std::string& name, JobKind kind);
int describe_flow(const Globals& g, const std::string& name);
int describe_pod(const Globals& g, const std::string& name);
// The client's version and, unless client_only, the server's (ping's Pong.version).
int version(const Globals& g, bool client_only);

// ---- write.cpp: submit, delete, job commands ----

int submit(const Globals& g, const std::string& file);
// kubectl apply -f: creates what does not exist, updates what does (caldera's rules of what may
// change); one line per document: created, configured or unchanged.
int apply(const Globals& g, const std::string& file);
// kubectl delete -f: deletes every object the file names.
int delete_file(const Globals& g, const std::string& file);
// vcctl queue operate -a open|close: `action` is "open" or "close".
int operate_queue(const Globals& g, const std::string& name, const std::string& action);
// Prints what kubectl prints: job.batch.volcano.sh "NAME" deleted.
enum class Deletable { Job, BatchJob, JobTemplate, JobFlow, Queue, PriorityClass };
int delete_object(const Globals& g, Deletable kind, const std::string& name);
// kubectl patch jobs.batch NAME --type merge -p JSON: what Kubernetes lets change in a Job.
int patch_batch_job(const Globals& g, const std::string& name, const std::string& type,
                    const std::string& patch);
// `action`: AbortJob, ResumeJob, RestartJob, TerminateJob or CompleteJob.
int command(const Globals& g, const std::string& action, const std::string& name);
// `admin backup DIR`: a consistent copy of the coordinator's store, taken while it runs, into
// DIR (new) on the coordinator's machine.
int backup(const Globals& g, const std::string& dir);

// ---- follow.cpp: wait, logs ----

// kubectl wait: 0 once the job is in the phase; non-zero on timeout (never before it) or when
// the job ends in another phase it cannot leave.
int wait_flow(const Globals& g, const std::string& name, const std::string& condition,
              const std::string& timeout);
int wait_job(const Globals& g, const std::string& name, const std::string& condition,
             const std::string& timeout_text);
// kubectl wait jobs.batch --for=condition=TYPE[=STATUS]: 0 once the Kubernetes Job has the
// condition (Complete, Failed, Suspended, ...); non-zero on timeout, or once the job has ended
// without it.
int wait_batch_job(const Globals& g, const std::string& name, const std::string& condition,
                   const std::string& timeout_text);

struct LogOptions {
  std::string container;
  int64_t tail = -1;    // the last N lines only; -1: everything
  bool follow = false;  // keep reading until the pod's containers have ended
};
int logs(const Globals& g, const std::string& pod, const LogOptions& options);

}  // namespace caldera::cli
