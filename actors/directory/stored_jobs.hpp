// Jobs as the store holds them: a settled job has no actor (passivation), and every list of jobs
// is read from the store a page at a time, so that finished jobs cost no memory.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "actors/job/core/job_model.hpp"
#include "messages/model/result.hpp"
#include "storage/store.hpp"

namespace caldera {

// A job's two rows: the job row (store::JobRecord) and its spec row (store::JobSpecRecord).
struct JobRows {
  std::string job;
  std::string spec;
};

// Its rows, or nullopt when the store has no such job.
std::optional<JobRows> read_job_rows(Store& store, const std::string& key);

bool stored_job_exists(Store& store, const std::string& key);

// The job without its pods (its job and spec rows): nullopt when the store has no such job,
// else the model or why its rows cannot be read.
std::optional<Result<JobModel>> load_stored_job_rows(Store& store, const std::string& key);

// The whole job, pods included, as a restart recovers it (the recovery path and a woken job).
Result<JobModel> load_stored_job(Store& store, const std::string& key);

// Every stored job after `after` in key order within namespace `ns` (every one when empty):
// fn(key, row of `family`) until it returns false. `family`: Jobs or Summaries. Empty, or why
// the read stopped early.
std::string for_each_stored_job(
    Store& store, Family family, const std::string& ns, const std::string& after,
    const std::function<bool(std::string_view key, std::string_view row)>& fn);

}  // namespace caldera
