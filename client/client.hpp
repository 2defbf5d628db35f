// A blocking client for caldera's Cap'n Proto API: connect, send a Request, read its Response.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "messages/api.capnp.h"
#include "messages/codec/flat.hpp"
#include "messages/model/result.hpp"

namespace caldera {

class Client {
 public:
  static constexpr const char* kMalformedResponse = "malformed response";

  // host:port, e.g. "127.0.0.1:7070". On a failure, `transient` (when given) says whether a
  // later try may succeed (refused, timed out, unreachable: the server may be starting), as
  // opposed to an address that cannot work.
  static Result<std::unique_ptr<Client>> connect(const std::string& server,
                                                 std::chrono::milliseconds timeout,
                                                 bool* transient = nullptr);
  ~Client();

  // Fills a Request (the id is set by the client), sends it and waits for the Response with the
  // same id. A failure is a transport problem (cannot connect, closed, timed out, malformed reply);
  // an error answered by the server is a Response whose union holds `errors`. A timeout says
  // that the request may still take effect. A malformed reply's message starts with
  // kMalformedResponse: asking again would not help.
  Result<std::unique_ptr<FlatReader>> call(
      const std::function<void(api::Request::Builder)>& fill,
      std::chrono::milliseconds timeout = std::chrono::seconds(30));

  // Streams (a watch): sends a Request without waiting and returns its id; next() then reads
  // the Responses that carry that id, one at a time (a watch's events, then its final answer).
  // Frames with another id are dropped. A failure is a transport problem, as for call(); a
  // timeout leaves the stream usable.
  Result<uint64_t> start(const std::function<void(api::Request::Builder)>& fill);
  Result<std::unique_ptr<FlatReader>> next(uint64_t id, std::chrono::milliseconds timeout);

  // Low level, for tests: raw bytes out, and the next whole frame in.
  Result<bool> send_raw(const std::string& bytes);
  Result<std::string> read_frame(std::chrono::milliseconds timeout);

 private:
  explicit Client(int fd);
  // Builds and sends a Request; returns the id it was given (whatever `sent` says).
  uint64_t send_request(const std::function<void(api::Request::Builder)>& fill, Result<bool>* sent);
  int fd_;
  uint64_t next_id_ = 1;
  std::string buffer_;
};

}  // namespace caldera
