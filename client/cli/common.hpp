// What every caldera CLI command shares: the global flags, one request with its error printing,
// and the output formats.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "messages/api.capnp.h"
#include "messages/flat.hpp"

namespace caldera {
class Client;
}

namespace caldera::cli {

// The flags every command takes, before or after its name (kubectl's global flags).
struct Globals {
  std::string server;
  std::string ns = "default";
  bool ns_given = false;  // -n was on the command line (submit sends it only then)
  std::string token;
  std::string output;  // -o; "" is the command's default
};

int64_t now_ms();

// Prints "error: MESSAGE" to stderr; returns 1, the exit code.
int fail(const std::string& message);

// call()'s exit code when the request may be retried: no connection, or "unavailable".
constexpr int kRetry = -2;

// One request; prints warnings and errors. Returns the response only when it is not an error.
// With may_retry, a failure that a retry can cure is silent and leaves kRetry in exit_code.
std::unique_ptr<FlatReader> call(const Globals& g,
                                 const std::function<void(api::Request::Builder)>& fill,
                                 int* exit_code, bool may_retry = false);
// The same on a connection already open, for commands that ask again and again (wait, logs -f).
std::unique_ptr<FlatReader> call(Client& client, const Globals& g,
                                 const std::function<void(api::Request::Builder)>& fill,
                                 int* exit_code, bool may_retry = false);

// Prints every error of an error response ("error (not found): path: message"); returns 1.
int print_errors(api::Response::Reader resp);

// The -o formats a command prints besides its default; the error when `output` is not one.
std::optional<std::string> output_error(const std::string& output,
                                        const std::vector<std::string>& formats,
                                        const std::string& command);

// -o json or -o yaml of one object or a List.
void print_json(const nlohmann::json& j, const std::string& output);
nlohmann::json list_of(nlohmann::json items);
// A table on stdout, or "No resources found." on stderr (as kubectl does).
void print_table(const std::string& table);
// -o name: "job.batch.volcano.sh/NAME".
void print_name(const std::string& resource, const std::string& name);

// kubectl's resource names, as -o name and the "created"/"deleted" lines print them.
inline constexpr const char* kJobResource = "job.batch.volcano.sh";
inline constexpr const char* kTemplateResource = "jobtemplate.flow.volcano.sh";
inline constexpr const char* kFlowResource = "jobflow.flow.volcano.sh";
inline constexpr const char* kPodResource = "pod";
inline constexpr const char* kNodeResource = "node";

}  // namespace caldera::cli
