# caldera's public client protocol: one Request per frame, answered by one Response with the same id.
# Framing is Cap'n Proto's standard stream framing (segment table), so `capnp encode` can drive it.
# Enumerations that users write in YAML (phases, events, actions) travel as Volcano's own strings.
@0xe56e097d7cb29439;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("caldera::api");

struct KeyValue {
  key @0 :Text;
  value @1 :Text;
}

# ---- Job specification (Volcano batch.volcano.sh/v1alpha1 Job) ----

struct EnvVar {
  name @0 :Text;
  value @1 :Text;
  fieldPath @2 :Text;            # valueFrom.fieldRef.fieldPath: the pod's field, as it starts
}

struct Container {
  name @0 :Text;
  image @1 :Text;
  command @2 :List(Text);
  args @3 :List(Text);
  env @4 :List(EnvVar);
  workingDir @5 :Text;
  requests @6 :List(KeyValue);   # quantities as Kubernetes writes them: "500m", "2", "1Gi"
  limits @7 :List(KeyValue);
}

struct PodTemplate {
  labels @0 :List(KeyValue);
  annotations @1 :List(KeyValue);
  containers @2 :List(Container);
  restartPolicy @3 :Text;
  nodeSelector @4 :List(KeyValue);  # labels the pod's node must have (the cluster config's)
  terminationGracePeriodSeconds @5 :Int64 = -1;  # -1: not set
  priorityClassName @6 :Text;    # a Volcano task's pods' class: its pods' order within the gang
  tolerations @7 :List(Toleration);
}

struct Toleration {
  key @0 :Text;
  operator @1 :Text;             # Equal or Exists
  value @2 :Text;
  effect @3 :Text;               # "": every effect
  tolerationSeconds @4 :Int64 = -1;  # -1: not set
}

struct LifecyclePolicy {
  events @0 :List(Text);         # "PodFailed", "PodEvicted", "*", ...
  action @1 :Text;               # "RestartJob", "AbortJob", ...
  hasExitCode @2 :Bool;
  exitCode @3 :Int32;
  timeoutMs @4 :Int64;           # 0: no timeout
}

struct DependsOn {
  names @0 :List(Text);
  iteration @1 :Text;            # "any" | "all"
  condition @2 :Text;            # "Running" (default) | "Succeeded"
}

struct PartitionPolicy {
  partitionSize @0 :Int32;
  minPartitions @1 :Int32;
}

struct TaskSpec {
  name @0 :Text;
  replicas @1 :Int32;
  minAvailable @2 :Int32 = -1;   # -1: not set
  maxRetry @3 :Int32 = -1;       # -1: not set
  policies @4 :List(LifecyclePolicy);
  dependsOn @5 :DependsOn;       # absent: none
  partitionPolicy @6 :PartitionPolicy;  # absent: none
  template @7 :PodTemplate;
}

struct Plugin {
  name @0 :Text;
  args @1 :List(Text);
}

struct JobSpec {
  name @0 :Text;
  namespace @1 :Text;
  labels @2 :List(KeyValue);
  annotations @3 :List(KeyValue);
  minAvailable @4 :Int32 = -1;   # -1: not set (defaults to the sum of replicas)
  minSuccess @5 :Int32 = -1;     # -1: not set
  maxRetry @6 :Int32 = -1;       # -1: not set (defaults to 3)
  queue @7 :Text;
  priorityClassName @8 :Text;
  schedulerName @9 :Text;
  policies @10 :List(LifecyclePolicy);
  plugins @11 :List(Plugin);
  ttlSecondsAfterFinished @12 :Int64 = -1;
  activeDeadlineSeconds @13 :Int64 = -1;
  tasks @14 :List(TaskSpec);
  # Set: a Kubernetes Job (batch/v1), with one task (named "") holding its pod template, run by
  # Kubernetes' Job controller; its fields that a Volcano Job has no place for are here.
  batch @15 :BatchJobFields;
  generation @16 :Int64;         # metadata.generation: one more at each applied change (0: 1)
}

# ---- Kubernetes Job (batch/v1): the fields a Volcano Job has no place for ----

struct ExitCodeRequirement {
  containerName @0 :Text;        # empty: any container
  operator @1 :Text;             # "In" | "NotIn"
  values @2 :List(Int32);
}

struct PodConditionPattern {
  type @0 :Text;                 # "DisruptionTarget"
  status @1 :Text;
}

struct PodFailurePolicyRule {
  action @0 :Text;               # "FailJob" | "FailIndex" | "Ignore" | "Count"
  onExitCodes @1 :ExitCodeRequirement;  # absent: none
  onPodConditions @2 :List(PodConditionPattern);
}

