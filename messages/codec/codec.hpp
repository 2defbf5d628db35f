// Domain values <-> their Cap'n Proto form (messages/api.capnp).
#pragma once

#include <string>

#include "messages/api.capnp.h"
#include "messages/model/diagnostic.hpp"
#include "messages/model/job.hpp"
#include "messages/model/job_flow.hpp"
#include "messages/model/job_template.hpp"
#include "messages/model/node_info.hpp"
#include "messages/model/pod.hpp"

namespace caldera {

void encode(const ResourceList& in, capnp::List<api::KeyValue>::Builder out);
void encode(const JobSpec& in, api::JobSpec::Builder out);
void encode(const JobStatus& in, api::JobStatus::Builder out);
// The part of a status a table of jobs (and a pod group) shows: its state and counts, without the
// conditions, the per-task counts and the running duration (a job summary row).
void encode_counts(const JobStatus& in, api::JobStatus::Builder out);
void encode(const Job& in, api::Job::Builder out);
// Everything but the spec: a job's store row, whose spec has a row of its own.
void encode_without_spec(const Job& in, api::Job::Builder out);
void encode(const Pod& in, api::Pod::Builder out);
void encode(const Container& in, api::Container::Builder out);
void encode(const NodeInfo& in, api::NodeInfo::Builder out);
void encode(const JobTemplate& in, api::JobTemplate::Builder out);
void encode(const JobFlowSpec& in, api::JobFlowSpec::Builder out);
void encode(const JobFlowStatus& in, api::JobFlowStatus::Builder out);
void encode(const JobFlow& in, api::JobFlow::Builder out);

// Decoding untrusted input reports unknown words (events, actions, phases) and malformed quantities
// to diags with field paths under `path`. Decoding our own data passes a throwaway Diagnostics.
// May throw kj::Exception on a malformed message (lazy Cap'n Proto checks): callers catch.
ResourceList decode(capnp::List<api::KeyValue>::Reader in, Diagnostics& diags,
                    const std::string& path);
JobSpec decode(api::JobSpec::Reader in, Diagnostics& diags, const std::string& path = "spec");
Container decode(api::Container::Reader in, Diagnostics& diags, const std::string& path);
JobStatus decode(api::JobStatus::Reader in);
Job decode(api::Job::Reader in);
Pod decode(api::Pod::Reader in);
NodeInfo decode(api::NodeInfo::Reader in);
// Quantities this project wrote itself (launches, reservations): unreadable ones are skipped.
ResourceList decode_resources(capnp::List<api::KeyValue>::Reader in);
JobTemplate decode(api::JobTemplate::Reader in);
// Untrusted flow specs: a label or annotation key given twice is an error (YAML rejects it too).
JobFlowSpec decode(api::JobFlowSpec::Reader in, Diagnostics& diags);
JobFlowStatus decode(api::JobFlowStatus::Reader in);
JobFlow decode(api::JobFlow::Reader in);

// Capacity helpers for capnp lists of (key, value) strings.
void encode_map(const std::map<std::string, std::string>& in,
                capnp::List<api::KeyValue>::Builder out);
std::map<std::string, std::string> decode_map(capnp::List<api::KeyValue>::Reader in);

}  // namespace caldera
