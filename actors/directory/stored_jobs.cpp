#include "actors/directory/stored_jobs.hpp"

#include <vector>

#include "actors/job/job_record.hpp"

namespace caldera {

std::optional<JobRows> read_job_rows(Store& store, const std::string& key) {
  auto job = store.get(Family::Jobs, key);
  if (!job) return std::nullopt;
  return JobRows{std::move(*job), store.get(Family::Specs, key).value_or(std::string())};
}

bool stored_job_exists(Store& store, const std::string& key) {
  return store.get(Family::Jobs, key).has_value();
}

std::optional<Result<JobModel>> load_stored_job_rows(Store& store, const std::string& key) {
  auto rows = read_job_rows(store, key);
  if (!rows) return std::nullopt;
  return load_job(rows->job, {}, nullptr,
                  rows->spec.empty() ? std::nullopt : std::optional<std::string_view>(rows->spec));
}

Result<JobModel> load_stored_job(Store& store, const std::string& key) {
  auto rows = read_job_rows(store, key);
  if (!rows) return Failure{"job " + key + " is not in the store"};
  std::vector<std::string> pods;
  const auto prefix = key + "/";
  auto error = store.scan_from(Family::Pods, prefix, [&](std::string_view k, std::string_view v) {
    if (k.substr(0, prefix.size()) != prefix) return false;
    pods.emplace_back(v);
    return true;
  });
  if (!error.empty()) return Failure{"reading the pods of job " + key + ": " + error};
  return load_job(rows->job, pods, nullptr,
                  rows->spec.empty() ? std::nullopt : std::optional<std::string_view>(rows->spec));
}

std::string for_each_stored_job(
    Store& store, Family family, const std::string& ns, const std::string& after,
    const std::function<bool(std::string_view key, std::string_view row)>& fn) {
  const std::string prefix = ns.empty() ? std::string() : ns + "/";
  // A namespace's keys are contiguous: the walk starts and ends at its edges.
  const std::string from = after < prefix ? prefix : after;
  return store.scan_from(family, from, [&](std::string_view k, std::string_view v) {
    if (k.substr(0, prefix.size()) != prefix) return false;
    if (k == after) return true;  // strictly after
    return fn(k, v);
  });
}

}  // namespace caldera
