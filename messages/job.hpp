// A Job as the cluster keeps it: identity, the user's spec and the controller's status.
#pragma once

#include <cstdint>
#include <string>

#include "messages/job_spec.hpp"
#include "messages/job_status.hpp"

namespace caldera {

struct Job {
  std::string uid;
  int64_t created_ms = 0;
  JobSpec spec;
  JobStatus status;
  bool operator==(const Job&) const = default;
};

}  // namespace caldera
