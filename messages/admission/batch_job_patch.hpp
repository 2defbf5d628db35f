// A merge patch (RFC 7386, what `kubectl patch --type merge -p JSON` sends) to a batch/v1 Job:
// what Kubernetes lets change in a Job's spec, the rest refused as the API server refuses it.
#pragma once

#include <string_view>

#include "messages/model/diagnostic.hpp"
#include "messages/model/job_spec.hpp"

namespace caldera {

// A patch's text is JSON (or YAML) of at most this many bytes.
inline constexpr size_t kMaxPatchBytes = 64 * 1024;

// `spec` (a batch/v1 Job's, spec.batch set) with the patch applied: spec.suspend,
// spec.parallelism, spec.backoffLimit, spec.maxFailedIndexes, spec.activeDeadlineSeconds and
// spec.ttlSecondsAfterFinished (null removes the last two). Any other field is refused
// (immutable, or not a Job's), and the patched spec is checked as a new one would be; every
// problem lands in diags with its path, and then `spec` is left as it was.
void apply_batch_job_patch(JobSpec& spec, std::string_view patch, Diagnostics& diags);

}  // namespace caldera