struct SuccessPolicyRule {
  succeededIndexes @0 :Text;     # interval form "0-3,5"; absent: none
  hasSucceededIndexes @1 :Bool;
  succeededCount @2 :Int32 = -1; # -1: not set
}

struct BatchJobFields {
  parallelism @0 :Int32 = -1;    # -1: not set (1)
  completions @1 :Int32 = -1;    # -1: not set (a work queue)
  completionMode @2 :Text;       # "" | "NonIndexed" | "Indexed"
  backoffLimit @3 :Int32 = -1;   # -1: not set (6)
  backoffLimitPerIndex @4 :Int32 = -1;
  maxFailedIndexes @5 :Int32 = -1;
  suspend @6 :Bool;
  hasPodFailurePolicy @7 :Bool;
  podFailurePolicy @8 :List(PodFailurePolicyRule);
  hasSuccessPolicy @9 :Bool;
  successPolicy @10 :List(SuccessPolicyRule);
  podReplacementPolicy @11 :Text;
  manualSelector @12 :Bool;
  hasSelector @13 :Bool;
  selector @14 :List(KeyValue);  # matchLabels
}

struct BatchJobCondition {
  type @0 :Text;                 # Suspended, FailureTarget, SuccessCriteriaMet, Failed, Complete
  status @1 :Text;               # "True" | "False"
  reason @2 :Text;
  message @3 :Text;
  lastProbeMs @4 :Int64;
  lastTransitionMs @5 :Int64;
}

struct BatchJobStatus {
  active @0 :Int32;
  ready @1 :Int32;
  succeeded @2 :Int32;
  failed @3 :Int32;
  terminating @4 :Int32;
  startMs @5 :Int64;             # 0: not started
  completionMs @6 :Int64;        # 0: not Complete
  completedIndexes @7 :Text;
  failedIndexes @8 :Text;
  conditions @9 :List(BatchJobCondition);
}

# ---- Job and pod status ----

struct JobState {
  phase @0 :Text;                # "Pending", "Running", ... (Volcano's JobPhase)
  reason @1 :Text;
  message @2 :Text;
  lastTransitionMs @3 :Int64;    # milliseconds since the Unix epoch
}

struct JobCondition {
  status @0 :Text;               # the phase entered
  lastTransitionMs @1 :Int64;
}

struct TaskStatusCount {
  name @0 :Text;
  pending @1 :Int32;
  running @2 :Int32;
  succeeded @3 :Int32;
  failed @4 :Int32;
  unknown @5 :Int32;
}

struct JobStatus {
  state @0 :JobState;
  minAvailable @1 :Int32;
  pending @2 :Int32;
  running @3 :Int32;
  succeeded @4 :Int32;
  failed @5 :Int32;
  terminating @6 :Int32;
  unknown @7 :Int32;
  version @8 :Int32;
  retryCount @9 :Int32;
  taskStatusCount @10 :List(TaskStatusCount);
  conditions @11 :List(JobCondition);
  runningDurationMs @12 :Int64;
  # The scheduler's verdict while the job's gang waits: "Pending" (the enqueue action has not
  # admitted its pod group) or "Inqueue" (admitted, not placed); "" before one.
  podGroupPhase @13 :Text;
  batch @14 :BatchJobStatus;     # a Kubernetes Job's own status (JobSpec.batch set)
  observedGeneration @15 :Int64; # the spec generation the controller last acted on
}

struct JobEvent {
  timeMs @0 :Int64;
  type @1 :Text;                 # "Normal" | "Warning"
  reason @2 :Text;               # "PolicyMatched", "DelayedActionScheduled", a phase's reason...
  message @3 :Text;
}

struct Job {
  uid @0 :Text;
  createdMs @1 :Int64;
  spec @2 :JobSpec;
  status @3 :JobStatus;
  events @4 :List(JobEvent);     # what happened to the job recently, oldest first
}

struct ContainerStatus {
  name @0 :Text;
  state @1 :Text;                # "Waiting" | "Running" | "Terminated"
  exitCode @2 :Int32;
  signal @3 :Int32;              # terminating signal, 0 if none
  reason @4 :Text;               # "Completed", "Error", "OOMKilled"-style words, or a spawn error
  startedMs @5 :Int64;
  finishedMs @6 :Int64;
}

