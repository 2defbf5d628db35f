// What may be asked of a job actor: the job directory and the scheduler hold it by this handle,
// so the compiler holds what they send to it (the timer wakes it with tick_atom).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/protocol/atoms.hpp"
#include "actors/protocol/local_types.hpp"

namespace caldera::protocol {

using job = caf::typed_actor<
    // -> its record (JobRecord bytes), once the new job is durable: the requester's read cache
    // takes it from here, not from a separate update
    caf::replies_to<create_atom>::with<std::string>,
    // after a coordinator restart: re-sync from the stored state
    caf::reacts_to<recover_atom>,
    // PodReport bytes: a node's report on one of its pods (acknowledged once applied, rule 5)
    caf::reacts_to<report_atom, std::string>,
    // (action, command id) -> "" when it acted, else why its phase ignores the action
    caf::replies_to<command_atom, std::string, std::string>::with<std::string>,
    // (merge patch) -> "" when a batch/v1 Job's spec took it, else every refusal
    caf::replies_to<patch_atom, std::string>::with<std::string>,
    // caldera apply: the job's new spec, admitted as a new one -> configured once durable,
    // unchanged, or refused (actors/job/core/job_update)
    caf::replies_to<update_atom, JobSpec>::with<ApplyOutcome>,
    // (due ms) its timer: delayed actions, deadline, TTL
    caf::reacts_to<tick_atom, int64_t>,
    // (node, why, lease over) the node went NotReady (false), or its lease is over too (true):
    // its pods are evicted once its lease and their grace are over, or at once when the job asks
    // for it
    caf::reacts_to<node_lost_atom, std::string, std::string, bool>,
    // (node, why, wait number) its own: the lost node's pods' lease-stop grace is over
    caf::reacts_to<replace_atom, std::string, std::string, uint64_t>,
    // (uid, reason, why) the scheduler evicts one of its pods (preemption, reclaim)
    caf::reacts_to<evict_atom, std::string, std::string, std::string>,
    // (node, uids) a node (re)registered with these pods
    caf::reacts_to<node_up_atom, std::string, std::vector<std::string>>,
    // the scheduler: its gang is bound (after every node reserved it), or why it waits
    caf::reacts_to<placed_atom, std::vector<Binding>>,
    caf::reacts_to<unsched_atom, std::string, bool>,
    // (after pod name, limit) -> a Response with a page of its pods and `continue`
    caf::replies_to<list_pods_atom, std::string, uint32_t>::with<std::string>,
    // -> (its latest durable job row, its spec row): a client's `get job` of a live job
    caf::replies_to<get_job_atom>::with<std::string, std::string>,
    // (pod name) -> its PodRecord bytes, or "" when it has no such pod
    caf::replies_to<get_pod_atom, std::string>::with<std::string>,
    // (on) whether to send the directory its pod changes (someone watches pods)
    caf::reacts_to<watch_atom, bool>,
    // -> ok, once the record is gone; the actor then quits
    caf::replies_to<delete_atom>::with<caf::ok_atom>,
    // passivation: -> true when the job is still settled, its state durable, and the actor
    // quits; false when something came up since it offered to stop
    caf::replies_to<stop_atom>::with<bool>>;

}  // namespace caldera::protocol
