#include "node/client_bridge.hpp"

#include <chrono>
#include <deque>
#include <unordered_map>
#include <utility>

#include <kj/exception.h>
#include <caf/all.hpp>

#include "actors/api/responses.hpp"
#include "actors/protocol/atoms.hpp"
#include "messages/api.capnp.h"
#include "messages/flat.hpp"

namespace caldera {
namespace {

using Code = api::Error::Code;

using sweep_atom = caf::atom_constant<caf::atom("sweep")>;

// Requests waiting for the coordinator. One sweep a second answers the overdue ones: a timeout
// per request would wake CAF's clock thread for every request.
struct BridgeState {
  struct Waiting {
    uint64_t connection = 0;
    uint64_t id = 0;
  };
  std::unordered_map<uint64_t, Waiting> waiting;  // by the bridge's own number
  // Every request gets the same timeout, so deadlines come in the order requests do.
  std::deque<std::pair<std::chrono::steady_clock::time_point, uint64_t>> deadlines;
  uint64_t next = 0;
  bool sweeping = false;
  std::chrono::milliseconds timeout{0};
  static inline const char* name = "client_bridge";
};

using BridgeSelf = caf::stateful_actor<BridgeState>;

void sweep(BridgeSelf* self, const std::shared_ptr<ReplySink>& sink) {
  auto& st = self->state;
  auto now = std::chrono::steady_clock::now();
  while (!st.deadlines.empty() && st.deadlines.front().first <= now) {
    auto it = st.waiting.find(st.deadlines.front().second);
    st.deadlines.pop_front();
    if (it == st.waiting.end()) continue;  // answered
    sink->send(it->second.connection,
               error_response(it->second.id, Code::UNAVAILABLE,
                              "coordinator unavailable, retry: no answer within " +
                                  std::to_string(st.timeout.count()) + " ms"));
    st.waiting.erase(it);
  }
  st.sweeping = !st.deadlines.empty();
  if (st.sweeping) self->delayed_send(self, std::chrono::seconds(1), sweep_atom::value);
}

caf::behavior client_bridge(BridgeSelf* self, std::shared_ptr<ReplySink> sink,
                            caf::actor coordinator, std::string token,
                            std::chrono::milliseconds timeout) {
  self->state.timeout = timeout;
  return {
      [=](frame_atom, uint64_t connection, const std::string& frame) {
        uint64_t id = 0;
        try {
          capnp::ReaderOptions options;
          options.traversalLimitInWords = 1u << 20;
          options.nestingLimit = 32;
          FlatReader reader(frame, options);
          auto req = reader.root<api::Request>();
          id = req.getId();
          if (!token.empty() && req.getToken() != token) {
            sink->send(connection, error_response(id, Code::UNAUTHENTICATED,
                                                  "missing or wrong cluster token", "token"));
            return;
          }
        } catch (const kj::Exception& e) {
          sink->send(connection, error_response(id, Code::MALFORMED,
                                                std::string("malformed request: ") +
                                                    e.getDescription().cStr()));
          return;
        }
        auto& st = self->state;
        uint64_t n = ++st.next;
        st.waiting[n] = BridgeState::Waiting{connection, id};
        st.deadlines.emplace_back(std::chrono::steady_clock::now() + st.timeout, n);
        if (!st.sweeping) {
          st.sweeping = true;
          self->delayed_send(self, std::chrono::seconds(1), sweep_atom::value);
        }
        // An answer after the timeout finds its request answered already and is dropped.
        auto answer = [self, sink, n](std::string response) {
          auto it = self->state.waiting.find(n);
          if (it == self->state.waiting.end()) return;
          sink->send(it->second.connection, std::move(response));
          self->state.waiting.erase(it);
        };
        // Ahead of the coordinator's own traffic (a 10,000-pod job's pod events, say): a client
        // is answered within a bound whatever the cluster is busy with.
        self->request<caf::message_priority::high>(coordinator, caf::infinite, api_atom::value,
                                                   frame)
            .then([answer](const std::string& response) { answer(response); },
                  [self, answer, id](caf::error& err) {
                    answer(error_response(
                        id, Code::UNAVAILABLE,
                        "coordinator unavailable, retry: " + self->system().render(err)));
                  });
      },
      [=](sweep_atom) { sweep(self, sink); },
  };
}

}  // namespace

caf::actor spawn_client_bridge(caf::actor_system& sys, std::shared_ptr<ReplySink> sink,
                               caf::actor coordinator, std::string token,
                               std::chrono::milliseconds timeout) {
  return sys.spawn(client_bridge, std::move(sink), std::move(coordinator), std::move(token),
                   timeout);
}

}  // namespace caldera
