// A Kubernetes Job's own spec fields and status <-> their Cap'n Proto form (messages/api.capnp):
// client answers and store records alike.
#pragma once

#include "messages/api.capnp.h"
#include "messages/model/batch_job_fields.hpp"
#include "messages/model/batch_job_status.hpp"

namespace caldera {

void encode(const BatchJobFields& in, api::BatchJobFields::Builder out);
void encode(const BatchJobStatus& in, api::BatchJobStatus::Builder out);

// Our own records and answers, or a client's structured submission (admission checks it after).
BatchJobFields decode(api::BatchJobFields::Reader in);
BatchJobStatus decode(api::BatchJobStatus::Reader in);

}  // namespace caldera
