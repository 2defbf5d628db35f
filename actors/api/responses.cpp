#include "actors/api/responses.hpp"

#include <capnp/message.h>

#include "messages/codec/flat.hpp"

namespace caldera {

capnp::ReaderOptions client_reader_options() {
  capnp::ReaderOptions o;
  o.traversalLimitInWords = 1u << 20;
  o.nestingLimit = 32;
  return o;
}

std::string unreadable_response(uint64_t id, const std::string& what) {
  // A well-formed request with too much in it (say a 10 MB text field) is too large, not
  // malformed: the client should hear the limit.
  if (what.find("traversal limit") != std::string::npos)
    return error_response(
        id, api::Error::Code::TOO_LARGE,
        "request too large: a request may hold at most " +
            std::to_string(client_reader_options().traversalLimitInWords * 8 >> 20) +
            " MiB of data");
  return error_response(id, api::Error::Code::MALFORMED, "malformed request: " + what);
}

void set_warnings(api::Response::Builder r, const std::vector<std::string>& warnings) {
  if (warnings.empty()) return;
  auto w = r.initWarnings(static_cast<unsigned>(warnings.size()));
  for (unsigned i = 0; i < warnings.size(); ++i) w.set(i, warnings[i]);
}

std::string error_response(uint64_t id, const std::vector<ApiError>& errors,
                           const std::vector<std::string>& warnings) {
  SmallMessageBuilder b;
  auto r = b.initRoot<api::Response>();
  r.setId(id);
  set_warnings(r, warnings);
  auto list = r.initErrors(static_cast<unsigned>(errors.size()));
  for (unsigned i = 0; i < errors.size(); ++i) {
    list[i].setCode(errors[i].code);
    list[i].setMessage(errors[i].message);
    list[i].setPath(errors[i].path);
  }
  return to_bytes(b);
}

std::string error_response(uint64_t id, api::Error::Code code, const std::string& message,
                           const std::string& path) {
  return error_response(id, {ApiError{code, message, path}});
}

std::vector<std::string> warning_lines(const Diagnostics& diags) {
  std::vector<std::string> out;
  for (const auto& w : diags.warnings) out.push_back(to_string(w));
  return out;
}

std::string diagnostics_response(uint64_t id, const Diagnostics& diags) {
  std::vector<ApiError> errors;
  for (const auto& e : diags.errors)
    errors.push_back({api::Error::Code::INVALID_ARGUMENT, e.message, e.path});
  return error_response(id, errors, warning_lines(diags));
}

std::string ok_response(uint64_t id) {
  SmallMessageBuilder b;
  auto r = b.initRoot<api::Response>();
  r.setId(id);
  r.setOk();
  return to_bytes(b);
}

}  // namespace caldera
