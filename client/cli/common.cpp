#include "client/cli/common.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <set>

#include "client/client.hpp"
#include "client/render.hpp"

namespace caldera::cli {
namespace {

using namespace std::chrono_literals;

std::string code_name(api::Error::Code c) {
  switch (c) {
    case api::Error::Code::INVALID_ARGUMENT:
      return "invalid";
    case api::Error::Code::NOT_FOUND:
      return "not found";
    case api::Error::Code::ALREADY_EXISTS:
      return "already exists";
    case api::Error::Code::UNAVAILABLE:
      return "unavailable";
    case api::Error::Code::INTERNAL:
      return "internal";
    case api::Error::Code::TOO_LARGE:
      return "too large";
    case api::Error::Code::MALFORMED:
      return "malformed";
    case api::Error::Code::UNAUTHENTICATED:
      return "unauthenticated";
    case api::Error::Code::FAILED_PRECONDITION:
      return "failed precondition";
    case api::Error::Code::UNIMPLEMENTED:
      return "unimplemented";
  }
  return "error";
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

}  // namespace

int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

int fail(const std::string& message) {
  std::cerr << "error: " << message << "\n";
  return 1;
}

int print_errors(api::Response::Reader resp) {
  for (auto e : resp.getErrors()) {
    std::cerr << "error (" << code_name(e.getCode()) << "): ";
    if (e.getPath().size()) std::cerr << e.getPath().cStr() << ": ";
    std::cerr << e.getMessage().cStr() << "\n";
  }
  return 1;
}

std::unique_ptr<FlatReader> call(const Globals& g,
                                 const std::function<void(api::Request::Builder)>& fill,
                                 int* exit_code, bool may_retry) {
  auto client = Client::connect(g.server, 5s);
  if (!client) {
    *exit_code = may_retry ? kRetry : fail(client.error());
    return nullptr;
  }
  return call(**client, g, fill, exit_code, may_retry);
}

std::unique_ptr<FlatReader> call(Client& client, const Globals& g,
                                 const std::function<void(api::Request::Builder)>& fill,
                                 int* exit_code, bool may_retry) {
  auto reply = client.call([&](api::Request::Builder r) {
    r.setToken(g.token);
    fill(r);
  });
  if (!reply) {
    *exit_code = may_retry ? kRetry : fail(reply.error());
    return nullptr;
  }
  auto resp = (*reply)->root<api::Response>();
  if (may_retry && resp.which() == api::Response::ERRORS && resp.getErrors().size() > 0 &&
      resp.getErrors()[0].getCode() == api::Error::Code::UNAVAILABLE) {
    *exit_code = kRetry;
    return nullptr;
  }
  // Once per process, as kubectl does: wait and logs -f ask again and again.
  static std::set<std::string> warned;
  for (auto w : resp.getWarnings())
    if (warned.insert(w.cStr()).second) std::cerr << "Warning: " << w.cStr() << "\n";
  if (resp.which() == api::Response::ERRORS) {
    *exit_code = print_errors(resp);
    return nullptr;
  }
  *exit_code = 0;
  return std::move(*reply);
}

std::optional<std::string> output_error(const std::string& output,
                                        const std::vector<std::string>& formats,
                                        const std::string& command) {
  if (output.empty() || std::find(formats.begin(), formats.end(), output) != formats.end())
    return std::nullopt;
  if (formats.empty())
    return command + " does not take -o (it has one output format); got -o " + output;
  // kubectl's other printers: named so that the user knows it is not a typo.
  const std::string kind = output.substr(0, output.find('='));
  for (const char* known :
       {"jsonpath", "jsonpath-as-json", "jsonpath-file", "go-template", "go-template-file",
        "template", "templatefile", "custom-columns", "custom-columns-file"})
    if (kind == known)
      return "output format \"" + kind + "\" is not supported by caldera; " + command +
             " prints -o " + joined(formats);
  return "unknown output format \"" + output + "\"; " + command + " prints -o " + joined(formats);
}

void print_json(const nlohmann::json& j, const std::string& output) {
  if (output == "yaml")
    std::cout << to_yaml(j);
  else
    std::cout << j.dump(4, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

nlohmann::json list_of(nlohmann::json items) {
  return {{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(items)}};
}

void print_table(const std::string& table) {
  if (table.rfind("No resources found", 0) == 0)
    std::cerr << table << "\n";
  else
    std::cout << table;
}

void print_name(const std::string& resource, const std::string& name) {
  std::cout << resource << "/" << name << "\n";
}

}  // namespace caldera::cli
