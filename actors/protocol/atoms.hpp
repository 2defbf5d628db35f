// The message words actors exchange. Payloads that may cross processes are Cap'n Proto bytes
// (std::string) from messages/cluster.capnp or api.capnp, so no custom type travels the network.
#pragma once

#include <caf/atom.hpp>

namespace caldera {

// client API: (api_atom, request bytes) -> response bytes
using api_atom = caf::atom_constant<caf::atom("api")>;
// gateway -> client bridge: (frame_atom, connection, frame bytes)
using frame_atom = caf::atom_constant<caf::atom("frame")>;

// coordinator -> job actor
using create_atom = caf::atom_constant<caf::atom("create")>;
using delete_atom = caf::atom_constant<caf::atom("delete")>;
using recover_atom = caf::atom_constant<caf::atom("recover")>;
using node_up_atom = caf::atom_constant<caf::atom("nodeup")>;
using command_atom = caf::atom_constant<caf::atom("command")>;
using patch_atom = caf::atom_constant<caf::atom("patch")>;
// `caldera apply`: an object's owner updates it from a document (-> ApplyOutcome)
using update_atom = caf::atom_constant<caf::atom("update")>;
// reads a job actor answers from its pod table: (list_pods_atom, after pod name, limit) -> a
// Response with pods and `continue`; (get_pod_atom, pod name) -> a PodRecord, or "" if none
using list_pods_atom = caf::atom_constant<caf::atom("listpods")>;
using get_pod_atom = caf::atom_constant<caf::atom("getpod")>;
// ttlSecondsAfterFinished has passed: delete the job
using expire_atom = caf::atom_constant<caf::atom("expire")>;
// job directory <-> scheduling objects (actors/scheduler): the stored Queue and PriorityClass
// names, asked once and told after each change
using scheduling_names_atom = caf::atom_constant<caf::atom("schednames")>;
// history retention -> directory: (purge_atom, History row key, uid) -> "" once the settled job
// is deleted, kPurgedStale once a row no job holds is, else why not (it is live again)
using purge_atom = caf::atom_constant<caf::atom("purge")>;
inline constexpr const char* kPurgedStale = "stale row deleted";

// coordinator <-> node actor (payloads: cluster.capnp)
// job -> node (through the membership): PodFiles, a running pod's plugin files written again
using files_atom = caf::atom_constant<caf::atom("files")>;
using launch_atom = caf::atom_constant<caf::atom("launch")>;
using kill_atom = caf::atom_constant<caf::atom("kill")>;
using remove_atom = caf::atom_constant<caf::atom("remove")>;
using report_atom = caf::atom_constant<caf::atom("report")>;
using register_atom = caf::atom_constant<caf::atom("register")>;
using log_atom = caf::atom_constant<caf::atom("log")>;
// job actor -> membership: (ack_atom, node, pod uid, status seq), the pod's status is durable in
// its job; membership -> node: (ack_atom, PodAcks bytes), many of them at once
using ack_atom = caf::atom_constant<caf::atom("ack")>;

// node (its coordinator link) <-> membership: (heartbeat_atom, node, incarnation) -> bool, false
// when the node must register again
using heartbeat_atom = caf::atom_constant<caf::atom("heartbeat")>;
// membership -> API router: (halt_atom, why), the coordinator acts on nothing (its store was lost)
using halt_atom = caf::atom_constant<caf::atom("halt")>;
// coordinator link -> its node actor: (identity_atom, cluster id, generation, node id), who the
// coordinator it registered with is (cluster id "": one that acts on nothing)
using identity_atom = caf::atom_constant<caf::atom("identity")>;
// coordinator link -> its node actor: (lease_atom, deadline), the node's lease runs to it (ms of
// CLOCK_MONOTONIC)
using lease_atom = caf::atom_constant<caf::atom("lease")>;
// scheduler -> node (through the membership): (prepare_atom, node, PodReservations bytes) ->
// vector<string>, per gang "" or why not; (cancel_atom, node, PodReservation bytes) releases one
using prepare_atom = caf::atom_constant<caf::atom("prepare")>;
using cancel_atom = caf::atom_constant<caf::atom("cancel")>;
// the scheduler's own: run a session (coalesced)
using session_atom = caf::atom_constant<caf::atom("session")>;
// main -> scheduler: (membership_atom, membership), its way to the nodes
using membership_atom = caf::atom_constant<caf::atom("members")>;
// membership -> coordinator: (node_lost_atom, node, reason, lease over), a node went NotReady,
// or its lease is over too
using node_lost_atom = caf::atom_constant<caf::atom("nodelost")>;
// job actor -> itself: (replace_atom, node, why, wait number), a lost node's pods are surely dead
using replace_atom = caf::atom_constant<caf::atom("replace")>;
// main -> membership: (listen_atom), the cluster port is open: the wait for the config's nodes
// starts now (a worker refused before then may hold a lease renewed until then)
using listen_atom = caf::atom_constant<caf::atom("listen")>;
// main -> membership: (coordinator_atom, coordinator), whom registrations are passed on to
using coordinator_atom = caf::atom_constant<caf::atom("coord")>;

// job actor <-> scheduler
using place_atom = caf::atom_constant<caf::atom("place")>;
using placed_atom = caf::atom_constant<caf::atom("placed")>;
using reserve_atom = caf::atom_constant<caf::atom("reserve")>;
using release_atom = caf::atom_constant<caf::atom("release")>;
using nodes_atom = caf::atom_constant<caf::atom("nodes")>;
using capacity_atom = caf::atom_constant<caf::atom("capacity")>;
// scheduler -> job actor: (unsched_atom, why its gang was not placed, whether the enqueue action
// admitted it), sent when either changes
using unsched_atom = caf::atom_constant<caf::atom("unsched")>;
// job directory -> scheduler: (queues_atom, Queues, PriorityClasses) on start and each change;
// (queues_atom) asks it for each queue's status
using queues_atom = caf::atom_constant<caf::atom("queues")>;
// scheduler -> job actor: (evict_atom, pod uid, reason, why) preemption or reclaim takes a pod
using evict_atom = caf::atom_constant<caf::atom("evict")>;

// job actor -> flow directory -> its owner (a flow actor): (job_status_atom, [flow key, flow
// uid,] job name, uid, created ms, JobStatus) after each durable change of its status;
// (job_gone_atom, [flow key, flow uid,] job name, uid) once it is deleted
using job_status_atom = caf::atom_constant<caf::atom("jobstatus")>;
using job_gone_atom = caf::atom_constant<caf::atom("jobgone")>;
// flow actor -> flow directory: (flow_create_atom, flow key, flow uid, entry) creates the
// entry's job from its template; flow directory -> job directory: (flow_create_atom, flow key,
// flow uid, JobSpec) creates it. Flow actor or flow directory -> job directory:
// (flow_delete_atom, job key, uid) deletes one of a flow's jobs, (flow_delete_atom, flow key,
// flow uid, job keys) every one.
using flow_create_atom = caf::atom_constant<caf::atom("flowcreate")>;
using flow_delete_atom = caf::atom_constant<caf::atom("flowdel")>;
// job directory <-> flow directory: a submission's templates and flows are admitted
// (admit_atom), then stored (create_atom) or their names given back (release_atom); (users_atom,
// name, queue?) -> the templates that name a queue or priority class
using admit_atom = caf::atom_constant<caf::atom("admit")>;
using users_atom = caf::atom_constant<caf::atom("users")>;
// flow directory -> flow actor: look again (a JobTemplate arrived)
using sync_atom = caf::atom_constant<caf::atom("sync")>;
// a flow actor's prober -> the flow actor: (probed_atom, entries, targets) the endpoint probes
// that passed, entry i on target i; the flow actor to itself: (probed_atom) probe again.
using probed_atom = caf::atom_constant<caf::atom("probed")>;

// Watches (actors/watch). client bridge -> API router -> watch hub: (watch_atom, Request bytes,
// stream, bridge) starts one, (unwatch_atom, bridge, stream) ends it (stream 0: all of the
// bridge's); watch hub -> client bridge: (watch_event_atom, stream, Response bytes). Job actor
// -> watch hub: (job_event_atom, key, event type, job row) after each durable change, and
// (pod_events_atom, job key, Response bytes listing the pods, one type letter per pod: 'A'dded,
// 'M'odified, 'D'eleted) while told to (watch_atom, on). Job directory -> watch hub:
// (flow_event_atom, JobFlow, event type); (job_started_atom, key, actor) for each job actor it
// starts while pods are watched, which the hub asks it with (pods_watched_atom, bool); and
// (live_jobs_atom, namespace) -> the keys and actors of the live jobs.
// client bridge's gateway thread -> client bridge: (closed_atom, connection).
using watch_atom = caf::atom_constant<caf::atom("watch")>;
using unwatch_atom = caf::atom_constant<caf::atom("unwatch")>;
using watch_event_atom = caf::atom_constant<caf::atom("watchevent")>;
using pod_events_atom = caf::atom_constant<caf::atom("podevents")>;
using job_event_atom = caf::atom_constant<caf::atom("jobevent")>;
using flow_event_atom = caf::atom_constant<caf::atom("flowevent")>;
using job_started_atom = caf::atom_constant<caf::atom("jobstart")>;
using pods_watched_atom = caf::atom_constant<caf::atom("podswatch")>;
using live_jobs_atom = caf::atom_constant<caf::atom("livejobs")>;
using closed_atom = caf::atom_constant<caf::atom("closed")>;

// Passivation: a settled job's actor -> job directory: (passivate_atom, key, uid) -> whether a
// stop follows; job directory -> job actor: stop_atom -> whether it stopped. Job actor ->
// scheduler: (forget_atom, key) -> ok once its pod group request is gone (the scheduler's
// bindings sent before it arrive first).
using passivate_atom = caf::atom_constant<caf::atom("passivate")>;
using stop_atom = caf::atom_constant<caf::atom("stop")>;
using forget_atom = caf::atom_constant<caf::atom("forget")>;
// job actor -> membership -> node: (lookup_atom, [node,] uids) -> the PodReports of those of
// them the node has retired (ended, acknowledged, out of its memory)
using lookup_atom = caf::atom_constant<caf::atom("lookup")>;
// job directory -> a live job's actor: get_job_atom -> (its latest durable job row, its spec row)
using get_job_atom = caf::atom_constant<caf::atom("getjob")>;

// store writer thread -> an actor: a group commit finished
using committed_atom = caf::atom_constant<caf::atom("committed")>;
// process runner thread -> node actor
using process_atom = caf::atom_constant<caf::atom("process")>;
// node actor's own timer for simulated pods
using sim_atom = caf::atom_constant<caf::atom("sim")>;
// job actor's own timer: a failed write is written again
using retry_atom = caf::atom_constant<caf::atom("retry")>;
// job actor's own timer: delayed actions, deadlines, TTL
using tick_atom = caf::atom_constant<caf::atom("tick")>;
// the timer actor's own wake-up
using timer_atom = caf::atom_constant<caf::atom("timer")>;

}  // namespace caldera
