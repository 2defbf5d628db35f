// Client requests as the wire carries them (framed Cap'n Proto), for tests that speak the API.
#pragma once

#include <cstdint>
#include <string>

#include <capnp/message.h>

#include "messages/api.capnp.h"
#include "messages/flat.hpp"

namespace caldera::testing {

inline std::string ping_request(uint64_t id) {
  capnp::MallocMessageBuilder builder;
  auto request = builder.initRoot<api::Request>();
  request.setId(id);
  request.setPing();
  return to_bytes(builder);
}

inline std::string list_jobs_request(uint64_t id) {
  capnp::MallocMessageBuilder builder;
  auto request = builder.initRoot<api::Request>();
  request.setId(id);
  request.initListJobs();
  return to_bytes(builder);
}

}  // namespace caldera::testing
