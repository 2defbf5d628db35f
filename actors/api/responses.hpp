// Builds client Responses (api.capnp) as bytes: errors, acknowledgements and small results.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <capnp/message.h>

#include "messages/api.capnp.h"
#include "messages/model/diagnostic.hpp"

namespace caldera {

// Client input: a request must not make us walk more than 8 MiB of pointers or nest deeper than 32.
capnp::ReaderOptions client_reader_options();

// The answer to a request Cap'n Proto could not read (`what`: its exception's description): too
// large past the traversal limit, else malformed.
std::string unreadable_response(uint64_t id, const std::string& what);

struct ApiError {
  api::Error::Code code;
  std::string message;
  std::string path;
};

std::string error_response(uint64_t id, const std::vector<ApiError>& errors,
                           const std::vector<std::string>& warnings = {});
std::string error_response(uint64_t id, api::Error::Code code, const std::string& message,
                           const std::string& path = {});
// Every error of diags as invalidArgument with its path; warnings ride along.
std::string diagnostics_response(uint64_t id, const Diagnostics& diags);
std::string ok_response(uint64_t id);
// The answer's warnings, when there are any.
void set_warnings(api::Response::Builder r, const std::vector<std::string>& warnings);
std::vector<std::string> warning_lines(const Diagnostics& diags);

}  // namespace caldera
