#include "actors/api/api_router.hpp"

#include <chrono>
#include <vector>

#include <capnp/message.h>
#include <kj/exception.h>
#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/api/apply.hpp"
#include "actors/api/responses.hpp"
#include "actors/protocol/atoms.hpp"
#include "actors/protocol/local_types.hpp"
#include "messages/codec/codec.hpp"
#include "messages/codec/flat.hpp"

namespace caldera {
namespace {

using namespace std::chrono_literals;
using Code = api::Error::Code;

struct RouterState {
  ApiRouterEnv env;
  std::string halted;  // why the coordinator acts on nothing; empty: it acts
  static inline const char* name = "api_router";
};

using RouterSelf = caf::stateful_actor<RouterState>;

// What a full disk refuses. A job's delete is let through: its pods' logs, which it frees, are
// most often what filled the disk (the job waits for the store to write again; flows and other
// objects write before they free anything).
bool refused_on_full_disk(api::Request::Which kind) {
  switch (kind) {
    case api::Request::SUBMIT_YAML:
    case api::Request::SUBMIT_JOB:
    case api::Request::SUBMIT_JOB_TEMPLATE:
    case api::Request::SUBMIT_JOB_FLOW:
    case api::Request::COMMAND:
    case api::Request::PATCH_JOB:
    case api::Request::DELETE_JOB_TEMPLATE:
    case api::Request::DELETE_JOB_FLOW:
    case api::Request::DELETE_QUEUE:
    case api::Request::DELETE_PRIORITY_CLASS:
    case api::Request::APPLY_YAML:
    case api::Request::OPERATE_QUEUE:
      return true;
    default:
      return false;
  }
}

std::string pong(const RouterState& st, uint64_t id) {
  SmallMessageBuilder b;
  auto r = b.initRoot<api::Response>();
  r.setId(id);
  auto p = r.initPong();
  p.setNode(st.env.node_name);
  p.setVersion("0.1.0");
  return to_bytes(b);
}

// The conf the coordinator's scheduler was started with: fixed for the process's life.
std::string scheduler_conf(const RouterState& st, uint64_t id) {
  SmallMessageBuilder b;
  auto r = b.initRoot<api::Response>();
  r.setId(id);
  r.setSchedulerConf(st.env.scheduler_conf);
  return to_bytes(b);
}

// The membership says who is there and alive; the scheduler what their pods hold.
caf::result<std::string> list_nodes(RouterSelf* self, uint64_t id) {
  auto rp = self->make_response_promise<std::string>();
  auto unavailable = [rp, id](caf::error&) mutable {
    rp.deliver(error_response(id, Code::UNAVAILABLE, "the node registry did not answer"));
  };
  self->request(self->state.env.membership, 10s, nodes_atom::value)
      .then(
          [self, rp, id, unavailable](std::vector<NodeInfo>& members) mutable {
            self->request(self->state.env.scheduler, 10s, nodes_atom::value)
                .then(
                    [rp, id, members](const std::vector<NodeInfo>& placed) mutable {
                      SmallMessageBuilder b;
                      auto r = b.initRoot<api::Response>();
                      r.setId(id);
                      auto list = r.initNodes(static_cast<unsigned>(members.size()));
                      unsigned i = 0;
                      for (auto& info : members) {
                        for (const auto& p : placed)
                          if (p.name == info.name) {
                            info.allocatable = p.allocatable;
                            info.allocated = p.allocated;
                            info.pods = p.pods;
                          }
                        encode(info, list[i++]);
                      }
                      rp.deliver(to_bytes(b));
                    },
                    unavailable);
          },
          unavailable);
  return rp;
}

// Not delegated: the answer comes back through this actor, whose requester may be a worker's
// link in another process (a response delegated to a remote requester was seen lost). Nor for
// the local bridge: a delegated request keeps its high priority, and would be handled at the
// directory ahead of the jobs' own messages (and out of order with watches, which are not).
template <class Handle>
caf::result<std::string> to_directory(RouterSelf* self, const Handle& directory, const char* who,
                                      uint64_t id, const std::string& bytes) {
  auto rp = self->make_response_promise<std::string>();
  // No timeout: the directory answers once what the request changes is durable.
  self->request(directory, caf::infinite, api_atom::value, bytes)
      .then([rp](std::string& response) mutable { rp.deliver(std::move(response)); },
            [self, rp, id, who](caf::error& e) mutable {
              rp.deliver(error_response(id, Code::UNAVAILABLE,
                                        std::string("the ") + who + " did not answer: " +
                                            self->system().render(e) + "; retry"));
            });
  return rp;
}

// Its own: (backup_atom, dir) -> "" or why not, to the one-off actor that copies the store.
using backup_atom = caf::atom_constant<caf::atom("backup")>;

// The longest backup directory path taken (Linux's PATH_MAX).
constexpr size_t kMaxBackupPath = 4096;

// The copy blocks for as long as it takes: on a thread of its own, not an actor worker's.
caf::result<std::string> backup(RouterSelf* self, uint64_t id, const std::string& dir) {
  if (dir.empty() || dir.front() != '/' || dir.size() > kMaxBackupPath ||
      dir.find('\0') != std::string::npos)
    return error_response(id, Code::INVALID_ARGUMENT,
                          "the backup directory must be an absolute path on the coordinator's "
                          "machine, at most 4096 bytes",
                          "backup");
  auto rp = self->make_response_promise<std::string>();
  auto store = self->state.env.store;
  auto copier = self->spawn<caf::detached>([store]() -> caf::behavior {
    return {[store](backup_atom, const std::string& to) { return store->checkpoint(to); }};
  });
  self->request(copier, caf::infinite, backup_atom::value, dir)
      .then(
          [self, rp, id, dir, copier](const std::string& error) mutable {
            self->send_exit(copier, caf::exit_reason::user_shutdown);
            if (!error.empty()) {
              spdlog::error("backup to {} failed: {}", dir, error);
              rp.deliver(error_response(id, Code::FAILED_PRECONDITION, error, "backup"));
              return;
            }
            spdlog::info("backup of the coordinator's store written to {}", dir);
            rp.deliver(ok_response(id));
          },
          [rp, id](caf::error&) mutable {
            rp.deliver(error_response(id, Code::INTERNAL, "the backup did not finish"));
          });
  return rp;
}

ApplyEnv apply_env(const RouterState& st) {
  return {st.env.directory, st.env.flows, st.env.scheduling, st.env.membership};
}

caf::result<std::string> route(RouterSelf* self, const std::string& bytes) {
  uint64_t id = 0;
  api::Request::Which kind;
  std::string backup_dir;
  std::string text, ns, action;  // an apply's documents and namespace; a queue operation's
  try {
    FlatReader reader(bytes, client_reader_options());
    auto req = reader.root<api::Request>();
    id = req.getId();
    kind = req.which();
    if (kind == api::Request::BACKUP) backup_dir = req.getBackup();
    if (kind == api::Request::APPLY_YAML) {
      auto t = req.getApplyYaml();
      text.assign(t.begin(), t.size());  // every byte, NULs included: the parser refuses them
      ns = req.getNamespace();
    }
    if (kind == api::Request::OPERATE_QUEUE) {
      text = req.getOperateQueue().getName();
      action = req.getOperateQueue().getAction();
    }
  } catch (const kj::Exception& e) {
    return unreadable_response(id, e.getDescription().cStr());
  }
  auto& st = self->state;
  // A halted coordinator (its store lost) answers nothing but who it is, what its nodes are and
  // how it schedules (none of which its store holds).
  if (!st.halted.empty() && kind != api::Request::PING && kind != api::Request::LIST_NODES &&
      kind != api::Request::GET_SCHEDULER_CONF)
    return error_response(id, Code::FAILED_PRECONDITION, st.halted);
  if (refused_on_full_disk(kind) && !st.env.store->writable()) {
    // Refused before anything is decided, so that nothing half done waits for the disk.
    auto h = st.env.store->health();
    return error_response(id, Code::UNAVAILABLE,
                          "the data dir is not writable, so nothing can change now (" + h.error +
                              "); reads still work; retry once space is freed");
  }
  switch (kind) {
    case api::Request::PING:
      return pong(st, id);
    case api::Request::LIST_NODES:
      return list_nodes(self, id);
    case api::Request::GET_SCHEDULER_CONF:
      return scheduler_conf(st, id);
    case api::Request::BACKUP:
      return backup(self, id, backup_dir);
    case api::Request::APPLY_YAML:
      return apply_yaml(self, apply_env(st), id, text, ns);
    case api::Request::OPERATE_QUEUE:
      return operate_queue(self, apply_env(st), id, text, action);
    case api::Request::GET_JOB_TEMPLATE:
    case api::Request::LIST_JOB_TEMPLATES:
    case api::Request::DELETE_JOB_TEMPLATE:
    case api::Request::GET_JOB_FLOW:
    case api::Request::LIST_JOB_FLOWS:
    case api::Request::DELETE_JOB_FLOW:
      return to_directory(self, st.env.flows, "flow directory", id, bytes);
    default:
      return to_directory(self, st.env.directory, "job directory", id, bytes);
  }
}

caf::behavior api_router(RouterSelf* self, ApiRouterEnv env) {
  self->state.env = std::move(env);
  return {
      [=](api_atom, const std::string& bytes) { return route(self, bytes); },
      [=](halt_atom, const std::string& why) {
        const auto& sender = self->current_sender();
        if (sender && sender->node() == self->node()) self->state.halted = why;
      },
      // Watches are the watch hub's: passed on with the bridge that streams them.
      [=](watch_atom a, const std::string& bytes, uint64_t stream, const caf::actor& bridge) {
        auto rp = self->make_response_promise<std::string>();
        if (!self->state.halted.empty()) {
          rp.deliver(error_response(0, Code::FAILED_PRECONDITION, self->state.halted));
          return rp;
        }
        self->request(self->state.env.watches, caf::infinite, a, bytes, stream, bridge)
            .then([rp](std::string& response) mutable { rp.deliver(std::move(response)); },
                  [self, rp](caf::error& e) mutable {
                    rp.deliver(error_response(
                        0, Code::UNAVAILABLE,
                        "the watch hub did not answer: " + self->system().render(e) + "; retry"));
                  });
        return rp;
      },
      [=](unwatch_atom a, const caf::actor& bridge, uint64_t stream) {
        self->send(self->state.env.watches, a, bridge, stream);
      },
  };
}

}  // namespace

caf::actor spawn_api_router(caf::actor_system& sys, ApiRouterEnv env) {
  return sys.spawn(api_router, std::move(env));
}

}  // namespace caldera
