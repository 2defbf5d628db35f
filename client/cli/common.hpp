// What every caldera CLI command shares: the global flags, one request with its error printing,
// and the output formats.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "messages/api.capnp.h"
#include "messages/codec/flat.hpp"

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
  // --retry-for: how long a request waits for an unreachable coordinator (0: not at all), in
  // milliseconds and as the user wrote it.
  int64_t retry_for_ms = 30'000;
  std::string retry_for = "30s";
};

// Prints "error: MESSAGE" to stderr; returns 1, the exit code.
int fail(const std::string& message);

// How long call() waits out a coordinator that cannot be reached, and what it tells.
struct Retry {
  // false: one attempt (version, which reports what answers now).
  bool enabled = true;
  // Set to true when an attempt that failed may have been carried out all the same (the
  // coordinator had the request when it was lost, or the connection broke after it was sent),
  // for the writes that answer a retry differently then (delete, submit).
  bool* maybe_taken = nullptr;
  // Retries stop here too when set (wait's own deadline).
  std::optional<std::chrono::steady_clock::time_point> give_up_at;
};

// A connection to a gateway, opened again when it breaks. A request whose failure a wait for the
// coordinator can cure (cannot connect, the connection broke, or an `unavailable` answer about
// the coordinator) is sent again with a backoff of 200 ms doubling to 2 s, for up to
// --retry-for; meanwhile stderr says what it waits for, once and then every 5 s. Only reads and
// writes that act once however often they are sent may be retried (see write.cpp for delete and
// submit).
class Session {
 public:
  explicit Session(const Globals& g);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // The answer, error answers included (its warnings printed); nullptr when there is none: the
  // failure is printed and exit_code set.
  std::unique_ptr<FlatReader> exchange(const std::function<void(api::Request::Builder)>& fill,
                                       int* exit_code, const Retry& retry = {});
  // The same, but an error answer is printed (exit code 1) and not returned.
  std::unique_ptr<FlatReader> call(const std::function<void(api::Request::Builder)>& fill,
                                   int* exit_code, const Retry& retry = {});

 private:
  const Globals& g_;
  std::unique_ptr<Client> client_;
};

// One request on a connection of its own (Session::call).
std::unique_ptr<FlatReader> call(const Globals& g,
                                 const std::function<void(api::Request::Builder)>& fill,
                                 int* exit_code, const Retry& retry = {});

// Prints a response's warnings, each once per process (wait and logs -f ask again and again).
void print_warnings(api::Response::Reader resp);

// Prints every error of an error response ("error (not found): path: message"); returns 1.
int print_errors(api::Response::Reader resp);
int print_errors(capnp::List<api::Error>::Reader errors);

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

// Which of the two kinds named Job: Volcano's (batch.volcano.sh) or Kubernetes' (batch/v1).
enum class JobKind { Volcano, Batch };
// The kind's name in requests (ObjectRef.kind, ListFilter.kind, WatchRequest.kind).
inline constexpr const char* kBatchJobKind = "jobs.batch";

// kubectl's resource names, as -o name and the "created"/"deleted" lines print them.
inline constexpr const char* kJobResource = "job.batch.volcano.sh";
inline constexpr const char* kBatchJobResourceName = "job.batch";
inline constexpr const char* kPodGroupResource = "podgroup.scheduling.volcano.sh";
inline constexpr const char* kQueueResource = "queue.scheduling.volcano.sh";
inline constexpr const char* kPriorityClassResource = "priorityclass.scheduling.k8s.io";
inline constexpr const char* kTemplateResource = "jobtemplate.flow.volcano.sh";
inline constexpr const char* kFlowResource = "jobflow.flow.volcano.sh";
inline constexpr const char* kPodResource = "pod";
inline constexpr const char* kNodeResource = "node";

}  // namespace caldera::cli
