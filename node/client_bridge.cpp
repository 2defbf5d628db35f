#include "node/client_bridge.hpp"

#include <chrono>
#include <deque>
#include <map>
#include <unordered_map>
#include <utility>

#include <kj/exception.h>
#include <caf/all.hpp>

#include "actors/api/responses.hpp"
#include "actors/protocol/atoms.hpp"
#include "messages/api.capnp.h"
#include "messages/codec/flat.hpp"

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
  // Watches, by the bridge's number of their request (the stream the directory sends to).
  struct Watch {
    uint64_t connection = 0;
    uint64_t id = 0;
  };
  std::unordered_map<uint64_t, Watch> watches;
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> watch_of;  // (connection, id) -> stream
  bool monitoring = false;  // the coordinator, once a watch needs it
  static inline const char* name = "client_bridge";
};

using BridgeSelf = caf::stateful_actor<BridgeState>;

// Forgets a watch; `tell`: the directory still serves it and is asked to stop.
void end_watch(BridgeSelf* self, const caf::actor& coordinator, uint64_t stream, bool tell) {
  auto& st = self->state;
  auto it = st.watches.find(stream);
  if (it == st.watches.end()) return;
  st.watch_of.erase({it->second.connection, it->second.id});
  st.watches.erase(it);
  st.waiting.erase(stream);  // its request was answered, or its client is gone
  if (tell) self->send(coordinator, unwatch_atom::value, caf::actor_cast<caf::actor>(self), stream);
}

size_t watches_of(const BridgeState& st, uint64_t connection) {
  size_t n = 0;
  for (auto it = st.watch_of.lower_bound({connection, 0});
       it != st.watch_of.end() && it->first.first == connection; ++it)
    ++n;
  return n;
}

// The watch's end, for a client still connected: its request gets its one answer at last.
void finish_watches(BridgeSelf* self, const std::shared_ptr<ReplySink>& sink,
                    const std::string& why) {
  auto& st = self->state;
  for (const auto& [stream, w] : st.watches) {
    st.waiting.erase(stream);  // answered here, not again by the sweep
    sink->send(w.connection, error_response(w.id, Code::UNAVAILABLE, why));
  }
  st.watches.clear();
  st.watch_of.clear();
}

void sweep(BridgeSelf* self, const std::shared_ptr<ReplySink>& sink,
           const caf::actor& coordinator) {
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
    end_watch(self, coordinator, it->first, true);
    st.waiting.erase(it);
  }
  st.sweeping = !st.deadlines.empty();
  if (st.sweeping) self->delayed_send(self, std::chrono::seconds(1), sweep_atom::value);
}

caf::behavior client_bridge(BridgeSelf* self, std::shared_ptr<ReplySink> sink,
                            caf::actor coordinator, std::string token,
                            std::chrono::milliseconds timeout) {
  self->state.timeout = timeout;
  self->set_down_handler([=](caf::down_msg&) {
    self->state.monitoring = false;
    finish_watches(self, sink, "the coordinator stopped: watch again once it is back");
  });
  return {
      [=](frame_atom, uint64_t connection, const std::string& frame) {
        uint64_t id = 0;
        auto kind = api::Request::PING;
        uint64_t cancel = 0;
        try {
          capnp::ReaderOptions options;
          options.traversalLimitInWords = 1u << 20;
          options.nestingLimit = 32;
          FlatReader reader(frame, options);
          auto req = reader.root<api::Request>();
          id = req.getId();
          kind = req.which();
          if (kind == api::Request::CANCEL_WATCH) cancel = req.getCancelWatch();
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
        if (kind == api::Request::CANCEL_WATCH) {
          auto w = st.watch_of.find({connection, cancel});
          if (w == st.watch_of.end()) {
            sink->send(connection, error_response(id, Code::NOT_FOUND,
                                                  "no watch with id " + std::to_string(cancel) +
                                                      " on this connection",
                                                  "cancelWatch"));
            return;
          }
          auto stream = w->second;
          // The watch request's own answer ends its stream; then the cancel's.
          sink->send(connection, ok_response(cancel));
          sink->send(connection, ok_response(id));
          end_watch(self, coordinator, stream, true);
          return;
        }
        const bool watch = kind == api::Request::WATCH;
        if (watch && watches_of(st, connection) >= kMaxWatchesPerConnection) {
          sink->send(connection, error_response(id, Code::UNAVAILABLE,
                                                "this connection has " +
                                                    std::to_string(kMaxWatchesPerConnection) +
                                                    " watches, its limit; cancel one first"));
          return;
        }
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
        if (watch) {
          if (st.watch_of.count({connection, id})) {
            sink->send(connection,
                       error_response(id, Code::ALREADY_EXISTS,
                                      "a watch with this id is open on this connection"));
            st.waiting.erase(n);
            return;
          }
          st.watches[n] = BridgeState::Watch{connection, id};
          st.watch_of[{connection, id}] = n;
          if (!st.monitoring) {  // its watches end with it
            st.monitoring = true;
            self->monitor(coordinator);
          }
          self->request<caf::message_priority::high>(coordinator, caf::infinite, watch_atom::value,
                                                     frame, n, caf::actor_cast<caf::actor>(self))
              .then(
                  [self, sink, n, coordinator](const std::string& response) mutable {
                    // Accepted: the watch stays open, its answer comes when it ends.
                    if (!self->state.waiting.erase(n)) return;  // timed out meanwhile
                    bool ok = false;
                    try {
                      FlatReader reader(response);
                      ok = reader.root<api::Response>().isOk();
                    } catch (const kj::Exception&) {
                    }
                    if (ok) return;
                    auto w = self->state.watches.find(n);
                    if (w != self->state.watches.end()) sink->send(w->second.connection, response);
                    end_watch(self, coordinator, n, false);
                  },
                  [self, sink, n, id, coordinator](caf::error& err) mutable {
                    auto it = self->state.waiting.find(n);
                    if (it == self->state.waiting.end()) return;
                    sink->send(it->second.connection,
                               error_response(id, Code::UNAVAILABLE,
                                              "coordinator unavailable, retry: " +
                                                  self->system().render(err)));
                    self->state.waiting.erase(it);
                    end_watch(self, coordinator, n, true);
                  });
          return;
        }
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
      [=](sweep_atom) { sweep(self, sink, coordinator); },
      [=](watch_event_atom, uint64_t stream, std::string& frame) {
        auto it = self->state.watches.find(stream);
        if (it != self->state.watches.end()) sink->push(it->second.connection, std::move(frame));
      },
      [=](closed_atom, uint64_t connection) {
        auto& st = self->state;
        std::vector<uint64_t> streams;
        for (auto it = st.watch_of.lower_bound({connection, 0});
             it != st.watch_of.end() && it->first.first == connection; ++it)
          streams.push_back(it->second);
        for (auto stream : streams) end_watch(self, coordinator, stream, true);
      },
      // From the coordinator link: the coordinator was lost, and every watch it served.
      [=](unwatch_atom) {
        finish_watches(self, sink, "the coordinator was lost: watch again once it is back");
      },
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
