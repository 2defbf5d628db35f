# Payloads between the coordinator actors and node actors. They travel inside CAF messages as a
# std::string holding a flat Cap'n Proto array, so that a node may live in another process.
@0xc23034c7fa3af00d;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("caldera::cluster");

using Api = import "api.capnp";

# Coordinator -> node: run this pod. Idempotent per pod uid.
struct PodLaunch {
  pod @0 :Api.Pod;                      # identity: uid, name, namespace, jobName, taskName, index, ...
  containers @1 :List(Api.Container);   # resolved: env already holds VK_TASK_INDEX etc.
  requests @2 :List(Api.KeyValue);      # the pod's total resource requests
  simDurationMs @3 :Int64 = -1;         # >= 0: a simulated pod (a timer instead of processes)
  simExitCode @4 :Int32;
  graceMs @5 :Int64 = 10000;            # SIGTERM -> SIGKILL grace period when killed
  files @6 :List(Api.KeyValue);         # plugin files: path relative to the pod dir -> content
  leaseStopGraceMs @7 :Int64 = 1000;    # the same when stopped because the node's lease ran out
  # Directories of the pod's shown at absolute paths inside its private mount namespace, where
  # the node can make one: target -> directory relative to the pod dir (/etc/volcano -> volcano).
  # A launch written before views were sent shows its volcano/ files at /etc/volcano.
  views @8 :List(Api.KeyValue);
}

# Job -> node (through the membership): a running pod's plugin files, written again (each aside,
# then renamed into place) because its task's hosts changed. Ignored for a pod the node does not
# run.
struct PodFiles {
  uid @0 :Text;
  files @1 :List(Api.KeyValue);
}

# Scheduler -> node (through the membership): hold room for these pods of one gang, all of them
# or none, for ttlMs unless a launch binds them (DESIGN rule 6). Idempotent per pod uid. The same
# message with `cancel` releases what is still only reserved.
struct PodReservation {
  gang @0 :Text;                        # the job's namespace/name
  pods @1 :List(ReservedPod);
  ttlMs @2 :Int64;
}

struct ReservedPod {
  uid @0 :Text;
  requests @1 :List(Api.KeyValue);
}

# The reservations of one scheduling session for one node: the node answers each gang on its
# own (all of that gang's pods or none), in order.
struct PodReservations {
  gangs @0 :List(PodReservation);
}

# Coordinator -> node: stop this pod (SIGTERM, SIGKILL after grace). Idempotent.
struct PodKill {
  uid @0 :Text;
  graceMs @1 :Int64;
  reason @2 :Text;
  evictReason @3 :Text;          # set: the pod is evicted (e.g. "Preempted"); it ends Failed with
                                 # this reason and `reason` as its message, whatever its exit
}

# Node -> coordinator: the full current status of one pod (level-triggered; a repeat is harmless).
# The node keeps it in its outbox until the pod's job acknowledges it (PodAcks).
struct PodReport {
  pod @0 :Api.Pod;
  obsoleteSeq @1 :UInt64;               # never read: pod.statusSeq numbers the status
}

# Coordinator -> node: these statuses are durable in their jobs' records; the node's outbox
# forgets every report of the pod numbered at or below `seq`.
struct PodAcks {
  pods @0 :List(PodAck);
}

struct PodAck {
  uid @0 :Text;
  seq @1 :UInt64;
}

# Node -> coordinator on (re)connect: who I am, what I have, and every pod I know.
struct NodeRegistration {
  node @0 :Api.NodeInfo;
  pods @1 :List(PodReport);
  incarnation @2 :UInt64;               # changes on every start of the node process
  token @3 :Text;                       # the cluster's token, when its config has one
  clusterId @4 :Text;                   # the cluster its store belongs to; "" for a new store
  generation @5 :UInt64;                # of the coordinator's store it last heard from
}