struct Pod {
  name @0 :Text;                 # {job}-{task}-{index}
  uid @1 :Text;
  namespace @2 :Text;
  jobName @3 :Text;
  taskName @4 :Text;
  index @5 :Int32;
  jobVersion @6 :Int32;
  node @7 :Text;
  phase @8 :Text;                # "Pending" | "Running" | "Succeeded" | "Failed" | "Unknown"
  reason @9 :Text;
  message @10 :Text;
  containers @11 :List(ContainerStatus);
  createdMs @12 :Int64;
  startedMs @13 :Int64;
  finishedMs @14 :Int64;
  outOfSync @15 :Bool;           # killed by the controller itself; its death is not PodEvicted
  partition @16 :Int32 = -1;
  hostIp @17 :Text;              # the node's address (Kubernetes' status.hostIP)
  statusSeq @18 :UInt64;         # the node's number of this status, rising per pod: a report
                                 # numbered at or below the one applied was applied already
  jobKind @19 :Text;             # its job's kind: "" (a Volcano Job) or "jobs.batch"
}

struct NodeInfo {
  name @0 :Text;
  address @1 :Text;
  ready @2 :Bool;
  capacity @3 :List(KeyValue);
  allocatable @4 :List(KeyValue);  # capacity minus what placed pods hold
  pods @5 :Int32;
  coordinator @6 :Bool;
  allocated @7 :List(KeyValue);    # what placed pods hold
  reason @8 :Text;                 # why it is NotReady
  incarnation @9 :UInt64;          # changes on every start of the node's process
  joinedMs @10 :Int64;             # when this incarnation registered
  lastHeartbeatMs @11 :Int64;
  labels @12 :List(KeyValue);
  presented @13 :List(KeyValue);   # what the node says it has, when not what the config says
}

# ---- JobTemplate and JobFlow (Volcano flow.volcano.sh/v1alpha1) ----

struct JobTemplate {
  uid @0 :Text;
  createdMs @1 :Int64;
  spec @2 :JobSpec;              # name and namespace are the template's
}

struct TaskProbe {
  taskName @0 :Text;
  phase @1 :Text;                # "Running" | "Succeeded"
}

# A target counts as reached once a Running pod of the task answers GET path on port (200-399).
struct HttpGetProbe {
  taskName @0 :Text;
  path @1 :Text;
  port @2 :Int32;
  headerName @3 :Text;           # Volcano's httpHeader: sent with the request when named
  headerValue @4 :Text;
}

# A target counts as reached once a Running pod of the task accepts a connection on port.
struct TcpSocketProbe {
  taskName @0 :Text;
  port @1 :Int32;
}

struct FlowDependsOn {
  targets @0 :List(Text);        # names of other flows of the same JobFlow
  probe @1 :List(TaskProbe);     # Volcano's taskStatusList; no probe at all: each target's job
                                 # must complete; else any one probe that passes will do
  httpGet @2 :List(HttpGetProbe);       # Volcano's httpGetList
  tcpSocket @3 :List(TcpSocketProbe);   # Volcano's tcpSocketList
}

struct Flow {
  name @0 :Text;                 # also the JobTemplate it runs; its job is "<jobflow>-<name>"
  dependsOn @1 :FlowDependsOn;   # absent: none
  retry @2 :Int32;               # a Failed job is created again up to this many times
  patch @3 :JobSpec;             # absent: none; applied over the template (see job_flow.hpp)
}

struct JobFlowSpec {
  name @0 :Text;
  namespace @1 :Text;
  labels @2 :List(KeyValue);
  annotations @3 :List(KeyValue);
  flows @4 :List(Flow);
  jobRetainPolicy @5 :Text;      # "retain" (empty) | "delete"
}

struct JobFlowStatus {
  state @0 :JobState;            # phase: "Pending", "Running", "Succeed", "Failed", "Terminating"
  pendingJobs @1 :List(Text);
  runningJobs @2 :List(Text);
  completedJobs @3 :List(Text);
  failedJobs @4 :List(Text);
  terminatedJobs @5 :List(Text);
  unknownJobs @6 :List(Text);
  jobStatusList @7 :List(FlowJobStatus);
  conditions @8 :List(FlowJobCondition);
}

struct JobRunningHistory {
  state @0 :Text;
  startMs @1 :Int64;
  endMs @2 :Int64;               # 0: still in that phase
}

struct FlowJobStatus {
  name @0 :Text;
  uid @1 :Text;
  state @2 :Text;
  startMs @3 :Int64;
  endMs @4 :Int64;
  restartCount @5 :Int32;
  runningHistories @6 :List(JobRunningHistory);
}

struct FlowJobCondition {
  job @0 :Text;                  # the job's name
  phase @1 :Text;
  createMs @2 :Int64;
  runningDurationMs @3 :Int64;
  taskStatusCount @4 :List(TaskStatusCount);
}

