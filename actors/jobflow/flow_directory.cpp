#include "actors/jobflow/flow_directory.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include <kj/exception.h>
#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/api/responses.hpp"
#include "actors/directory/stored_jobs.hpp"
#include "actors/jobflow/core/flow_job.hpp"
#include "actors/jobflow/core/flow_submission.hpp"
#include "actors/jobflow/flow_actor.hpp"
#include "actors/jobflow/flow_records.hpp"
#include "actors/protocol/atoms.hpp"
#include "actors/store/pending_commits.hpp"
#include "common/clock.hpp"
#include "messages/admission/admission.hpp"
#include "messages/admission/flow_admission.hpp"
#include "messages/codec/flat.hpp"

namespace caldera {
namespace {

using Code = api::Error::Code;
using EventType = api::WatchEvent::Type;
using namespace std::chrono_literals;

// A flow with an actor. A finished one has none once nothing is left for it to do
// (passivation): the store holds it, and a change of one of its jobs wakes it.
struct LiveFlow {
  protocol::jobflow actor;
  std::string uid;
  // Asked to stop: what would go to it meanwhile waits here, and runs again once it has
  // answered (to the flow woken again, or to the actor that did not stop).
  bool stopping = false;
  std::vector<std::function<void()>> parked = {};
};

using Waiters = std::vector<std::function<void(const std::string&)>>;

struct FlowDirectoryState {
  FlowDirectoryEnv env;
  protocol::directory jobs;               // the job directory: creates and deletes the jobs
  std::map<std::string, LiveFlow> live;   // by JobFlow key
  std::set<std::string> taken_templates;  // admitted or being stored: the names are taken
  std::set<std::string> taken_flows;
  // Flow deletes under way, with the callers waiting for each: a second delete (a client's
  // retry) joins the first instead of racing it.
  std::map<std::string, Waiters> deleting;
  PendingCommits commits;
  static inline const char* name = "flow_directory";
};

using DirSelf = caf::stateful_actor<FlowDirectoryState>;

void commit_then(DirSelf* self, std::vector<Write> writes,
                 std::function<void(const std::string& error)> then) {
  self->state.commits.commit(caf::actor_cast<caf::actor>(self), *self->state.env.store,
                             std::move(writes), std::move(then));
}

void publish(DirSelf* self, const JobFlow& flow, EventType type) {
  if (self->state.env.watches)
    self->send(self->state.env.watches, flow_event_atom::value, flow, static_cast<int32_t>(type));
}

void count_actor(FlowDirectoryState& st, bool started, bool why) {
  if (!st.env.metrics) return;
  if (started)
    st.env.metrics->flow_actor_started(why);
  else
    st.env.metrics->flow_actor_stopped(why);
}

// `woken`: a finished flow's actor started again.
protocol::jobflow start_flow(DirSelf* self, const JobFlow& flow, bool woken = false) {
  auto& st = self->state;
  count_actor(st, true, woken);
  auto actor =
      spawn_flow_actor(self->system(), flow,
                       FlowActorEnv{st.env.store, caf::actor_cast<protocol::flow_directory>(self),
                                    st.jobs, st.env.watches, st.env.metrics});
  st.live[flow.spec.key()] = LiveFlow{actor, flow.uid};
  return actor;
}

// After a stop, a running flow hears its ended jobs' status from here: their actors have
// stopped, and its record may predate their end (the coordinator stopped between the two
// writes). Sent before anything their actors say, so nothing newer is overtaken.
void tell_stored_jobs(DirSelf* self, const JobFlow& flow, const protocol::jobflow& actor) {
  for (const auto& [name, entry] : job_entries(flow.spec)) {
    auto stored = load_stored_job_rows(*self->state.env.store, flow.spec.namespace_ + "/" + name);
    if (!stored || !*stored || !created_by((*stored)->job.spec, flow)) continue;
    const auto& job = (*stored)->job;
    self->send(actor, job_status_atom::value, job.spec.name, job.uid, job.created_ms, job.status);
  }
}

// Runs `fn` with the actor of the flow `key` (this very flow, by uid), woken from the store if
// it has stopped. Nothing runs for a flow that is gone, or being deleted (its jobs go too).
void with_flow(DirSelf* self, const std::string& key, const std::string& uid,
               std::function<void(const protocol::jobflow&)> fn) {
  auto& st = self->state;
  if (auto it = st.live.find(key); it != st.live.end()) {
    if (it->second.stopping)
      it->second.parked.emplace_back([=] { with_flow(self, key, uid, fn); });
    else if (it->second.uid == uid)
      fn(it->second.actor);
    return;
  }
  if (st.deleting.count(key)) return;
  auto flow = load_stored<JobFlow>(*st.env.store, key);
  if (!flow || flow->uid != uid || flow->status.phase == "Terminating") return;
  fn(start_flow(self, *flow, true));
}

// A finished, idle flow's actor offers to stop; it answers whether it still may.
void passivate(DirSelf* self, const std::string& key, const std::string& uid) {
  auto it = self->state.live.find(key);
  if (it == self->state.live.end() || it->second.uid != uid || it->second.stopping ||
      it->second.actor.address() != self->current_sender())
    return;
  it->second.stopping = true;
  auto actor = it->second.actor;
  auto resolve = [self, key, actor](bool stopped) {
    auto it = self->state.live.find(key);
    if (it == self->state.live.end() || it->second.actor != actor) return;
    auto waiting = std::move(it->second.parked);
    if (stopped) {
      self->state.live.erase(it);
      count_actor(self->state, false, true);
    } else
      it->second.stopping = false;
    for (auto& fn : waiting) fn();
  };
  self->request(actor, caf::infinite, stop_atom::value)
      .then([resolve](bool stopped) { resolve(stopped); },
            [resolve](caf::error&) { resolve(true); });  // gone: as good as stopped
}

// ---- admission and creation (the job directory's submissions) ----

FlowDocuments admit_documents(DirSelf* self, FlowDocuments docs) {
  auto& st = self->state;
  auto& store = *st.env.store;
  FlowNames names{[&](const std::string& key) {
                    return st.taken_templates.count(key) > 0 || store.get(Family::Templates, key);
                  },
                  [&](const std::string& key) {
                    return st.taken_flows.count(key) > 0 || store.get(Family::Flows, key);
                  },
                  [&](const std::string& key) -> std::optional<JobSpec> {
                    auto t = load_stored<JobTemplate>(store, key);
                    if (!t) return std::nullopt;
                    return std::move(t->spec);
                  }};
  admit_flow_objects(docs, names);
  if (docs.diags.ok()) {
    for (const auto& t : docs.templates) st.taken_templates.insert(t.value.key());
    for (const auto& f : docs.flows) st.taken_flows.insert(f.value.key());
  }
  return docs;
}

caf::result<std::string> create(DirSelf* self, std::vector<JobTemplate> templates,
                                std::vector<JobFlow> flows) {
  std::vector<Write> writes;
  for (const auto& t : templates)
    writes.push_back({Family::Templates, t.spec.key(), FlowKind<JobTemplate>::record(t)});
  for (const auto& f : flows)
    writes.push_back({Family::Flows, f.spec.key(), FlowKind<JobFlow>::record(f)});
  auto rp = self->make_response_promise<std::string>();
  commit_then(self, std::move(writes),
              [self, templates, flows, rp](const std::string& error) mutable {
                auto& st = self->state;
                for (const auto& t : templates) {
                  st.taken_templates.erase(t.spec.key());
                  if (error.empty()) spdlog::info("jobtemplate={} accepted", t.spec.key());
                }
                // A flow waiting for a template looks again.
                if (error.empty() && !templates.empty())
                  for (const auto& [key, flow] : st.live)
                    if (!flow.stopping) self->send(flow.actor, sync_atom::value);
                for (const auto& f : flows) {
                  st.taken_flows.erase(f.spec.key());
                  if (!error.empty()) continue;
                  spdlog::info("jobflow={} accepted", f.spec.key());
                  start_flow(self, f);
                  publish(self, f, EventType::ADDED);
                }
                rp.deliver(error);
              });
  return rp;
}

// ---- updates (caldera apply) ----

// A JobTemplate changes whole, as Volcano lets it: a flow's jobs made from now on use the new
// spec; its jobs made already keep theirs.
caf::result<ApplyOutcome> update_template(DirSelf* self, JobSpec applied,
                                          const AdmissionContext& context) {
  auto& st = self->state;
  const auto key = applied.key();
  auto stored =
      st.taken_templates.count(key) ? std::nullopt : load_stored<JobTemplate>(*st.env.store, key);
  if (!stored) return ApplyOutcome{};
  ApplyOutcome out{true, false, stored->uid, {}};
  apply_defaults(applied);
  admit(applied, context, out.diags);
  if (!out.diags.ok() || applied == stored->spec) return out;
  JobTemplate next{stored->uid, stored->created_ms, std::move(applied)};
  auto rp = self->make_response_promise<ApplyOutcome>();
  auto record = FlowKind<JobTemplate>::record(next);
  commit_then(self, {Write{Family::Templates, key, std::move(record)}},
              [self, key, rp, out](const std::string& error) mutable {
                if (error.empty()) {
                  spdlog::info("jobtemplate={} updated", key);
                  out.changed = true;
                  // A flow waiting for its template's tasks looks again.
                  for (const auto& [k, flow] : self->state.live)
                    if (!flow.stopping) self->send(flow.actor, sync_atom::value);
                } else {
                  out.diags.error("", "the JobTemplate was not stored: " + error);
                }
                rp.deliver(out);
              });
  return rp;
}

// A JobFlow's DAG is fixed once it runs (Volcano's controller reads it at creation): the same
// document is unchanged, another is refused.
ApplyOutcome update_flow(DirSelf* self, JobFlowSpec applied) {
  auto& st = self->state;
  const auto key = applied.key();
  auto stored = st.taken_flows.count(key) ? std::nullopt : load_stored<JobFlow>(*st.env.store, key);
  if (!stored) return ApplyOutcome{};
  ApplyOutcome out{true, false, stored->uid, {}};
  apply_defaults(applied);
  if (!(applied == stored->spec))
    out.diags.error("spec",
                    "a JobFlow's spec cannot change once created; delete the JobFlow "
                    "and create it again (its jobs go with it unless jobRetainPolicy is "
                    "retain)");
  return out;
}

using CreateReply = caf::result<std::string, int64_t, std::string, bool>;

CreateReply refuse(std::string why, bool wait) {
  return CreateReply(std::string(), int64_t{0}, std::move(why), wait);
}

// A flow's actor asks for its entry's job: built here from the entry's JobTemplate, created by
// the job directory (which answers for one that exists already).
CreateReply flow_create(DirSelf* self, const std::string& flow_key, const std::string& flow_uid,
                        const std::string& entry) {
  auto& st = self->state;
  // Only the flow's own live actor creates: one that a delete has stopped (its request may
  // still be queued here) must not leave a job behind that nothing owns.
  auto it = st.live.find(flow_key);
  if (it == st.live.end() || it->second.uid != flow_uid ||
      it->second.actor.address() != self->current_sender())
    return refuse("the JobFlow no longer exists", false);
  auto flow = load_stored<JobFlow>(*st.env.store, flow_key);
  if (!flow || flow->uid != flow_uid) return refuse("the JobFlow no longer exists", false);
  auto tmpl = load_stored<JobTemplate>(*st.env.store, flow->spec.namespace_ + "/" + entry);
  if (!tmpl)
    return refuse("JobTemplate " + entry + " not found in namespace " + flow->spec.namespace_,
                  true);
  auto made = flow_job_spec(*flow, entry, *tmpl);
  if (!made) return refuse(made.error(), false);
  auto rp = self->make_response_promise<std::string, int64_t, std::string, bool>();
  self->request(st.jobs, caf::infinite, flow_create_atom::value, flow_key, flow_uid,
                std::move(*made))
      .then(
          [rp](std::string& uid, int64_t created_ms, std::string& error, bool wait) mutable {
            rp.deliver(std::move(uid), created_ms, std::move(error), wait);
          },
          [self, rp](caf::error& err) mutable {
            rp.deliver(std::string(), int64_t{0},
                       "the job directory did not answer: " + self->system().render(err), true);
          });
  return rp;
}

// ---- deletes ----

// A JobTemplate is gone once its record's delete is durable. While it is in flight the record
// stays, so a new one of the same name is refused rather than written before this delete.
caf::result<std::string> delete_template(DirSelf* self, uint64_t id, api::ObjectRef::Reader ref) {
  auto key = ref_key(ref);
  if (!self->state.env.store->get(Family::Templates, key))
    return not_found_response<JobTemplate>(id, ref);
  auto rp = self->make_response_promise<std::string>();
  commit_then(self, {Write{Family::Templates, key, std::nullopt}},
              [rp, id, key](const std::string& error) mutable {
                if (!error.empty()) {
                  rp.deliver(error_response(id, Code::INTERNAL, "delete failed: " + error));
                  return;
                }
                spdlog::info("jobtemplate={} deleted", key);
                rp.deliver(ok_response(id));
              });
  return rp;
}

void answer_delete(DirSelf* self, const std::string& key, const std::string& error) {
  auto waiters = std::move(self->state.deleting[key]);
  self->state.deleting.erase(key);
  for (auto& w : waiters) w(error);
}

// The end of a flow's delete, once its Terminating phase is durable: its jobs go, then its
// record. After a restart it goes on from there.
void finish_delete(DirSelf* self, const JobFlow& flow) {
  const auto key = flow.spec.key();
  std::vector<std::string> jobs;
  for (const auto& [name, entry] : job_entries(flow.spec))
    jobs.push_back(flow.spec.namespace_ + "/" + name);
  auto fail = [self, key](const std::string& why) { answer_delete(self, key, why); };
  self->request(self->state.jobs, caf::infinite, flow_delete_atom::value, key, flow.uid,
                std::move(jobs))
      .then(
          [self, flow, key, fail](const std::string& error) {
            if (!error.empty()) {
              fail("deleting the flow's jobs: " + error);
              return;
            }
            commit_then(self, {Write{Family::Flows, key, std::nullopt}},
                        [self, flow, key, fail](const std::string& error) {
                          if (!error.empty()) {
                            fail("delete failed: " + error);
                            return;
                          }
                          spdlog::info("jobflow={} deleted", key);
                          publish(self, flow, EventType::DELETED);
                          answer_delete(self, key, "");
                        });
          },
          [self, fail](caf::error& err) {
            fail("deleting the flow's jobs: " + self->system().render(err));
          });
}

// Its phase becomes Terminating, durably (a restart does not bring the flow back to create what
// is being deleted), then finish_delete.
void terminate(DirSelf* self, const std::string& key) {
  auto flow = load_stored<JobFlow>(*self->state.env.store, key);
  if (!flow) {
    answer_delete(self, key, "");  // gone meanwhile
    return;
  }
  if (flow->status.phase == "Terminating") {
    finish_delete(self, *flow);
    return;
  }
  spdlog::info("jobflow={} phase=Terminating from={}", key, flow->status.phase);
  flow->status.phase = "Terminating";
  flow->status.last_transition_ms = system_now_ms();
  auto record = FlowKind<JobFlow>::record(*flow);
  commit_then(self, {Write{Family::Flows, key, std::move(record)}},
              [self, key, flow = *flow](const std::string& error) {
                if (!error.empty()) {
                  answer_delete(self, key, "delete failed: " + error);
                  return;
                }
                publish(self, flow, EventType::MODIFIED);
                finish_delete(self, flow);
              });
}

// The flow's actor stops first: its last write lands before Terminating is written.
void stop_then_terminate(DirSelf* self, const std::string& key) {
  auto& st = self->state;
  auto it = st.live.find(key);
  if (it == st.live.end()) {
    terminate(self, key);
    return;
  }
  if (it->second.stopping) {
    it->second.parked.emplace_back([=] { stop_then_terminate(self, key); });
    return;
  }
  auto handle = it->second.actor;
  st.live.erase(it);
  count_actor(st, false, false);
  self->request(handle, 30s, delete_atom::value)
      .then([self, key](caf::ok_atom) { terminate(self, key); },
            [self, key, handle](caf::error&) {
              // It did not answer: stopped for good, it writes nothing after Terminating (a
              // write it queued before is applied first: the store writes in order).
              self->send_exit(handle, caf::exit_reason::kill);
              terminate(self, key);
            });
}

// A JobFlow's delete: its actor stops, its phase becomes Terminating, its jobs go whatever its
// jobRetainPolicy, then its record.
caf::result<std::string> delete_flow(DirSelf* self, uint64_t id, api::ObjectRef::Reader ref) {
  auto key = ref_key(ref);
  if (!self->state.env.store->get(Family::Flows, key)) return not_found_response<JobFlow>(id, ref);
  auto rp = self->make_response_promise<std::string>();
  auto& waiting = self->state.deleting[key];
  waiting.push_back([rp, id](const std::string& error) mutable {
    rp.deliver(error.empty() ? ok_response(id) : error_response(id, Code::INTERNAL, error));
  });
  if (waiting.size() == 1) stop_then_terminate(self, key);  // else it joins the one under way
  return rp;
}

caf::result<std::string> handle_api(DirSelf* self, const std::string& bytes) {
  uint64_t id = 0;
  try {
    FlatReader reader(bytes, client_reader_options());
    auto req = reader.root<api::Request>();
    id = req.getId();
    auto& store = *self->state.env.store;
    switch (req.which()) {
      case api::Request::GET_JOB_TEMPLATE:
        return get_response<JobTemplate>(id, store, req.getGetJobTemplate());
      case api::Request::LIST_JOB_TEMPLATES:
        return list_response<JobTemplate>(id, store, req.getListJobTemplates());
      case api::Request::DELETE_JOB_TEMPLATE:
        return delete_template(self, id, req.getDeleteJobTemplate());
      case api::Request::GET_JOB_FLOW:
        return get_response<JobFlow>(id, store, req.getGetJobFlow());
      case api::Request::LIST_JOB_FLOWS:
        return list_response<JobFlow>(id, store, req.getListJobFlows());
      case api::Request::DELETE_JOB_FLOW:
        return delete_flow(self, id, req.getDeleteJobFlow());
      default:
        break;
    }
    // The router sends only the kinds above: another is its mistake, not the client's.
    return error_response(id, Code::INTERNAL,
                          "the flow directory was sent a request that is not about a JobTemplate "
                          "or JobFlow (kind " +
                              std::to_string(static_cast<int>(req.which())) + ")");
  } catch (const kj::Exception& e) {
    return unreadable_response(id, e.getDescription().cStr());
  }
}

// Up to three of the JobTemplates that name `name` as their queue (or priority class).
caf::result<int32_t, std::vector<std::string>> users_of(DirSelf* self, const std::string& name,
                                                        bool queue) {
  int32_t count = 0;
  std::vector<std::string> keys;
  for (const auto& t : load_all_stored<JobTemplate>(*self->state.env.store, "")) {
    if (queue ? t.spec.queue != name : !names_priority_class(t.spec, name)) continue;
    if (++count <= 3) keys.push_back("jobtemplate " + t.spec.key());
  }
  return caf::result<int32_t, std::vector<std::string>>(count, std::move(keys));
}

// ---- start ----

// Whether a finished flow still has work a stop may have cut short: its jobs' delete under
// jobRetainPolicy delete.
bool has_work_left(Store& store, const JobFlow& flow) {
  if (flow.status.phase != "Succeed" || flow.spec.job_retain_policy != "delete") return false;
  for (const auto& [name, entry] : job_entries(flow.spec))
    if (stored_job_exists(store, flow.spec.namespace_ + "/" + name)) return true;
  return false;
}

void recover(DirSelf* self) {
  auto& st = self->state;
  size_t started = 0, stored = 0;
  for (auto& flow : load_all_stored<JobFlow>(*st.env.store, "")) {
    ++stored;
    const auto key = flow.spec.key();
    if (flow.status.phase == "Terminating") {
      // Deleted when the coordinator stopped: no actor. A client's delete meanwhile joins it.
      st.deleting[key].push_back([key](const std::string& error) {
        if (!error.empty())
          spdlog::error("jobflow={} delete: {}; delete it again to retry", key, error);
      });
      terminate(self, key);
      continue;
    }
    auto phase = parse_flow_phase(flow.status.phase);
    if (phase && is_finished(*phase) && !has_work_left(*st.env.store, flow)) continue;
    tell_stored_jobs(self, flow, start_flow(self, flow));
    ++started;
  }
  if (stored) spdlog::info("coordinator recovered jobflows={} running={}", stored, started);
}

caf::behavior running(DirSelf* self) {
  return {
      [=](api_atom, const std::string& bytes) { return handle_api(self, bytes); },
      [=](admit_atom, FlowDocuments& docs) { return admit_documents(self, std::move(docs)); },
      [=](create_atom, std::vector<JobTemplate>& templates, std::vector<JobFlow>& flows) {
        return create(self, std::move(templates), std::move(flows));
      },
      [=](update_atom, JobSpec& applied, const AdmissionContext& context) {
        return update_template(self, std::move(applied), context);
      },
      [=](update_atom, JobFlowSpec& applied) { return update_flow(self, std::move(applied)); },
      [=](release_atom, const std::vector<std::string>& templates,
          const std::vector<std::string>& flows) {
        for (const auto& k : templates) self->state.taken_templates.erase(k);
        for (const auto& k : flows) self->state.taken_flows.erase(k);
      },
      [=](flow_create_atom, const std::string& flow_key, const std::string& flow_uid,
          const std::string& entry) { return flow_create(self, flow_key, flow_uid, entry); },
      [=](job_status_atom a, const std::string& flow_key, const std::string& flow_uid,
          const std::string& job, const std::string& uid, int64_t created_ms,
          const JobStatus& status) {
        with_flow(self, flow_key, flow_uid, [=](const protocol::jobflow& flow) {
          self->send(flow, a, job, uid, created_ms, status);
        });
      },
      [=](job_gone_atom a, const std::string& flow_key, const std::string& flow_uid,
          const std::string& job, const std::string& uid) {
        with_flow(self, flow_key, flow_uid,
                  [=](const protocol::jobflow& flow) { self->send(flow, a, job, uid); });
      },
      [=](passivate_atom, const std::string& key, const std::string& uid) {
        passivate(self, key, uid);
      },
      [=](users_atom, const std::string& name, bool queue) { return users_of(self, name, queue); },
      [=](committed_atom, uint64_t seq, const std::string& error) {
        self->state.commits.done(seq, error);
      },
  };
}

caf::behavior flow_directory(DirSelf* self, FlowDirectoryEnv env) {
  self->state.env = std::move(env);
  // Flow actors are not linked (one failing must not take the coordinator down), so a shutdown
  // is passed on to them explicitly.
  self->set_exit_handler([=](caf::exit_msg& msg) {
    for (auto& [key, flow] : self->state.live) self->send_exit(flow.actor, msg.reason);
    self->quit(msg.reason);
  });
  // Nothing is handled before the job directory is known: flows create and delete through it.
  self->set_default_handler(caf::skip);
  return {
      [=](coordinator_atom, const caf::actor& jobs) {
        self->state.jobs = caf::actor_cast<protocol::directory>(jobs);
        self->set_default_handler(caf::print_and_drop);
        recover(self);
        self->become(running(self));
      },
  };
}

}  // namespace

protocol::flow_directory spawn_flow_directory(caf::actor_system& sys, FlowDirectoryEnv env) {
  // Dynamically typed inside, as the job directory it works with.
  return caf::actor_cast<protocol::flow_directory>(sys.spawn(flow_directory, std::move(env)));
}

}  // namespace caldera
