# Values kept in RocksDB. Adding fields is safe; never renumber, so older snapshots stay readable.
@0x8a0ce9e321db0a1a;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("caldera::store");

using Api = import "api.capnp";
using Cluster = import "cluster.capnp";

# Column family "jobs", key "namespace/name": a job's spec, status and the controller's
# bookkeeping. Its pods are rows of their own (PodRecord), so that a pod event writes one pod.
struct JobRecord {
  job @0 :Api.Job;
  pods @1 :List(Api.Pod);      # only in records written before pods had rows: read, never written
  commandIds @2 :List(Text);   # recent client command ids, so a retried command acts once
  obsoleteSeq @3 :UInt64;      # never written: nothing needs a record's version
  delayedActions @4 :List(DelayedAction);
  taskRetries @5 :List(Api.KeyValue);   # task name -> pod restarts, against the task's maxRetry
  retriesExhausted @6 :Bool;   # a restart found no retry left: Restarting ends Failed
  slowStart @7 :SlowStart;
  batch @8 :BatchJobBookkeeping;  # a Kubernetes Job's controller (JobSpec.batch set)
}

# What a Kubernetes Job's controller keeps besides the status (whose completedIndexes and
# failedIndexes it reads back).
struct BatchJobBookkeeping {
  backoff @0 :List(PodBackoff);        # the job's (index -1), or each index's
  ignoredFailures @1 :List(IndexCount);
  createAtMs @2 :Int64;                # pods wanted wait for the back-off until then (0: none)
  countedTerminating @3 :List(Text);   # pods counted failed while being deleted
}

struct PodBackoff {
  index @0 :Int32;
  failuresSinceSuccess @1 :Int32;
  lastFailureMs @2 :Int64;
}

struct IndexCount {
  index @0 :Int32;
  count @1 :Int32;
}

# Column family "specs", key "namespace/name": a job's spec, written once with its first record
# (the job row is written on every change and does not repeat it). A job row that holds a spec
# was written before specs had rows of their own.
struct JobSpecRecord {
  jobUid @0 :Text;             # the job it belongs to
  spec @1 :Api.JobSpec;
  sshKeys @2 :SshKeyPair;      # the ssh plugin's key pair, made once with the job (unset: none)
}

# The ssh plugin's key pair: what every pod of the job finds in its .ssh directory.
struct SshKeyPair {
  privateKey @0 :Text;         # PEM
  publicKey @1 :Text;          # OpenSSH's authorized_keys line
}

# Column family "pods", key "namespace/job/pod": one pod of a job, as its job controller keeps it.
struct PodRecord {
  pod @0 :Api.Pod;
  jobUid @1 :Text;             # the job that owns it: a row of an earlier job of the name is stale
  inFlight @2 :Bool;           # sent to its node in a slow-start batch, not created there yet
}

# The job's pods being launched on their nodes batch by batch (1, 2, 4, ...).
struct SlowStart {
  nextBatch @0 :Int32 = 1;
  inFlight @1 :List(Text);     # written before pods had rows; now each pod row says it (inFlight)
  roundCreated @2 :Int32;
  roundBatches @3 :Int32;
  resumeAtMs @4 :Int64;        # a round stopped by a failed creation starts again then (0: none)
  stoppedRounds @5 :Int32;     # in a row: the backoff doubles with each
  batchSentMs @6 :Int64;       # the pods in flight are sent again if not created in a while
}

# A policy action waiting for its timeout. Its due time is absolute, so a restarted node fires
# it when it was due, neither forgotten nor started from zero.
struct DelayedAction {
  podName @0 :Text;
  podUid @1 :Text;
  task @2 :Text;
  partition @3 :Int32 = -1;
  event @4 :Text;              # Volcano's spelling
  action @5 :Text;
  dueMs @6 :Int64;             # milliseconds since the Unix epoch
}

# Column family "templates", key "namespace/name": a JobTemplate as accepted.
struct JobTemplateRecord {
  template @0 :Api.JobTemplate;
}

# Column family "flows", key "namespace/name": a JobFlow with its status.
struct JobFlowRecord {
  flow @0 :Api.JobFlow;
  obsoleteSeq @1 :UInt64;      # never read: written as 1 before this field was retired
}

# Column family "node_pods", key pod uid: what a node runs, kept by the node itself.
struct NodePod {
  launch @0 :Cluster.PodLaunch;   # only in records written before launchBytes: read, never written
  status @1 :Api.Pod;
  shimPid @2 :Int32;           # the per-pod supervisor process, 0 for simulated pods
  shimStartTicks @3 :UInt64;   # /proc/<pid>/stat start time, to tell a reused pid apart
  startedMs @4 :Int64;
  # Set by an evicting kill (preemption, reclaim): the pod ends Failed with this reason and
  # message, also when the node restarts before it has ended.
  evictReason @5 :Text;
  evictMessage @6 :Text;
  evictGraceMs @7 :Int64;      # the evicting kill's grace: a restart kills it again with it
  # The PodLaunch as the coordinator sent it (a flat message): copied, not encoded again, with
  # every status the pod writes.
  launchBytes @8 :Data;
}

# Column family "meta" holds plain values, no structs: the cluster's id and generation
# (actors/cluster/core/identity.hpp), the counter of settled jobs (storage/store.hpp,
# kFinishedJobsCounter) and the markers of one-time indexing ("live_index", "history_index").
