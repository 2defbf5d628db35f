// What may be asked of the flow directory (actors/jobflow): the JobTemplates and JobFlows. The
// API router passes on clients' requests about them, the job directory a submission's templates
// and flows and the statuses of the jobs flows created, a flow actor the jobs it needs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/protocol/atoms.hpp"
#include "actors/protocol/local_types.hpp"

namespace caldera::protocol {

using flow_directory = caf::typed_actor<
    // Request bytes (get, list or delete of a JobTemplate or JobFlow) -> Response bytes
    caf::replies_to<api_atom, std::string>::with<std::string>,
    // a submission's templates and flows -> the same, defaulted, with what admission found; when
    // it found no error their names stay taken until create_atom or release_atom
    caf::replies_to<admit_atom, FlowDocuments>::with<FlowDocuments>,
    // the admitted objects, with their uids -> "" once durable, or why not
    caf::replies_to<create_atom, std::vector<JobTemplate>, std::vector<JobFlow>>::with<std::string>,
    // caldera apply of a JobTemplate (admitted against the context) or a JobFlow that may exist
    caf::replies_to<update_atom, JobSpec, AdmissionContext>::with<ApplyOutcome>,
    caf::replies_to<update_atom, JobFlowSpec>::with<ApplyOutcome>,
    // (template keys, flow keys) of an admitted submission refused for something else
    caf::reacts_to<release_atom, std::vector<std::string>, std::vector<std::string>>,
    // (flow key, flow uid, entry) from that flow's actor -> (job uid, created ms, "", false) once
    // the job is durable or exists already; ("", 0, why, wait) when it cannot be created (wait:
    // not yet)
    caf::replies_to<flow_create_atom, std::string, std::string,
                    std::string>::with<std::string, int64_t, std::string, bool>,
    // (flow key, flow uid, job name, job uid, created ms, status) from a job the flow created:
    // to the flow's actor, woken if it has stopped
    caf::reacts_to<job_status_atom, std::string, std::string, std::string, std::string, int64_t,
                   JobStatus>,
    // (flow key, flow uid, job name, job uid): that job was deleted
    caf::reacts_to<job_gone_atom, std::string, std::string, std::string, std::string>,
    // (flow key, flow uid) from a flow actor that is finished and idle: it may stop
    caf::reacts_to<passivate_atom, std::string, std::string>,
    // (name, whether a queue) -> (how many JobTemplates name that queue or priority class, up to
    // three of their keys)
    caf::replies_to<users_atom, std::string, bool>::with<int32_t, std::vector<std::string>>,
    // the job directory, once at start: nothing else is handled before it
    caf::reacts_to<coordinator_atom, caf::actor>>;

}  // namespace caldera::protocol
