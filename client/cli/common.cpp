#include "client/cli/common.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <set>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "client/client.hpp"
#include "client/render.hpp"
#include "common/clock.hpp"

namespace caldera::cli {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

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

// Retries start after this pause and double it up to kMaxPause (a client answers within a second
// of the coordinator's return); the waiting line is said again after kSayEvery.
constexpr std::chrono::milliseconds kFirstPause = 200ms;
constexpr std::chrono::milliseconds kMaxPause = 1s;
constexpr std::chrono::milliseconds kSayEvery = 5s;

// What an `unavailable` answer says about the coordinator, told by its words (the API has one
// code for every "retry later"). nullopt: it is not about the coordinator being out of reach (a
// full data dir, a job or pod that is not ready, too many connections): reported at once, as
// before --retry-for, since waiting seconds rarely cures those. Otherwise whether the request
// may have been carried out.
std::optional<bool> coordinator_unavailable(std::string_view message) {
  // A worker's gateway while its link to the coordinator is down: the request was not forwarded.
  if (message.find("cannot be reached from node") != std::string_view::npos) return false;
  // The coordinator was lost while it had the request ("... while it had the request"), did not
  // answer it, or the gateway gave up waiting for its answer ("coordinator unavailable, retry"):
  // it may have been carried out.
  if (message.find("coordinator") != std::string_view::npos) return true;
  return std::nullopt;
}

// The server's message without its closing "; retry": the waiting line says that it retries.
std::string without_retry(std::string message) {
  const std::string_view tail = "; retry";
  if (message.size() >= tail.size() &&
      message.compare(message.size() - tail.size(), tail.size(), tail) == 0)
    message.resize(message.size() - tail.size());
  return message;
}

// "1.2s"
std::string seconds(SteadyClock::duration d) {
  return fmt::format("{:.1f}s", std::chrono::duration<double>(d).count());
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

}  // namespace

int fail(const std::string& message) {
  std::cerr << "error: " << message << "\n";
  return 1;
}

int print_errors(api::Response::Reader resp) {
  return print_errors(resp.getErrors());
}

int print_errors(capnp::List<api::Error>::Reader errors) {
  for (auto e : errors) {
    std::cerr << "error (" << code_name(e.getCode()) << "): ";
    if (e.getPath().size()) std::cerr << e.getPath().cStr() << ": ";
    std::cerr << e.getMessage().cStr() << "\n";
  }
  return 1;
}

Session::Session(const Globals& g) : g_(g) {}

Session::~Session() = default;

std::unique_ptr<FlatReader> Session::exchange(
    const std::function<void(api::Request::Builder)>& fill, int* exit_code, const Retry& retry) {
  const auto start = SteadyClock::now();
  auto give_up = start + std::chrono::milliseconds(g_.retry_for_ms);
  const bool own_deadline = retry.give_up_at && *retry.give_up_at < give_up;
  if (own_deadline) give_up = *retry.give_up_at;
  auto pause = kFirstPause;
  std::optional<SteadyClock::time_point> said;  // when the waiting line was last printed
  for (;;) {
    std::unique_ptr<FlatReader> reply;
    std::string error;       // no reply: why
    bool transient = false;  // ... and a retry may cure it
    bool maybe_taken = false;
    if (!client_) {
      auto connected = Client::connect(g_.server, 5s, &transient);
      if (connected)
        client_ = std::move(*connected);
      else
        error = connected.error();  // nothing was sent
    }
    if (client_) {
      auto r = client_->call([&](api::Request::Builder b) {
        b.setToken(g_.token);
        fill(b);
      });
      if (r) {
        reply = std::move(*r);
      } else {
        client_.reset();  // broken or out of step: the next attempt connects again
        error = r.error();
        transient = error.rfind(Client::kMalformedResponse, 0) != 0;
        maybe_taken = true;  // the request went out; the server may have carried it out
      }
    }
    std::string waiting_for;  // empty: this attempt's outcome is final
    if (reply) {
      auto resp = reply->root<api::Response>();
      if (resp.which() == api::Response::ERRORS && resp.getErrors().size() > 0 &&
          resp.getErrors()[0].getCode() == api::Error::Code::UNAVAILABLE) {
        std::string message = resp.getErrors()[0].getMessage();
        if (auto taken = coordinator_unavailable(message)) {
          waiting_for = "the coordinator (unavailable: " + without_retry(message) + ")";
          maybe_taken = *taken;
        }
      }
    } else if (transient) {
      waiting_for = "the server (" + error + ")";
    }
    if (maybe_taken && retry.maybe_taken) *retry.maybe_taken = true;
    const auto now = SteadyClock::now();
    if (waiting_for.empty() && reply) {
      print_warnings(reply->root<api::Response>());
      *exit_code = 0;
      return reply;
    }
    if (waiting_for.empty() || !retry.enabled || now >= give_up) {
      if (reply) {
        print_warnings(reply->root<api::Response>());
        *exit_code = print_errors(reply->root<api::Response>());
      } else {
        *exit_code = fail(error);
      }
      if (said)
        std::cerr << fmt::format(
            "gave up after {} of retries ({})\n", seconds(now - start),
            own_deadline ? "the command's --timeout" : "--retry-for " + g_.retry_for);
      return nullptr;
    }
    if (!said) {
      std::cerr << "waiting for " << waiting_for << "; retrying for up to "
                << (own_deadline ? seconds(give_up - start) : g_.retry_for) << "\n";
      said = now;
    } else if (now - *said >= kSayEvery) {
      std::cerr << "still waiting for " << waiting_for << "; " << seconds(now - start)
                << " so far, retrying for up to "
                << (own_deadline ? seconds(give_up - start) : g_.retry_for) << "\n";
      said = now;
    }
    std::this_thread::sleep_for(std::min<SteadyClock::duration>(pause, give_up - now));
    pause = std::min<std::chrono::milliseconds>(pause * 2, kMaxPause);
  }
}

std::unique_ptr<FlatReader> Session::call(const std::function<void(api::Request::Builder)>& fill,
                                          int* exit_code, const Retry& retry) {
  auto reply = exchange(fill, exit_code, retry);
  if (!reply) return nullptr;
  auto resp = reply->root<api::Response>();
  if (resp.which() == api::Response::ERRORS) {
    *exit_code = print_errors(resp);
    return nullptr;
  }
  return reply;
}

std::unique_ptr<FlatReader> call(const Globals& g,
                                 const std::function<void(api::Request::Builder)>& fill,
                                 int* exit_code, const Retry& retry) {
  Session session(g);
  return session.call(fill, exit_code, retry);
}

void print_warnings(api::Response::Reader resp) {
  // Once per process, as kubectl does: wait and logs -f ask again and again.
  static std::set<std::string> warned;
  for (auto w : resp.getWarnings())
    if (warned.insert(w.cStr()).second) std::cerr << "Warning: " << w.cStr() << "\n";
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