struct JobFlow {
  uid @0 :Text;
  createdMs @1 :Int64;
  spec @2 :JobFlowSpec;
  status @3 :JobFlowStatus;
}

# ---- Queue (Volcano scheduling.volcano.sh/v1beta1) and PriorityClass (scheduling.k8s.io/v1) ----

struct Queue {
  uid @0 :Text;
  createdMs @1 :Int64;
  name @2 :Text;
  labels @3 :List(KeyValue);
  annotations @4 :List(KeyValue);
  weight @5 :Int32 = 1;
  hasCapability @6 :Bool;        # false: no cap (an empty capability caps nothing either)
  capability @7 :List(KeyValue);
  reclaimable @8 :Bool = true;
  status @9 :QueueStatus;        # in list answers: the scheduler's view; absent in records
  state @10 :Text;               # "Open" | "Closed", as asked; empty in old records: Open
  generation @11 :Int64;         # metadata.generation; 0 in old records: 1
}

struct QueueStatus {
  allocated @0 :List(KeyValue);  # what its pods hold
  deserved @1 :List(KeyValue);   # its share at the last scheduling session
  pending @2 :Int32;             # pod groups waiting to be admitted (enqueued)
  running @3 :Int32;             # pod groups whose gang holds nodes
  inqueue @4 :Int32;             # pod groups admitted, waiting for their gang to be placed
  state @5 :Text;                # "Open" | "Closing" (Closed, with pod groups) | "Closed"
}

struct PriorityClass {
  uid @0 :Text;
  createdMs @1 :Int64;
  name @2 :Text;
  value @3 :Int32;
  preemptionPolicy @4 :Text;     # "PreemptLowerPriority" | "Never"
  globalDefault @5 :Bool;
  description @6 :Text;
}

# ---- Requests and responses ----

struct ObjectRef {
  namespace @0 :Text;            # empty: "default"
  name @1 :Text;
  kind @2 :Text;                 # jobs only: "" (Volcano's) or "jobs.batch" (Kubernetes')
}

struct ListFilter {
  namespace @0 :Text;            # empty: every namespace
  jobName @1 :Text;              # for pods: only this job's pods; unused by other kinds
  limit @2 :UInt32;              # items per page at most; 0: the server's default (500)
  continue @3 :Text;             # the token of the previous page's Response.continue
  summary @4 :Bool;              # jobs only: each Job without its events, and its spec only with
                                 # name, namespace, labels, queue and minAvailable: what a table
                                 # shows, for a fraction of the bytes
  kind @5 :Text;                 # jobs: "" (Volcano's) or "jobs.batch" (Kubernetes'); pods of a
                                 # jobName: "" (of either kind), "jobs" or "jobs.batch"
}

struct JobCommand {
  job @0 :ObjectRef;
  action @1 :Text;               # "AbortJob" | "ResumeJob" | "RestartJob" | "TerminateJob" | "CompleteJob"
  commandId @2 :Text;            # client-chosen; a retried command with the same id acts once
}

# A change to a Kubernetes Job's spec, as `kubectl patch jobs.batch NAME --type merge -p JSON`:
# what Kubernetes lets change (suspend, parallelism, backoffLimit, maxFailedIndexes,
# activeDeadlineSeconds, ttlSecondsAfterFinished), the rest refused as the API server does.
struct JobPatch {
  job @0 :ObjectRef;             # kind "jobs.batch"
  patch @1 :Text;                # a JSON merge patch (RFC 7386), at most 64 KiB
}

struct LogRequest {
  pod @0 :ObjectRef;
  container @1 :Text;            # empty: the only container
  offset @2 :Int64;              # byte offset into the log
  maxBytes @3 :Int64;            # 0: server default
}

# A watch: the objects of one kind as they are (one `added` event each, then `synced`), then one
# event per change, as Responses with the watch request's id, until the client sends cancelWatch
# with that id or closes the connection. The watch request gets its final answer (`ok`) when it
# ends; a client that reads too slowly has its connection closed (see the README's limits).
struct WatchRequest {
  kind @0 :Text;                 # "jobs" | "pods" | "jobflows"
  namespace @1 :Text;            # empty: every namespace
  name @2 :Text;                 # only this object (for pods: only this job's pods); empty: all
}

struct WatchEvent {
  type @0 :Type;
  union {
    none @1 :Void;               # synced
    job @2 :Job;
    pod @3 :Pod;
    jobFlow @4 :JobFlow;
  }

  enum Type {
    added @0;
    modified @1;
    deleted @2;                  # the object as it was last
    synced @3;                   # every object that existed at the start was sent
  }
}

