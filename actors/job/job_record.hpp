// A job's durable form: JobModel <-> store.capnp JobRecord bytes (column family "jobs").
#pragma once

#include <string>
#include <string_view>

#include "actors/job/core/job_model.hpp"
#include "messages/result.hpp"

namespace caldera {

std::string encode_record(const JobModel& m);
// Fails (never throws) on bytes that are not a JobRecord.
Result<JobModel> decode_record(std::string_view bytes);

}  // namespace caldera
