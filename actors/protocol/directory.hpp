// What may be asked of the job directory (actors/directory): which jobs exist. The API router
// passes on clients' requests about jobs, the membership nodes' registrations and readiness,
// workers (through the report port) their pods' reports, job actors their TTL and their offer
// to stop, the flow directory its flows' jobs, history retention its deletes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/protocol/atoms.hpp"
#include "actors/protocol/local_types.hpp"

namespace caldera::protocol {

using directory = caf::typed_actor<
    // Request bytes -> Response bytes: every client request but ping, nodes, backup and those
    // about templates and flows
    caf::replies_to<api_atom, std::string>::with<std::string>,
    // (NodeRegistration bytes, node actor): a node (re)joins; its pods' reports go to their jobs
    caf::reacts_to<register_atom, std::string, caf::actor>,
    // PodReport bytes: to the pod's job actor (a settled job's woken if the report is news)
    caf::reacts_to<report_atom, std::string>,
    // (node, capacity, ready, host, labels): for admission's fit checks and its notes on nodes
    caf::reacts_to<capacity_atom, std::string, ResourceList, bool, std::string,
                   std::map<std::string, std::string>>,
    // (node, why, lease over): passed on to every live job
    caf::reacts_to<node_lost_atom, std::string, std::string, bool>,
    // (job key, uid): that job's ttlSecondsAfterFinished passed; from its actor
    caf::reacts_to<expire_atom, std::string, std::string>,
    // (History row, uid) -> "" or why not: history retention deletes a settled job
    caf::replies_to<purge_atom, std::string, std::string>::with<std::string>,
    // (job key, uid) from a settled job's actor -> whether a stop_atom follows (passivation)
    caf::replies_to<passivate_atom, std::string, std::string>::with<bool>,
    // (flow key, flow uid, JobSpec) from the flow directory -> (uid, created ms, "", false), or
    // ("", 0, why, wait)
    caf::replies_to<flow_create_atom, std::string, std::string, JobSpec>::with<std::string, int64_t,
                                                                               std::string, bool>,
    // (flow key, flow uid, job keys) -> "" once every job of that flow is deleted, or why not
    caf::replies_to<flow_delete_atom, std::string, std::string,
                    std::vector<std::string>>::with<std::string>,
    // (job key, uid) -> "": one of a flow's jobs deleted (a retry); "" too when it is gone already
    caf::replies_to<flow_delete_atom, std::string, std::string>::with<std::string>,
    // caldera apply of a Volcano Job or a Kubernetes Job that may exist -> ApplyOutcome
    caf::replies_to<update_atom, JobSpec>::with<ApplyOutcome>,
    caf::replies_to<update_atom, BatchJobSpec>::with<ApplyOutcome>,
    // (request id, documents) the new objects of an apply, submitted -> Response bytes
    caf::replies_to<create_atom, uint64_t, ParsedDocuments>::with<std::string>,
    // from the watch hub: whether it hears of every job actor started and stopped
    caf::reacts_to<pods_watched_atom, bool>,
    // namespace ("": all) -> (keys, actors) of the jobs with an actor, for a pods watch's list
    caf::replies_to<live_jobs_atom, std::string>::with<std::vector<std::string>,
                                                       std::vector<caf::actor>>,
    // (queues, priority classes, default class, closed queues): the names jobs may use, on
    // every change
    caf::reacts_to<scheduling_names_atom, std::vector<std::string>, std::vector<std::string>,
                   std::string, std::vector<std::string>>>;

}  // namespace caldera::protocol