struct Request {
  id @0 :UInt64;
  token @1 :Text;                # cluster auth token, when the cluster config sets one
  union {
    ping @2 :Void;
    submitYaml @3 :Text;         # one or more YAML documents
    submitJob @4 :JobSpec;       # the same, as structured fields
    getJob @5 :ObjectRef;
    listJobs @6 :ListFilter;
    listPods @7 :ListFilter;
    command @8 :JobCommand;
    deleteJob @9 :ObjectRef;
    listNodes @10 :Void;
    podLog @11 :LogRequest;
    submitJobTemplate @12 :JobSpec;
    submitJobFlow @13 :JobFlowSpec;
    getJobTemplate @14 :ObjectRef;
    listJobTemplates @15 :ListFilter;
    getJobFlow @16 :ObjectRef;
    listJobFlows @17 :ListFilter;
    deleteJobTemplate @18 :ObjectRef;
    deleteJobFlow @19 :ObjectRef;
    watch @21 :WatchRequest;
    cancelWatch @22 :UInt64;     # the id of the watch request to end
    listQueues @23 :Void;        # every queue, `default` included, with its status
    deleteQueue @24 :Text;       # by name; refused for `default` and while jobs use it
    listPriorityClasses @25 :Void;
    deletePriorityClass @26 :Text;
    backup @27 :Text;            # a consistent copy of the coordinator's store into this new
                                 # directory, an absolute path on the coordinator's machine: ok
    patchJob @28 :JobPatch;      # ok, or why not (invalidArgument with every refusal)
    applyYaml @29 :Text;         # as submitYaml, but what exists is updated (kubectl apply):
                                 # answered `applied`
    operateQueue @30 :QueueOperation;  # caldera queue open|close: ok, or why not
    getSchedulerConf @31 :Void;  # the scheduler conf the coordinator runs: schedulerConf
  }
  namespace @20 :Text;           # submitYaml: the namespace of documents that name none (kubectl -n);
                                 # a document that names another one is refused. Empty: "default"
}

struct Error {
  code @0 :Code;
  message @1 :Text;
  path @2 :Text;                 # field path in the request, e.g. "spec.tasks[1].replicas"

  enum Code {
    invalidArgument @0;
    notFound @1;
    alreadyExists @2;
    unavailable @3;              # retry later (e.g. the coordinator is restarting)
    internal @4;
    tooLarge @5;
    malformed @6;                # not a valid Cap'n Proto message
    unauthenticated @7;
    failedPrecondition @8;
    unimplemented @9;
  }
}

struct Submitted {
  kind @0 :Text;                 # "Job" | "Job.batch" (Kubernetes') | "JobTemplate" | "JobFlow" | "Queue" | "PriorityClass"
  namespace @1 :Text;
  name @2 :Text;
  uid @3 :Text;
}

struct QueueOperation {
  name @0 :Text;
  action @1 :Text;               # "open" | "close" (vcctl queue operate -a)
}

# One document of an apply: what was done with it.
struct Applied {
  kind @0 :Text;                 # as Submitted.kind
  namespace @1 :Text;
  name @2 :Text;
  uid @3 :Text;
  action @4 :Text;               # "created" | "configured" | "unchanged"
}

# Each document is applied on its own, as kubectl does: updates one by one, then the new
# objects together (all or nothing among them, as a submission). What was done is listed even
# when something else was refused.
struct ApplyResult {
  objects @0 :List(Applied);     # in file order
  errors @1 :List(Error);        # every refusal, at its document's path
}

struct LogChunk {
  data @0 :Data;
  nextOffset @1 :Int64;
  eof @2 :Bool;                  # the container has ended and everything was read
}

struct Pong {
  node @0 :Text;
  version @1 :Text;
}

struct Response {
  id @0 :UInt64;
  warnings @1 :List(Text);
  union {
    errors @2 :List(Error);      # every problem found, not only the first
    pong @3 :Pong;
    submitted @4 :List(Submitted);
    job @5 :Job;
    jobs @6 :List(Job);
    pods @7 :List(Pod);
    nodes @8 :List(NodeInfo);
    log @9 :LogChunk;
    ok @10 :Void;
    jobTemplate @11 :JobTemplate;
    jobTemplates @12 :List(JobTemplate);
    jobFlow @13 :JobFlow;
    jobFlows @14 :List(JobFlow);
    event @16 :WatchEvent;       # a watch's event; id is the watch request's
    queues @17 :List(Queue);
    priorityClasses @18 :List(PriorityClass);
    applied @19 :ApplyResult;
    schedulerConf @20 :Text;     # as Volcano's volcano-scheduler.conf (YAML)
  }
  continue @15 :Text;            # a list was cut at its page limit: pass this to get the next page
}
