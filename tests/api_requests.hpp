// Client requests as the wire carries them (framed Cap'n Proto), for tests that speak the API.
#pragma once

#include <cstdint>
#include <string>

#include <capnp/message.h>

#include "messages/api.capnp.h"
#include "messages/codec/flat.hpp"

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

inline std::string watch_request(uint64_t id, const std::string& kind) {
  capnp::MallocMessageBuilder builder;
  auto request = builder.initRoot<api::Request>();
  request.setId(id);
  request.initWatch().setKind(kind);
  return to_bytes(builder);
}

inline std::string cancel_watch_request(uint64_t id, uint64_t watch) {
  capnp::MallocMessageBuilder builder;
  auto request = builder.initRoot<api::Request>();
  request.setId(id);
  request.setCancelWatch(watch);
  return to_bytes(builder);
}

}  // namespace caldera::testing
