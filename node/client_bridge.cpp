#include "node/client_bridge.hpp"

#include <chrono>

#include <kj/exception.h>
#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "actors/coordinator/responses.hpp"
#include "messages/api.capnp.h"
#include "messages/flat.hpp"

namespace caldera {
namespace {

using Code = api::Error::Code;

caf::behavior client_bridge(caf::event_based_actor* self, std::shared_ptr<ReplySink> sink,
                            caf::actor coordinator, std::string token) {
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
        self->request(coordinator, std::chrono::seconds(60), api_atom::value, frame)
            .then([=](const std::string& response) { sink->send(connection, response); },
                  [=](caf::error& err) {
                    sink->send(connection, error_response(id, Code::UNAVAILABLE,
                                                          "coordinator unavailable, retry: " +
                                                              self->system().render(err)));
                  });
      },
  };
}

}  // namespace

caf::actor spawn_client_bridge(caf::actor_system& sys, std::shared_ptr<ReplySink> sink,
                               caf::actor coordinator, std::string token) {
  return sys.spawn(client_bridge, std::move(sink), std::move(coordinator), std::move(token));
}

}  // namespace caldera
