#include "actors/directory/job_directory.hpp"

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <capnp/message.h>
#include <kj/exception.h>
#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "actors/api/responses.hpp"
#include "actors/directory/scheduling_names.hpp"
#include "actors/directory/stored_jobs.hpp"
#include "actors/directory/submission.hpp"
#include "actors/job/core/job_controller.hpp"
#include "actors/job/core/pod_group.hpp"
#include "actors/job/core/pod_template.hpp"
#include "actors/job/job_actor.hpp"
#include "actors/job/job_record.hpp"
#include "actors/jobflow/core/flow_job.hpp"
#include "actors/jobflow/core/flow_submission.hpp"
#include "actors/protocol/atoms.hpp"
#include "actors/protocol/local_types.hpp"
#include "actors/store/pending_commits.hpp"
#include "actors/uid.hpp"
#include "common/clock.hpp"
#include "messages/admission/admission.hpp"
#include "messages/cluster.capnp.h"
#include "messages/codec/codec.hpp"
#include "messages/codec/flat.hpp"
#include "messages/codec/pod_kill.hpp"
#include "messages/codec/queue_codec.hpp"
#include "messages/model/batch_job.hpp"
#include "messages/store.capnp.h"
#include "messages/yaml/job_yaml.hpp"

namespace caldera {
namespace {

using Code = api::Error::Code;
using namespace std::chrono_literals;

// A live job: one with an actor. A settled job has none (passivation): the store holds it, and
// a command or a delete wakes it (wake_job).
struct JobEntry {
  protocol::job actor;
  bool accepted = false;  // its first write is durable: clients may see it
  bool deleting = false;
  std::string uid;
  int64_t created_ms = 0;
  std::string owner;                // the key of the JobFlow that created it; empty: a client did
  std::string owner_uid;            // that flow's uid (its marks on the job say both)
  std::string queue = {};           // spec.queue: a queue in use cannot be deleted
  std::string priority_class = {};  // spec.priorityClassName, likewise
  std::vector<std::string> task_classes = {};  // its tasks' priorityClassNames, likewise
  // Callers of a delete under way: they hear its outcome, not a premature "done".
  std::vector<std::function<void(const std::string&)>> delete_waiters = {};
  // Asked to stop (passivation): what would go to its actor meanwhile waits here, and runs
  // again once the actor has answered (to the woken job, or the one that did not stop).
  bool passivating = false;
  std::vector<std::function<void()>> parked = {};
};

// What admission needs of a node: the membership actor tells every change.
struct NodeCapacity {
  ResourceList capacity;
  bool ready = false;
  bool etc_volcano = true;  // its pods see their svc files at /etc/volcano (kPrivateEtcLabel)
};

struct DirectoryState {
  JobDirectoryEnv env;
  std::map<std::string, JobEntry> jobs;  // by namespace/name
  std::map<std::string, NodeCapacity> nodes;
  SchedulingNames scheduling;  // Queues and PriorityClasses, for admission
  PendingCommits commits;      // its own writes (stale History rows) whose outcome it awaits
  bool pods_watched = false;   // the watch hub wants every job actor started named to it
  static inline const char* name = "job_directory";
};

using DirSelf = caf::stateful_actor<DirectoryState>;

std::string ns_or_default(capnp::Text::Reader t) {
  return t.size() == 0 ? std::string("default") : std::string(t.cStr());
}

// The key and uid of the flow whose marks the job carries; empty for a client's job. Whether
// that flow still exists is the flow directory's to know: it drops news for one that is gone.
std::pair<std::string, std::string> owner_of(const JobSpec& spec) {
  auto key = owner_flow_key(spec);
  auto uid = spec.annotations.find(kJobFlowUid);
  if (!key || uid == spec.annotations.end()) return {};
  return {*key, uid->second};
}

JobActorEnv job_env(DirSelf* self, const JobSpec& spec) {
  auto& env = self->state.env;
  auto [owner, owner_uid] = owner_of(spec);
  return {env.store,
          caf::actor_cast<protocol::directory>(self),
          env.scheduler,
          env.timer,
          env.membership,
          env.flows,
          std::move(owner),
          std::move(owner_uid),
          env.metrics,
          env.watches,
          self->state.pods_watched,
          WallClock{}};
}

// While pods are watched, the watch hub hears of every job actor started (it tells the job to
// publish its pods if a watch wants them) and stopped (`actor` none).
template <class Handle>
void name_to_watches(DirSelf* self, const std::string& key, const Handle& actor) {
  if (self->state.pods_watched)
    self->send(self->state.env.watches, job_started_atom::value, key,
               caf::actor_cast<caf::actor>(actor));
}

// The settled job `key` if the store has it and the flow `flow_key` (this very flow, by uid)
// created it.
std::optional<JobModel> stored_flow_job(DirectoryState& st, const std::string& key,
                                        const std::string& flow_key, const std::string& flow_uid) {
  auto stored = load_stored_job_rows(*st.env.store, key);
  if (!stored || !*stored || owner_of((*stored)->job.spec) != std::pair(flow_key, flow_uid))
    return std::nullopt;
  return std::move(**stored);
}

ResourceList largest_node(const DirectoryState& st) {
  ResourceList out;
  for (const auto& [name, n] : st.nodes)
    for (const auto& [k, v] : n.capacity.values) out.values[k] = std::max(out.get(k), v);
  return out;
}

// The ready nodes' capacity in all; nullopt before any node is ready (as admission's fit check,
// which has nothing to compare with then).
std::optional<ResourceList> ready_capacity(const DirectoryState& st) {
  std::optional<ResourceList> out;
  for (const auto& [name, n] : st.nodes) {
    if (!n.ready) continue;
    if (!out) out.emplace();
    out->add(n.capacity);
  }
  return out;
}

// Store writes whose outcome the coordinator waits for: the store calls `done` on its writer
// thread, so the outcome comes back as a message and `then` runs in the actor.
void commit_then(DirSelf* self, std::vector<Write> writes,
                 std::function<void(const std::string& error)> then) {
  self->state.commits.commit(caf::actor_cast<caf::actor>(self), *self->state.env.store,
                             std::move(writes), std::move(then));
}

bool in_namespace(const std::string& key, const std::string& ns) {
  return ns.empty() || key.compare(0, ns.size() + 1, ns + "/") == 0;
}

// The live job of `key` that its actor may be asked about now: not asked to stop.
JobEntry* live_job(DirectoryState& st, const std::string& key) {
  auto it = st.jobs.find(key);
  return it == st.jobs.end() || it->second.passivating ? nullptr : &it->second;
}

void count_actor(DirectoryState& st, bool started, bool why) {
  if (!st.env.metrics) return;
  if (started)
    st.env.metrics->job_actor_started(why);
  else
    st.env.metrics->job_actor_stopped(why);
}

// Runs `fn` now, or once the job's actor has answered whether it stops (passivation).
template <class Fn>
bool parked(DirectoryState& st, const std::string& key, Fn&& fn) {
  auto it = st.jobs.find(key);
  if (it == st.jobs.end() || !it->second.passivating) return false;
  it->second.parked.emplace_back(std::forward<Fn>(fn));
  return true;
}

// ---- creating jobs: the one path for a client's jobs and a flow's ----

// Spawns the (admitted) job's actor and stores it; `done(error)` once it is durable ("") or not.
// Returns the new job's uid.
std::string create_job(DirSelf* self, JobSpec spec, std::function<void(const std::string&)> done) {
  auto& st = self->state;
  auto key = spec.key();
  auto uid = random_uid();
  const auto created = system_now_ms();
  auto [owner_key, owner_uid] = owner_of(spec);
  auto model = new_job(std::move(spec), uid, Clock{created, random_uid});
  auto queue = model.job.spec.queue;
  auto priority_class = model.job.spec.priority_class_name;
  auto task_classes = task_priority_classes(model.job.spec);
  auto env = job_env(self, model.job.spec);
  auto actor = spawn_job_actor(self->system(), std::move(model), std::move(env));
  count_actor(st, true, false);
  st.jobs[key] = JobEntry{actor, false, false, uid, created, owner_key, owner_uid};
  st.jobs[key].queue = std::move(queue);
  st.jobs[key].priority_class = std::move(priority_class);
  st.jobs[key].task_classes = std::move(task_classes);
  name_to_watches(self, key, actor);
  // No timeout: the store always answers, and a late "durable" must not meet a forgotten job.
  self->request(actor, caf::infinite, create_atom::value)
      .then(
          [self, done, key, uid](std::string&) {
            // A deleted job's entry is gone, or a successor's: it is not this one's to accept.
            auto it = self->state.jobs.find(key);
            if (it != self->state.jobs.end() && it->second.uid == uid) it->second.accepted = true;
            spdlog::info("job={} accepted", key);
            done("");
          },
          [self, done, key](caf::error& err) {
            self->state.jobs.erase(key);
            count_actor(self->state, false, false);
            name_to_watches(self, key, caf::actor());
            done("job " + key + " was not stored: " + self->system().render(err));
          });
  return uid;
}

// A stored job's actor (a restart's live job, or a settled one woken), as its entry.
JobEntry& start_stored_job(DirSelf* self, JobModel model, bool woken) {
  auto& st = self->state;
  auto [owner_key, owner_uid] = owner_of(model.job.spec);
  auto key = model.key();
  JobEntry entry{{}, true, false, model.job.uid, model.job.created_ms, owner_key, owner_uid};
  entry.queue = model.job.spec.queue;
  entry.priority_class = model.job.spec.priority_class_name;
  entry.task_classes = task_priority_classes(model.job.spec);
  auto env = job_env(self, model.job.spec);
  entry.actor = spawn_job_actor(self->system(), std::move(model), std::move(env));
  count_actor(st, true, woken);
  name_to_watches(self, key, entry.actor);
  return st.jobs[key] = std::move(entry);
}

// A settled job's actor again, from its rows: a command, a delete or a report needs it. Its
// entry, or null when the store has no such job or cannot give it back (said in the log). A job
// nothing changes offers to stop again at once.
JobEntry* wake_job(DirSelf* self, const std::string& key) {
  auto& st = self->state;
  if (auto it = st.jobs.find(key); it != st.jobs.end()) return &it->second;
  auto model = load_stored_job(*st.env.store, key);
  if (!model) {
    if (stored_job_exists(*st.env.store, key))
      spdlog::error("job={} cannot be read from the store: {}", key, model.error());
    return nullptr;
  }
  model->live_row = false;  // settled: the live index does not hold it, History does
  model->history_ms = finished_ms(*model);
  return &start_stored_job(self, std::move(*model), true);
}

// ---- submit ----

// A submission's JobTemplates and JobFlows are stored by their owner (actors/jobflow) in one
// commit; it admitted them and holds their names until then.
void store_flows(DirSelf* self, std::vector<JobTemplate> templates, std::vector<JobFlow> flows,
                 const std::shared_ptr<PendingSubmit>& pending) {
  auto settle = [pending](const std::string& error) {
    if (!error.empty())
      pending->failures.push_back("JobTemplates and JobFlows were not stored: " + error);
    pending->finish();
  };
  self->request(self->state.env.flows, caf::infinite, create_atom::value, std::move(templates),
                std::move(flows))
      .then([settle](const std::string& error) { settle(error); },
            [self, settle](caf::error& err) { settle(self->system().render(err)); });
}

// A submission's Queues and PriorityClasses are stored by their owner (actors/scheduler) in one
// commit; until it answers, their names are taken and nameable here.
void store_scheduling(DirSelf* self, std::vector<Queue> queues, std::vector<PriorityClass> classes,
                      const std::shared_ptr<PendingSubmit>& pending) {
  auto& names = self->state.scheduling;
  for (const auto& q : queues) names.creating_queues.insert(q.spec.name);
  for (const auto& c : classes) names.creating_classes.insert(c.name);
  auto settle = [self, queues, classes, pending](const std::string& error) {
    auto& names = self->state.scheduling;
    for (const auto& q : queues) names.creating_queues.erase(q.spec.name);
    for (const auto& c : classes) names.creating_classes.erase(c.name);
    if (!error.empty())
      pending->failures.push_back("Queues and PriorityClasses were not stored: " + error);
    pending->finish();
  };
  self->request(self->state.env.scheduling, caf::infinite, create_atom::value, queues, classes)
      .then([settle](const std::string& error) { settle(error); },
            [self, settle](caf::error& err) { settle(self->system().render(err)); });
}

// The second half of a submission's admission: its jobs and scheduling objects (its templates
// and flows were admitted by the flow directory, which holds their names when `reserved`).
void admit_and_store(DirSelf* self, caf::response_promise rp, uint64_t id, ParsedDocuments docs,
                     Diagnostics diags, bool reserved) {
  auto& st = self->state;
  admit_jobs(
      docs.jobs, AdmissionContext{largest_node(st)},
      [&](const std::string& key) {
        return st.jobs.count(key) > 0 || stored_job_exists(*st.env.store, key);
      },
      diags);
  auto batch_jobs = admit_batch_jobs(
      docs.batch_jobs, AdmissionContext{largest_node(st)},
      [&](const std::string& key) {
        return st.jobs.count(key) > 0 || stored_job_exists(*st.env.store, key);
      },
      diags);
  admit_scheduling(docs, st.scheduling, diags);
  if (!diags.ok()) {
    if (reserved) {
      std::vector<std::string> templates, flows;
      for (const auto& t : docs.templates) templates.push_back(t.value.key());
      for (const auto& f : docs.flows) flows.push_back(f.value.key());
      self->send(st.env.flows, release_atom::value, std::move(templates), std::move(flows));
    }
    rp.deliver(rejection_response(id, diags));
    return;
  }

  auto pending = std::make_shared<PendingSubmit>();
  pending->rp = rp;
  pending->id = id;
  const int64_t now = system_now_ms();
  std::vector<JobTemplate> templates;
  for (auto& t : docs.templates) {
    templates.push_back(JobTemplate{random_uid(), now, std::move(t.value)});
    pending->created.push_back(
        {t.document, "JobTemplate", templates.back().spec.key(), templates.back().uid});
  }
  std::vector<JobFlow> flows;
  for (auto& f : docs.flows) {
    flows.push_back(JobFlow{random_uid(), now, std::move(f.value), {}});
    pending->created.push_back({f.document, "JobFlow", flows.back().spec.key(), flows.back().uid});
  }
  // Accepted all the same, as Volcano does (nodes may join), but the user learns now why the job
  // would otherwise sit Pending.
  if (auto cluster = ready_capacity(st)) {
    for (const auto& j : docs.jobs)
      if (auto warning = cluster_fit_warning(j.value, *cluster))
        diags.warn(prefixed(j.prefix, ""), *warning);
  }
  std::vector<std::string> without_etc;
  for (const auto& [name, n] : st.nodes)
    if (n.ready && !n.etc_volcano) without_etc.push_back(name);
  for (const auto& j : docs.jobs)
    if (auto warning = etc_volcano_warning(j.value, without_etc))
      diags.warn(prefixed(j.prefix, "spec.plugins"), *warning);
  pending->warnings = warning_lines(diags);
  std::vector<Queue> queues;
  for (auto& q : docs.queues) {
    queues.push_back(Queue{random_uid(), now, std::move(q.value)});
    pending->created.push_back(
        {q.document, "Queue", "/" + queues.back().spec.name, queues.back().uid});
  }
  std::vector<PriorityClass> classes;
  for (auto& c : docs.priority_classes) {
    classes.push_back(std::move(c.value));
    classes.back().uid = random_uid();
    classes.back().created_ms = now;
    pending->created.push_back(
        {c.document, "PriorityClass", "/" + classes.back().name, classes.back().uid});
  }
  const bool stores_flows = !templates.empty() || !flows.empty();
  const bool stores_scheduling = !queues.empty() || !classes.empty();
  pending->left =
      docs.jobs.size() + batch_jobs.size() + (stores_flows ? 1 : 0) + (stores_scheduling ? 1 : 0);
  if (stores_flows) store_flows(self, std::move(templates), std::move(flows), pending);
  if (stores_scheduling) store_scheduling(self, std::move(queues), std::move(classes), pending);

  // Jobs are accepted once each job actor says its record is durable.
  for (auto& j : docs.jobs) {
    auto key = j.value.key();
    auto uid = create_job(self, std::move(j.value), [pending](const std::string& error) {
      if (!error.empty()) pending->failures.push_back(error);
      pending->finish();
    });
    pending->created.push_back({j.document, "Job", key, uid});
  }
  for (auto& j : batch_jobs) {
    auto key = j.value.key();
    auto uid = create_job(self, std::move(j.value), [pending](const std::string& error) {
      if (!error.empty()) pending->failures.push_back(error);
      pending->finish();
    });
    pending->created.push_back({j.document, "Job.batch", key, uid});
  }
}

// Everything is admitted before anything is stored: a submission is all or nothing.
caf::result<std::string> submit(DirSelf* self, uint64_t id, ParsedDocuments docs,
                                Diagnostics diags) {
  if (docs.empty())
    return diags.ok() ? error_response(id, Code::INVALID_ARGUMENT,
                                       "no Job, JobTemplate or JobFlow documents found")
                      : rejection_response(id, diags);
  auto rp = self->make_response_promise();
  if (docs.templates.empty() && docs.flows.empty()) {
    admit_and_store(self, rp, id, std::move(docs), std::move(diags), false);
    return caf::result<std::string>(rp);
  }
  FlowDocuments flow_docs{std::move(docs.templates),
                          std::move(docs.flows),
                          AdmissionContext{largest_node(self->state)},
                          {}};
  auto rest =
      std::make_shared<std::pair<ParsedDocuments, Diagnostics>>(std::move(docs), std::move(diags));
  self->request(self->state.env.flows, caf::infinite, admit_atom::value, std::move(flow_docs))
      .then(
          [self, rp, id, rest](FlowDocuments& admitted) mutable {
            auto& [docs, diags] = *rest;
            const bool reserved = admitted.diags.ok();
            docs.templates = std::move(admitted.templates);
            docs.flows = std::move(admitted.flows);
            for (auto& e : admitted.diags.errors) diags.errors.push_back(std::move(e));
            for (auto& w : admitted.diags.warnings) diags.warnings.push_back(std::move(w));
            admit_and_store(self, rp, id, std::move(docs), std::move(diags), reserved);
          },
          [self, rp, id](caf::error& err) mutable {
            rp.deliver(error_response(
                id, Code::UNAVAILABLE,
                "the flow directory did not answer: " + self->system().render(err) + "; retry"));
          });
  return caf::result<std::string>(rp);
}

// `ns`: Request.namespace, the namespace of documents that name none (empty: as they say).
caf::result<std::string> submit_yaml(DirSelf* self, uint64_t id, capnp::Text::Reader text,
                                     capnp::Text::Reader ns) {
  Diagnostics diags;
  // Every byte, NULs included: the parser refuses a NUL rather than stopping there.
  auto parsed = parse_yaml(std::string_view(text.begin(), text.size()), diags,
                           std::string_view(ns.begin(), ns.size()));
  // Admission runs even when parsing found problems, so that one answer lists them all.
  if (parsed.empty()) {
    if (diags.ok()) diags.error("", "no Job, JobTemplate or JobFlow documents found");
    return diagnostics_response(id, diags);
  }
  return submit(self, id, std::move(parsed), std::move(diags));
}

// ---- updates (caldera apply) ----

bool job_exists(DirectoryState& st, const std::string& key);

// The admitted job goes to its actor (woken if settled), which says what changed; a job that
// does not exist is found=false: the apply creates it.
void update_job(DirSelf* self, std::string key, JobSpec spec,
                caf::typed_response_promise<ApplyOutcome> rp) {
  auto& st = self->state;
  if (parked(st, key, [=] { update_job(self, key, spec, rp); })) return;
  if (!job_exists(st, key)) {
    rp.deliver(ApplyOutcome{});
    return;
  }
  auto* job = wake_job(self, key);
  ApplyOutcome refused{true, false, {}, {}};
  if (!job) {
    refused.diags.error("", "the job cannot be read from the store (see the node's log)");
    rp.deliver(refused);
    return;
  }
  if (job->deleting) {
    refused.diags.error("", "the job is being deleted");
    rp.deliver(refused);
    return;
  }
  self->request(job->actor, 30s, update_atom::value, spec)
      .then(
          [self, key, rp, pc = spec.priority_class_name](ApplyOutcome& out) mutable {
            // A class in use cannot be deleted: the directory's note follows the job's spec.
            if (out.changed)
              if (auto it = self->state.jobs.find(key); it != self->state.jobs.end())
                it->second.priority_class = pc;
            rp.deliver(std::move(out));
          },
          [self, rp](caf::error& err) mutable {
            ApplyOutcome out{true, false, {}, {}};
            out.diags.error("", "the job did not answer: " + self->system().render(err));
            rp.deliver(std::move(out));
          });
}

// Admitted as a new job would be (a name taken is no error here), its priority class checked.
template <class Spec, class Admit>
caf::result<ApplyOutcome> admit_update(DirSelf* self, Spec applied, Admit&& admit_fn) {
  auto& st = self->state;
  std::vector<Parsed<Spec>> one;
  one.push_back({std::move(applied), "", 0});
  Diagnostics diags;
  std::vector<Parsed<JobSpec>> admitted = admit_fn(one, AdmissionContext{largest_node(st)}, diags);
  if (diags.ok() && admitted.size() == 1) {
    const auto& pc = admitted.front().value.priority_class_name;
    if (!pc.empty() && !st.scheduling.class_exists(pc))
      diags.error(admitted.front().value.batch ? "spec.template.spec.priorityClassName"
                                               : "spec.priorityClassName",
                  "no PriorityClass named \"" + pc + "\"");
  }
  if (!diags.ok() || admitted.size() != 1) {
    // Known to exist or not, the refusal is the answer: a document that would not be admitted
    // as an update is not admitted as a create either.
    ApplyOutcome out{true, false, {}, std::move(diags)};
    const auto& v = one.front().value;
    const bool batch = std::is_same_v<Spec, BatchJobSpec>;
    if (!job_exists(st, job_key(v.namespace_, v.name, batch))) out.found = false;
    return out;
  }
  auto spec = std::move(admitted.front().value);
  auto key = spec.key();
  auto rp = self->make_response_promise<ApplyOutcome>();
  update_job(self, std::move(key), std::move(spec), rp);
  return rp;
}

caf::result<ApplyOutcome> update_volcano_job(DirSelf* self, JobSpec applied) {
  return admit_update(
      self, std::move(applied),
      [](std::vector<Parsed<JobSpec>>& jobs, const AdmissionContext& ctx, Diagnostics& diags) {
        admit_jobs(
            jobs, ctx, [](const std::string&) { return false; }, diags);
        return jobs;
      });
}

caf::result<ApplyOutcome> update_batch_job(DirSelf* self, BatchJobSpec applied) {
  return admit_update(
      self, std::move(applied),
      [](std::vector<Parsed<BatchJobSpec>>& jobs, const AdmissionContext& ctx, Diagnostics& diags) {
        return admit_batch_jobs(
            jobs, ctx, [](const std::string&) { return false; }, diags);
      });
}

// ---- Queues and PriorityClasses ----

// Every queue with the scheduler's view of it: what its pods hold, its share, its pod groups.
caf::result<std::string> list_queues(DirSelf* self, uint64_t id) {
  auto rp = self->make_response_promise<std::string>();
  auto unavailable = [rp, id](const char* who) mutable {
    rp.deliver(error_response(id, Code::UNAVAILABLE, std::string(who) + " did not answer"));
  };
  self->request(self->state.env.scheduling, 10s, queues_atom::value)
      .then(
          [self, rp, id, unavailable](const std::vector<Queue>& queues,
                                      const std::vector<PriorityClass>&) mutable {
            self->request(self->state.env.scheduler, 10s, queues_atom::value)
                .then(
                    [rp, id, queues](const std::vector<QueueStatus>& statuses) mutable {
                      SmallMessageBuilder b;
                      auto r = b.initRoot<api::Response>();
                      r.setId(id);
                      auto list = r.initQueues(static_cast<unsigned>(queues.size()));
                      for (unsigned i = 0; i < queues.size(); ++i) {
                        QueueStatus none{queues[i].spec.name, {}, {}, 0, 0};
                        const QueueStatus* status = &none;
                        for (const auto& st : statuses)
                          if (st.name == queues[i].spec.name) status = &st;
                        encode(queues[i], list[i], status);
                      }
                      rp.deliver(to_bytes(b));
                    },
                    [unavailable](caf::error&) mutable { unavailable("the scheduler"); });
          },
          [unavailable](caf::error&) mutable { unavailable("the scheduling objects' actor"); });
  return rp;
}

caf::result<std::string> list_priority_classes(DirSelf* self, uint64_t id) {
  auto rp = self->make_response_promise<std::string>();
  self->request(self->state.env.scheduling, 10s, queues_atom::value)
      .then(
          [rp, id](const std::vector<Queue>&, const std::vector<PriorityClass>& classes) mutable {
            SmallMessageBuilder b;
            auto r = b.initRoot<api::Response>();
            r.setId(id);
            auto list = r.initPriorityClasses(static_cast<unsigned>(classes.size()));
            for (unsigned i = 0; i < classes.size(); ++i) encode(classes[i], list[i]);
            rp.deliver(to_bytes(b));
          },
          [rp, id](caf::error&) mutable {
            rp.deliver(error_response(id, Code::UNAVAILABLE,
                                      "the scheduling objects' actor did not answer"));
          });
  return rp;
}

// Up to three of the live jobs and the JobTemplates (the flow directory's) that name `name` as
// their queue (or priority class), for the error that refuses to delete what they use ("" when
// none does).
std::string users_of(DirSelf* self, const std::string& name, bool queue, int32_t templates,
                     const std::vector<std::string>& template_keys) {
  std::vector<std::string> users;
  size_t count = 0;
  for (const auto& [key, entry] : self->state.jobs)
    if ((queue ? entry.queue == name
               : entry.priority_class == name ||
                     std::count(entry.task_classes.begin(), entry.task_classes.end(), name)) &&
        ++count <= 3)
      users.push_back("job " + key);
  for (const auto& t : template_keys)
    if (users.size() < 3) users.push_back(t);
  count += static_cast<size_t>(templates);
  if (count == 0) return "";
  std::string out =
      std::to_string(count) + (count == 1 ? " object uses it (" : " objects use it (");
  for (size_t i = 0; i < users.size(); ++i) out += (i ? ", " : "") + users[i];
  return out + (count > users.size() ? ", ...)" : ")") + "; delete them first";
}

// A Queue or PriorityClass is gone once its record's delete is durable; one a job or a
// JobTemplate uses is kept.
caf::result<std::string> delete_scheduling(DirSelf* self, uint64_t id, const std::string& name,
                                           bool queue) {
  auto& reg = self->state.scheduling;
  const char* resource =
      queue ? "queues.scheduling.volcano.sh" : "priorityclasses.scheduling.k8s.io";
  if (queue && name == kDefaultQueue)
    return error_response(id, Code::FAILED_PRECONDITION, "the default queue cannot be deleted");
  const bool exists = queue ? reg.queues.count(name) > 0 : reg.classes.count(name) > 0;
  if (exists && (queue ? reg.deleting_queues : reg.deleting_classes).count(name))
    return error_response(id, Code::FAILED_PRECONDITION,
                          std::string(resource) + " \"" + name + "\" is being deleted");
  if (!exists)
    return error_response(id, Code::NOT_FOUND,
                          std::string(resource) + " \"" + name + "\" not found", "name");
  auto rp = self->make_response_promise<std::string>();
  // From now on no job may name it (one admitted meanwhile would name what is gone).
  (queue ? reg.deleting_queues : reg.deleting_classes).insert(name);
  auto settle = [self, rp, id, name, queue](const std::string& error) mutable {
    auto& reg = self->state.scheduling;
    (queue ? reg.deleting_queues : reg.deleting_classes).erase(name);
    rp.deliver(error);
  };
  self->request(self->state.env.flows, 10s, users_atom::value, name, queue)
      .then(
          [self, settle, id, name, queue, resource](int32_t templates,
                                                    const std::vector<std::string>& keys) mutable {
            auto users = users_of(self, name, queue, templates, keys);
            if (!users.empty()) {
              settle(
                  error_response(id, Code::FAILED_PRECONDITION,
                                 std::string(resource) + " \"" + name + "\" is in use: " + users));
              return;
            }
            self->request(self->state.env.scheduling, caf::infinite, delete_atom::value, name,
                          queue)
                .then(
                    [settle, id](const std::string& error) mutable {
                      settle(error.empty()
                                 ? ok_response(id)
                                 : error_response(id, Code::INTERNAL, "delete failed: " + error));
                    },
                    [self, settle, id](caf::error& err) mutable {
                      settle(error_response(id, Code::INTERNAL,
                                            "delete failed: " + self->system().render(err)));
                    });
          },
          [settle, id](caf::error&) mutable {
            settle(error_response(id, Code::UNAVAILABLE, "the flow directory did not answer"));
          });
  return rp;
}

// ---- reads ----

// Lists come in pages (Kubernetes' limit and continue): a client cannot make one answer, or the
// work behind it, as large as the whole cluster.
constexpr uint32_t kDefaultPageItems = 500;
constexpr uint32_t kMaxPageItems = 5000;

uint32_t page_limit(api::ListFilter::Reader f) {
  auto limit = f.getLimit();
  return limit == 0 ? kDefaultPageItems : std::min(limit, kMaxPageItems);
}

bool batch_kind(capnp::Text::Reader kind) {
  return kind == kBatchJobResource || kind == "job.batch";
}

// A request's kind of job: "" (or Volcano's names) or Kubernetes' Job; another is refused rather
// than taken for a Volcano Job of the name.
std::optional<std::string> unknown_kind(uint64_t id, capnp::Text::Reader kind,
                                        const std::string& path) {
  for (const char* known : {"", "jobs", "job", "vcjob", "vcjobs", "jobs.batch.volcano.sh"})
    if (kind == known) return std::nullopt;
  if (batch_kind(kind)) return std::nullopt;
  return error_response(id, Code::INVALID_ARGUMENT,
                        "unknown kind \"" + std::string(kind.cStr()) +
                            "\": jobs (Volcano's) or jobs.batch (Kubernetes')",
                        path);
}

std::string ref_job_key(api::ObjectRef::Reader ref) {
  return job_key(ns_or_default(ref.getNamespace()), ref.getName().cStr(),
                 batch_kind(ref.getKind()));
}

// Whether the job `key` exists for clients: accepted and live, or in the store (settled, or
// written and about to be accepted).
bool job_exists(DirectoryState& st, const std::string& key) {
  auto it = st.jobs.find(key);
  if (it != st.jobs.end()) return it->second.accepted;
  return stored_job_exists(*st.env.store, key);
}

std::string job_not_found(uint64_t id, const std::string& name, const std::string& ns,
                          bool batch = false) {
  return error_response(id, Code::NOT_FOUND,
                        std::string(batch ? kBatchJobResource : "jobs.batch.volcano.sh") + " \"" +
                            name + "\" not found in namespace " + ns,
                        "name");
}

std::string job_not_found(uint64_t id, api::ObjectRef::Reader ref) {
  return job_not_found(id, ref.getName().cStr(), ns_or_default(ref.getNamespace()),
                       batch_kind(ref.getKind()));
}

std::string job_response(uint64_t id, const std::string& job_row, const std::string& spec_row) {
  SmallMessageBuilder b;
  auto r = b.initRoot<api::Response>();
  r.setId(id);
  fill_job(job_row, spec_row, [&](api::Job::Reader in) {
    r.setJob(in);
    return r.getJob();
  });
  return to_bytes(b);
}

// A live job's actor answers with what its store rows hold; a settled job's rows are read.
caf::result<std::string> get_job(DirSelf* self, uint64_t id, api::ObjectRef::Reader ref) {
  if (auto bad = unknown_kind(id, ref.getKind(), "getJob.kind")) return *bad;
  auto key = ref_job_key(ref);
  auto it = self->state.jobs.find(key);
  if (it != self->state.jobs.end() && !it->second.accepted) return job_not_found(id, ref);
  auto from_store = [self, id, key, name = std::string(ref.getName().cStr()),
                     ns = ns_or_default(ref.getNamespace()),
                     batch = batch_kind(ref.getKind())]() -> std::string {
    auto rows = read_job_rows(*self->state.env.store, key);
    if (!rows) return job_not_found(id, name, ns, batch);
    return job_response(id, rows->job, rows->spec);
  };
  auto* live = live_job(self->state, key);
  if (!live) return from_store();
  auto rp = self->make_response_promise<std::string>();
  self->request(live->actor, 10s, get_job_atom::value)
      .then(
          [rp, id, from_store](const std::string& job_row, const std::string& spec_row) mutable {
            // None yet: recovered or woken, it has not written since; the store has it.
            rp.deliver(job_row.empty() ? from_store() : job_response(id, job_row, spec_row));
          },
          [rp, from_store](caf::error&) mutable { rp.deliver(from_store()); });
  return rp;
}

// A page of jobs, read from the store by key: a table (summary) from the summary rows, else
// each job row with its spec row.
std::string list_jobs(DirSelf* self, uint64_t id, api::ListFilter::Reader f) {
  if (auto bad = unknown_kind(id, f.getKind(), "listJobs.kind")) return *bad;
  auto& st = self->state;
  const uint32_t limit = page_limit(f);
  const bool summary = f.getSummary();
  const bool batch = batch_kind(f.getKind());
  std::vector<std::pair<std::string, std::string>> page;  // key, row
  bool more = false;
  auto error = for_each_stored_job(*st.env.store, summary ? Family::Summaries : Family::Jobs,
                                   f.getNamespace(), f.getContinue(),
                                   [&](std::string_view key, std::string_view row) {
                                     if (is_batch_job_key(key) != batch) return true;
                                     if (page.size() == limit) return !(more = true);
                                     page.emplace_back(key, row);
                                     return true;
                                   });
  if (!error.empty()) return error_response(id, Code::INTERNAL, "cannot list jobs: " + error);
  SmallMessageBuilder b;
  auto r = b.initRoot<api::Response>();
  r.setId(id);
  auto list = r.initJobs(static_cast<unsigned>(page.size()));
  for (unsigned i = 0; i < page.size(); ++i) {
    const auto& [key, row] = page[i];
    if (summary) {
      FlatReader reader(FlatReader::Borrow{}, row, record_reader_options());
      list.setWithCaveats(i, reader.root<api::Job>());
      continue;
    }
    auto spec = st.env.store->get(Family::Specs, key).value_or(std::string());
    fill_job(row, spec, [&](api::Job::Reader in) {
      list.setWithCaveats(i, in);
      return list[i];
    });
  }
  if (more) r.setContinue(page.back().first);
  return to_bytes(b);
}

// A listPods in progress: its job actors are asked one after another (each owns its pods),
// until the page is full. Jobs are found one at a time, so a page costs what it shows.
struct PodListing {
  uint64_t id = 0;
  caf::response_promise rp;
  std::string ns, job;    // the filter: a namespace (empty: all), a job name (empty: all)
  std::string kind;       // ... and the kind of that job: "" either, "jobs" or "jobs.batch"
  std::string cursor;     // the job key asked last (empty: none yet)
  std::string after_job;  // the job a continue token points into
  std::string after;      // in that job: the pod the previous page ended with
  uint32_t left = 0;
  std::vector<std::string> pages;  // Responses from the job actors
  std::string continue_token;
  std::string last_pod;  // the last pod key shown
};

void finish_listing(const std::shared_ptr<PodListing>& l) {
  std::vector<std::unique_ptr<FlatReader>> readers;
  size_t count = 0;
  for (const auto& page : l->pages) {
    readers.push_back(std::make_unique<FlatReader>(page, record_reader_options()));
    count += readers.back()->root<api::Response>().getPods().size();
  }
  SmallMessageBuilder b;
  auto r = b.initRoot<api::Response>();
  r.setId(l->id);
  auto list = r.initPods(static_cast<unsigned>(count));
  unsigned i = 0;
  for (auto& reader : readers)
    for (auto p : reader->root<api::Response>().getPods()) list.setWithCaveats(i++, p);
  if (!l->continue_token.empty()) r.setContinue(l->continue_token);
  l->rp.deliver(to_bytes(b));
}

// The key of the next job the listing visits after its cursor, or "" (jobs are found in the
// store: every accepted job has its rows there).
std::string next_listed_job(DirectoryState& st, PodListing& l) {
  auto matches = [&](std::string_view key) {
    if (l.job.empty()) return true;
    if (!l.kind.empty() && is_batch_job_key(key) != (l.kind == kBatchJobResource)) return false;
    return key.size() > l.job.size() && key.ends_with(l.job) &&
           key[key.size() - l.job.size() - 1] == '/';
  };
  if (!l.after_job.empty() && l.cursor.empty()) {  // a continue token: its job comes first
    l.cursor = l.after_job;
    if (in_namespace(l.after_job, l.ns) && matches(l.after_job) && job_exists(st, l.after_job))
      return l.after_job;
  }
  if (!l.ns.empty() && !l.job.empty()) {  // a job of each kind at most: no walk
    std::set<std::string> keys;           // in the order of keys, as a walk would find them
    for (bool batch : {false, true})
      if (matches(job_key(l.ns, l.job, batch))) keys.insert(job_key(l.ns, l.job, batch));
    for (const auto& key : keys)
      if (key > l.cursor && job_exists(st, key)) return key;
    return std::string();
  }
  std::string found;
  for_each_stored_job(*st.env.store, Family::Jobs, l.ns, l.cursor,
                      [&](std::string_view key, std::string_view) {
                        if (!matches(key)) return true;
                        found = key;
                        return false;
                      });
  return found;
}

void list_next_job(DirSelf* self, std::shared_ptr<PodListing> l);

// A page of the job's pods has come (from its actor, or from the store for a settled job).
void pods_paged(DirSelf* self, const std::shared_ptr<PodListing>& l, const std::string& key,
                std::string page) {
  FlatReader reader(page, record_reader_options());
  auto r = reader.root<api::Response>();
  auto pods = r.getPods();
  l->left -= std::min(static_cast<uint32_t>(pods.size()), l->left);
  if (pods.size() > 0) l->last_pod = pod_row_key(key, pods[pods.size() - 1].getName());
  std::string more = r.getContinue();
  l->pages.push_back(std::move(page));
  if (!more.empty()) {
    l->continue_token = pod_row_key(key, more);
    return finish_listing(l);
  }
  list_next_job(self, l);
}

void list_next_job(DirSelf* self, std::shared_ptr<PodListing> l) {
  auto key = next_listed_job(self->state, *l);
  if (key.empty()) return finish_listing(l);
  if (l->left == 0) {
    // Full, and more jobs follow: the next page starts after the last pod of this one.
    l->continue_token = l->last_pod;
    return finish_listing(l);
  }
  auto after = key == l->after_job ? std::exchange(l->after, std::string()) : std::string();
  l->cursor = key;
  auto* live = live_job(self->state, key);
  if (!live) {  // settled (or stopping): its rows hold what it has
    auto model = load_stored_job(*self->state.env.store, key);
    if (!model) return list_next_job(self, l);  // deleted meanwhile
    return pods_paged(self, l, key, pod_page(*model, after, l->left));
  }
  self->request(live->actor, 10s, list_pods_atom::value, after, l->left)
      .then([self, l, key](std::string& page) { pods_paged(self, l, key, std::move(page)); },
            [self, l, key, after](caf::error& err) {
              // A job deleted meanwhile has no pods to show, and one that stopped (passivation)
              // has them in the store; a job that did not answer has, so the page is not made
              // without them.
              if (err == caf::sec::request_receiver_down) {
                auto model = load_stored_job(*self->state.env.store, key);
                if (!model) return list_next_job(self, l);
                return pods_paged(self, l, key, pod_page(*model, after, l->left));
              }
              l->rp.deliver(error_response(l->id, Code::UNAVAILABLE,
                                           "a job did not answer: " + self->system().render(err)));
            });
}

caf::result<std::string> list_pods(DirSelf* self, uint64_t id, api::ListFilter::Reader f) {
  if (auto bad = unknown_kind(id, f.getKind(), "listPods.kind")) return *bad;
  auto l = std::make_shared<PodListing>();
  l->id = id;
  l->ns = f.getNamespace();
  l->job = f.getJobName();
  l->kind = f.getKind().size() == 0 ? "" : batch_kind(f.getKind()) ? kBatchJobResource : "jobs";
  l->left = page_limit(f);
  const std::string token = f.getContinue();
  if (!token.empty()) {
    auto from = std::string(job_key_of_pod_row(token));
    if (from.empty())
      return error_response(id, Code::INVALID_ARGUMENT, "not a continue token: " + token,
                            "listPods.continue");
    l->after_job = from;  // the page goes on inside that job, after that pod
    l->after = token.substr(from.size() + 1);
  }
  l->rp = self->make_response_promise();
  list_next_job(self, l);
  return caf::result<std::string>(l->rp);
}

// Finds the pod among the jobs its name can belong to ({job}-{task}-{index}), then reads its log
// on the node that holds it.
struct PodLogLookup {
  uint64_t id = 0;
  caf::response_promise rp;
  std::string ns, name, container;
  int64_t offset = 0, max_bytes = 0;
  std::vector<std::string> candidates;  // job keys
  size_t next = 0;
};

void read_pod_log(DirSelf* self, const std::shared_ptr<PodLogLookup>& l, const Pod& pod) {
  const auto& name = l->name;
  const auto& container = l->container;
  const auto id = l->id;
  std::vector<std::string> containers;
  for (const auto& c : pod.containers) containers.push_back(c.name);
  if (container.empty() && containers.size() > 1) {
    std::string names;
    for (const auto& c : containers) names += (names.empty() ? "" : " ") + c;
    return l->rp.deliver(error_response(
        id, Code::INVALID_ARGUMENT,
        "a container name must be specified for pod " + name + ", choose one of: [" + names + "]",
        "container"));
  }
  if (!container.empty() && !containers.empty() &&
      std::find(containers.begin(), containers.end(), container) == containers.end())
    return l->rp.deliver(error_response(id, Code::NOT_FOUND,
                                        "container " + container + " is not valid for pod " + name,
                                        "container"));
  if (pod.node.empty())
    return l->rp.deliver(
        error_response(id, Code::UNAVAILABLE, "pod " + name + " has not started on a node yet"));
  auto rp = l->rp;
  self->request(self->state.env.membership, 10s, log_atom::value, pod.node, pod.uid, container,
                l->offset, l->max_bytes)
      .then(
          [rp, id](std::string& data, int64_t next, bool eof) mutable {
            if (data.size() > (1u << 24)) {  // the node bounds chunks; never trust it blindly
              rp.deliver(error_response(id, Code::INTERNAL, "log chunk too large"));
              return;
            }
            SmallMessageBuilder b;
            auto r = b.initRoot<api::Response>();
            r.setId(id);
            auto log = r.initLog();
            log.setData(kj::arrayPtr(reinterpret_cast<const kj::byte*>(data.data()), data.size()));
            log.setNextOffset(next);
            log.setEof(eof);
            rp.deliver(to_bytes(b));
          },
          [self, rp, id](caf::error& err) mutable {
            rp.deliver(error_response(id, Code::UNAVAILABLE,
                                      "cannot read log: " + self->system().render(err)));
          });
}

void find_pod_for_log(DirSelf* self, std::shared_ptr<PodLogLookup> l) {
  if (l->next == l->candidates.size())
    return l->rp.deliver(error_response(l->id, Code::NOT_FOUND,
                                        "pods \"" + l->name + "\" not found in namespace " + l->ns,
                                        "pod.name"));
  const auto key = l->candidates[l->next++];
  // A settled job's pod rows are what it holds.
  auto from_store = [self, l, key]() {
    auto row = self->state.env.store->get(Family::Pods, pod_row_key(key, l->name));
    auto pod = row ? decode_pod_row(*row) : Result<Pod>(Failure{"no row"});
    if (!pod || is_discarded(*pod)) return find_pod_for_log(self, l);
    read_pod_log(self, l, *pod);
  };
  auto* live = live_job(self->state, key);
  if (!live) return from_store();
  self->request(live->actor, 10s, get_pod_atom::value, l->name)
      .then(
          [self, l](const std::string& row) {
            if (row.empty()) return find_pod_for_log(self, l);
            auto pod = decode_pod_row(row);
            if (!pod) return find_pod_for_log(self, l);
            read_pod_log(self, l, *pod);
          },
          [self, l, from_store](caf::error& err) {
            if (err == caf::sec::request_receiver_down) return from_store();
            l->rp.deliver(error_response(l->id, Code::UNAVAILABLE,
                                         "a job did not answer: " + self->system().render(err)));
          });
}

caf::result<std::string> pod_log(DirSelf* self, uint64_t id, api::LogRequest::Reader req) {
  auto l = std::make_shared<PodLogLookup>();
  l->id = id;
  l->ns = ns_or_default(req.getPod().getNamespace());
  l->name = req.getPod().getName();
  l->container = req.getContainer();
  l->offset = req.getOffset();
  l->max_bytes = req.getMaxBytes();
  // Jobs (of either kind) whose name the pod's name starts with, followed by "-".
  for (size_t dash = l->name.find('-'); dash != std::string::npos;
       dash = l->name.find('-', dash + 1))
    for (bool batch : {false, true}) {
      auto key = job_key(l->ns, l->name.substr(0, dash), batch);
      if (job_exists(self->state, key)) l->candidates.push_back(std::move(key));
    }
  l->rp = self->make_response_promise();
  find_pod_for_log(self, l);
  return caf::result<std::string>(l->rp);
}

// Deletes a job with its pods and logs; `done` gets "" once the record is gone, or the error.
void delete_entry(DirSelf* self, const std::string& key,
                  std::function<void(const std::string&)> done) {
  if (parked(self->state, key, [self, key, done] { delete_entry(self, key, done); })) return;
  auto it = self->state.jobs.find(key);
  if (it == self->state.jobs.end()) {
    if (!wake_job(self, key)) {  // gone already, or unreadable
      done(stored_job_exists(*self->state.env.store, key)
               ? "the job cannot be read from the store (see the coordinator's log)"
               : "");
      return;
    }
    it = self->state.jobs.find(key);
  }
  it->second.delete_waiters.push_back(std::move(done));
  if (it->second.deleting) return;  // it hears the outcome of the delete under way
  it->second.deleting = true;
  // The entry stays until the record is gone, so a new job of the same name cannot be written
  // before the old record's delete.
  self->request(it->second.actor, 30s, delete_atom::value)
      .then(
          [self, key](caf::ok_atom) {
            auto it = self->state.jobs.find(key);
            if (it == self->state.jobs.end()) return;
            auto waiters = std::move(it->second.delete_waiters);
            self->state.jobs.erase(it);
            name_to_watches(self, key, caf::actor());
            count_actor(self->state, false, false);
            for (auto& w : waiters) w("");
          },
          [self, key](caf::error& err) {
            auto it = self->state.jobs.find(key);
            if (it == self->state.jobs.end()) return;
            it->second.deleting = false;
            auto waiters = std::move(it->second.delete_waiters);
            for (auto& w : waiters) w("delete failed: " + self->system().render(err));
          });
}

// Passivation: a settled job offers to stop. Unless something is under way for it (a delete), it
// is asked to stop; until it answers, what would go to it waits (parked). Once it has stopped
// its entry goes: the store holds the job, and whatever waited finds it there.
bool passivate(DirSelf* self, const std::string& key, const std::string& uid) {
  auto it = self->state.jobs.find(key);
  if (it == self->state.jobs.end() || it->second.actor.address() != self->current_sender() ||
      it->second.uid != uid || it->second.deleting || it->second.passivating ||
      !it->second.accepted)
    return false;
  it->second.passivating = true;
  auto actor = it->second.actor;
  auto resolve = [self, key, actor](bool stopped) {
    auto it = self->state.jobs.find(key);
    if (it == self->state.jobs.end() || it->second.actor != actor) return;
    auto waiting = std::move(it->second.parked);
    if (stopped) {
      self->state.jobs.erase(it);
      count_actor(self->state, false, true);
      name_to_watches(self, key, caf::actor());
    } else {
      it->second.passivating = false;
      name_to_watches(self, key, actor);  // a pods watch may have begun meanwhile
    }
    for (auto& fn : waiting) fn();
  };
  self->request(actor, caf::infinite, stop_atom::value)
      .then([resolve](bool stopped) { resolve(stopped); },
            [resolve](caf::error&) { resolve(true); });  // gone: as good as stopped
  return true;
}

// Deletes every job the flow `flow_key` (this very flow, by uid) created: the live ones, and
// those of `keys` (the names its entries give them) the store holds. `done` gets "" once all
// are gone, or the first error.
void delete_flow_jobs(DirSelf* self, const std::string& flow_key, const std::string& flow_uid,
                      const std::vector<std::string>& keys,
                      std::function<void(const std::string&)> done) {
  auto& st = self->state;
  std::set<std::string> doomed;
  for (const auto& [key, entry] : st.jobs)
    if (entry.owner == flow_key && entry.owner_uid == flow_uid) doomed.insert(key);
  for (const auto& key : keys)
    if (!st.jobs.count(key) && stored_flow_job(st, key, flow_key, flow_uid)) doomed.insert(key);
  if (doomed.empty()) {
    done("");
    return;
  }
  struct Left {
    size_t count;
    std::string error;
  };
  auto left = std::make_shared<Left>(Left{doomed.size(), {}});
  for (const auto& key : doomed)
    delete_entry(self, key, [left, done](const std::string& error) {
      if (left->error.empty()) left->error = error;
      if (--left->count == 0) done(left->error);
    });
}

using CreateReply = caf::result<std::string, int64_t, std::string, bool>;

// A flow's entry's job (built by the flow directory from the entry's JobTemplate): (uid,
// created ms, "", false) once it is durable, or exists already as this flow's; ("", 0, why,
// wait) when it cannot be created (wait: not yet).
CreateReply flow_create(DirSelf* self, const std::string& flow_key, const std::string& flow_uid,
                        JobSpec spec) {
  auto& st = self->state;
  auto refuse = [](std::string why, bool wait) {
    return CreateReply(std::string(), int64_t{0}, std::move(why), wait);
  };
  const auto key = spec.key();
  if (auto it = st.jobs.find(key); it != st.jobs.end()) {
    const auto& job = it->second;
    if (job.owner != flow_key || job.owner_uid != flow_uid)
      return refuse("a job named " + spec.name + " exists and was not created by this JobFlow",
                    false);
    if (job.deleting) return refuse("job " + spec.name + " is being deleted", true);
    return CreateReply(job.uid, job.created_ms, std::string(), false);  // nothing twice
  }
  if (stored_job_exists(*st.env.store, key)) {
    auto model = stored_flow_job(st, key, flow_key, flow_uid);
    if (!model)
      return refuse("a job named " + spec.name + " exists and was not created by this JobFlow",
                    false);
    // Settled: no actor tells the flow its status, so this does.
    self->send(st.env.flows, job_status_atom::value, flow_key, flow_uid, model->job.spec.name,
               model->job.uid, model->job.created_ms, model->job.status);
    return CreateReply(model->job.uid, model->job.created_ms, std::string(), false);
  }
  apply_job_defaults(spec);
  Diagnostics diags;
  admit(spec, AdmissionContext{largest_node(st)}, diags);
  // As a client's job: its queue and priority class must exist (deleted since the template).
  ParsedDocuments one;
  one.jobs.push_back({spec, "", 0});
  admit_scheduling(one, st.scheduling, diags);
  if (!diags.ok()) {
    std::string why;
    for (const auto& e : diags.errors)
      why += (why.empty() ? "" : "; ") + (e.path.empty() ? "" : e.path + ": ") + e.message;
    return refuse(std::move(why), false);
  }
  auto rp = self->make_response_promise<std::string, int64_t, std::string, bool>();
  auto uid = std::make_shared<std::string>();
  auto created = system_now_ms();
  *uid = create_job(self, std::move(spec), [rp, uid, created](const std::string& error) mutable {
    if (error.empty())
      rp.deliver(*uid, created, std::string(), false);
    else
      rp.deliver(std::string(), int64_t{0}, error, true);
  });
  if (auto it = st.jobs.find(key); it != st.jobs.end()) it->second.created_ms = created;
  return rp;
}

caf::result<std::string> delete_job(DirSelf* self, uint64_t id, api::ObjectRef::Reader ref) {
  if (auto bad = unknown_kind(id, ref.getKind(), "deleteJob.kind")) return *bad;
  auto key = ref_job_key(ref);
  if (!job_exists(self->state, key)) return job_not_found(id, ref);
  auto rp = self->make_response_promise<std::string>();
  delete_entry(self, key, [rp, id](const std::string& error) mutable {
    rp.deliver(error.empty() ? ok_response(id) : error_response(id, Code::INTERNAL, error));
  });
  return rp;
}

// History retention deletes a settled job as `delete job` does. A row whose job is gone, is
// another of the name or finished at another time (resumed since) is stale: it goes alone. A job
// with an actor (live again, or not stopped yet) stays, for a later pass to look at.
void purge_job(DirSelf* self, const std::string& row, const std::string& uid,
               caf::response_promise rp) {
  auto& st = self->state;
  auto parsed = parse_history_key(row);
  if (!parsed) {
    rp.deliver("\"" + row + "\" is not a History row");
    return;
  }
  const auto& key = parsed->second;
  if (parked(st, key, [=] { purge_job(self, row, uid, rp); })) return;
  if (st.jobs.count(key)) {
    rp.deliver(std::string("the job has an actor (live, or being deleted)"));
    return;
  }
  auto stored = load_stored_job_rows(*st.env.store, key);
  if (stored && !*stored) {
    rp.deliver("the job cannot be read from the store: " + stored->error());
    return;
  }
  if (!stored || (*stored)->job.uid != uid || finished_ms(**stored) != parsed->first) {
    if (!st.env.store->get(Family::History, row)) {
      rp.deliver(std::string(kPurgedStale));  // gone meanwhile
      return;
    }
    commit_then(self,
                {Write{Family::History, row, std::nullopt}, counter_add(kFinishedJobsCounter, -1)},
                [rp](const std::string& error) mutable {
                  rp.deliver(error.empty() ? std::string(kPurgedStale) : error);
                });
    return;
  }
  delete_entry(self, key, [rp](const std::string& error) mutable { rp.deliver(error); });
}

// The stored Queue and PriorityClass names, as their owner tells them.
void take_names(SchedulingNames& names, const std::vector<std::string>& queues,
                const std::vector<std::string>& classes, const std::string& default_class,
                const std::vector<std::string>& closed) {
  names.queues = std::set<std::string>(queues.begin(), queues.end());
  names.classes = std::set<std::string>(classes.begin(), classes.end());
  names.default_class = default_class;
  names.closed_queues = std::set<std::string>(closed.begin(), closed.end());
}

// The actions a client may issue (vcctl's job commands).
bool is_command_action(const std::string& a) {
  return a == "AbortJob" || a == "ResumeJob" || a == "RestartJob" || a == "TerminateJob" ||
         a == "CompleteJob";
}

// What a client asks of a job's actor: (its actor, the promise to deliver the answer to).
using JobAsk = std::function<void(protocol::job, caf::response_promise)>;
void ask_job(DirSelf* self, const std::string& key, uint64_t id, caf::response_promise rp,
             JobAsk ask);

caf::result<std::string> command(DirSelf* self, uint64_t id, api::JobCommand::Reader cmd) {
  // Everything is read before the response promise exists: a malformed field throws, and
  // handle_api's "malformed" answer is lost once a promise has taken over the reply.
  auto ref = cmd.getJob();
  if (auto bad = unknown_kind(id, ref.getKind(), "command.job.kind")) return *bad;
  std::string action = cmd.getAction();
  std::string command_id = cmd.getCommandId();
  if (!is_command_action(action))
    return error_response(id, Code::INVALID_ARGUMENT,
                          "unknown action \"" + action +
                              "\"; a command is one of AbortJob, ResumeJob, RestartJob, "
                              "TerminateJob, CompleteJob",
                          "command.action");
  auto key = ref_job_key(ref);
  if (!job_exists(self->state, key)) return job_not_found(id, ref);
  auto rp = self->make_response_promise();
  ask_job(self, key, id, rp, [self, id, action, command_id](protocol::job job, auto rp) {
    self->request(job, 30s, command_atom::value, action, command_id)
        .then(
            [rp, id](std::string& refused) mutable {
              // A command the job's phase ignores did nothing: the client must not think so.
              rp.deliver(refused.empty() ? ok_response(id)
                                         : error_response(id, Code::FAILED_PRECONDITION, refused));
            },
            [self, rp, id](caf::error& err) mutable {
              rp.deliver(error_response(id, Code::INTERNAL,
                                        "command failed: " + self->system().render(err)));
            });
  });
  return caf::result<std::string>(rp);
}

caf::result<std::string> patch_job(DirSelf* self, uint64_t id, api::JobPatch::Reader req) {
  auto ref = req.getJob();
  std::string patch = req.getPatch();
  if (!batch_kind(ref.getKind()))
    return error_response(id, Code::INVALID_ARGUMENT,
                          "caldera patches Kubernetes Jobs (kind jobs.batch) only",
                          "patchJob.job.kind");
  auto key = ref_job_key(ref);
  if (!job_exists(self->state, key)) return job_not_found(id, ref);
  auto rp = self->make_response_promise();
  ask_job(self, key, id, rp, [self, id, patch](protocol::job job, auto rp) {
    self->request(job, 30s, patch_atom::value, patch)
        .then(
            [rp, id](std::string& refused) mutable {
              rp.deliver(refused.empty() ? ok_response(id)
                                         : error_response(id, Code::INVALID_ARGUMENT, refused,
                                                          "patchJob.patch"));
            },
            [self, rp, id](caf::error& err) mutable {
              rp.deliver(error_response(id, Code::INTERNAL,
                                        "patch failed: " + self->system().render(err)));
            });
  });
  return caf::result<std::string>(rp);
}

// The job's actor, woken if it is settled, is asked; once it has stopped taking messages
// (passivation) the request waits for its answer.
void ask_job(DirSelf* self, const std::string& key, uint64_t id, caf::response_promise rp,
             JobAsk ask) {
  if (parked(self->state, key, [=] { ask_job(self, key, id, rp, ask); })) return;
  auto* job = wake_job(self, key);
  if (!job) {
    rp.deliver(error_response(id, Code::NOT_FOUND, "job " + key + " no longer exists"));
    return;
  }
  if (job->deleting) {
    rp.deliver(error_response(id, Code::FAILED_PRECONDITION, "the job is being deleted"));
    return;
  }
  ask(job->actor, rp);
}

caf::result<std::string> handle_api(DirSelf* self, const std::string& bytes) {
  uint64_t id = 0;
  try {
    FlatReader reader(bytes, client_reader_options());
    auto req = reader.root<api::Request>();
    id = req.getId();
    // The router (actors/api) has checked the store can write, and answered ping and nodes.
    switch (req.which()) {
      case api::Request::SUBMIT_YAML:
        return submit_yaml(self, id, req.getSubmitYaml(), req.getNamespace());
      case api::Request::SUBMIT_JOB:
      case api::Request::SUBMIT_JOB_TEMPLATE:
      case api::Request::SUBMIT_JOB_FLOW: {
        Diagnostics diags;
        ParsedDocuments docs;
        if (req.isSubmitJob()) {
          // A Kubernetes Job (batch set, its template the one task's) is admitted as one.
          auto spec = decode(req.getSubmitJob(), diags, "spec");
          if (spec.batch)
            docs.batch_jobs.push_back({to_batch_job_spec(spec), "", 0});
          else
            docs.jobs.push_back({std::move(spec), "", 0});
        } else if (req.isSubmitJobTemplate()) {
          docs.templates.push_back({decode(req.getSubmitJobTemplate(), diags, "spec"), "", 0});
          if (docs.templates.back().value.batch)
            diags.error("spec.batch", "a JobTemplate holds a Volcano Job's spec");
        } else {
          docs.flows.push_back({decode(req.getSubmitJobFlow(), diags), "", 0});
        }
        if (!diags.ok()) return diagnostics_response(id, diags);
        return submit(self, id, std::move(docs), std::move(diags));
      }
      case api::Request::GET_JOB_TEMPLATE:
      case api::Request::LIST_JOB_TEMPLATES:
      case api::Request::DELETE_JOB_TEMPLATE:
      case api::Request::GET_JOB_FLOW:
      case api::Request::LIST_JOB_FLOWS:
      case api::Request::DELETE_JOB_FLOW:
        break;  // the flow directory's (actors/jobflow)
      case api::Request::GET_JOB:
        return get_job(self, id, req.getGetJob());
      case api::Request::LIST_JOBS:
        return list_jobs(self, id, req.getListJobs());
      case api::Request::LIST_PODS:
        return list_pods(self, id, req.getListPods());
      case api::Request::DELETE_JOB:
        return delete_job(self, id, req.getDeleteJob());
      case api::Request::POD_LOG:
        return pod_log(self, id, req.getPodLog());
      case api::Request::COMMAND:
        return command(self, id, req.getCommand());
      case api::Request::PATCH_JOB:
        return patch_job(self, id, req.getPatchJob());
      case api::Request::WATCH:
      case api::Request::CANCEL_WATCH:
        // A watch lives on a client connection: the client bridge holds it (watch_atom).
        return error_response(id, Code::INVALID_ARGUMENT,
                              "a watch needs a client connection to the gateway");
      case api::Request::LIST_QUEUES:
        return list_queues(self, id);
      case api::Request::DELETE_QUEUE:
        return delete_scheduling(self, id, req.getDeleteQueue(), true);
      case api::Request::LIST_PRIORITY_CLASSES:
        return list_priority_classes(self, id);
      case api::Request::DELETE_PRIORITY_CLASS:
        return delete_scheduling(self, id, req.getDeletePriorityClass(), false);
      case api::Request::PING:
      case api::Request::LIST_NODES:
      case api::Request::BACKUP:
      case api::Request::APPLY_YAML:
      case api::Request::OPERATE_QUEUE:
      case api::Request::GET_SCHEDULER_CONF:
        break;  // the router's own
    }
    return error_response(id, Code::UNIMPLEMENTED,
                          "unknown request kind " + std::to_string(static_cast<int>(req.which())));
  } catch (const kj::Exception& e) {
    // Cap'n Proto reads lazily: a field deep in the request may be what is malformed.
    return unreadable_response(id, e.getDescription().cStr());
  }
}

// ---- nodes and routing ----

std::string copy_report(cluster::PodReport::Reader r) {
  SmallMessageBuilder b;
  b.setRoot(r);
  return to_bytes(b);
}

// Whether the report is of a settled job's pod that ended as its row says: the job has it
// already, and only the node's acknowledgement is due (the job's actor would say no more).
bool settled_end(DirSelf* self, const std::string& key, api::Pod::Reader pod) {
  std::string phase = pod.getPhase();
  if (phase != "Succeeded" && phase != "Failed") return false;
  auto row = self->state.env.store->get(Family::Pods, pod_row_key(key, pod.getName()));
  if (!row) return false;
  auto stored = decode_pod_row(*row);
  return stored && stored->uid == pod.getUid().cStr() && is_terminal(stored->phase) &&
         to_string(stored->phase) == phase;
}

// The key of the job that owns the pod.
std::string pod_job_key(api::Pod::Reader pod) {
  return job_key(ns_or_default(pod.getNamespace()), pod.getJobName().cStr(),
                 pod.getJobKind() == kBatchJobResource);
}

void route_report(DirSelf* self, const std::string& bytes) {
  api::Pod::Reader pod;
  FlatReader reader(bytes);
  pod = reader.root<cluster::PodReport>().getPod();
  auto key = pod_job_key(pod);
  if (parked(self->state, key, [self, bytes] { route_report(self, bytes); })) return;
  auto it = self->state.jobs.find(key);
  if (it != self->state.jobs.end() && !it->second.deleting) {
    self->send(it->second.actor, report_atom::value, bytes);
    return;
  }
  if (it == self->state.jobs.end() && stored_job_exists(*self->state.env.store, key)) {
    // A settled job's pod: its node holds it for its logs, and says so when it registers.
    if (settled_end(self, key, pod)) {
      if (pod.getStatusSeq() != 0 && pod.getNode().size() > 0)
        self->send(self->state.env.membership, ack_atom::value, std::string(pod.getNode().cStr()),
                   std::string(pod.getUid().cStr()), pod.getStatusSeq());
      return;
    }
    if (auto* woken = wake_job(self, key)) {  // news: the job decides
      self->send(woken->actor, report_atom::value, bytes);
      return;
    }
  }
  // No job owns it any more (deleted): once it has ended, its resources are free and the node
  // may forget it. One still running (its node missed the removal while it was away) is
  // stopped first.
  std::string phase = pod.getPhase();
  if (phase != "Succeeded" && phase != "Failed") {
    if (pod.getNode().size() == 0) return;
    self->send(self->state.env.membership, kill_atom::value, std::string(pod.getNode().cStr()),
               pod_kill_bytes(pod.getUid(), 2000, "its job no longer exists"));
    return;
  }
  self->send(self->state.env.scheduler, release_atom::value,
             std::vector<std::string>{pod.getUid().cStr()});
  self->send(self->state.env.membership, remove_atom::value, std::string(pod.getNode().cStr()),
             std::string(pod.getUid().cStr()));
}

void on_register(DirSelf* self, const std::string& bytes) {
  auto& st = self->state;
  std::map<std::string, std::vector<std::string>> uids_by_job;
  std::string name;
  try {
    FlatReader reader(bytes);
    auto reg = reader.root<cluster::NodeRegistration>();
    name = reg.getNode().getName();
    for (auto r : reg.getPods()) {
      auto pod = r.getPod();
      uids_by_job[pod_job_key(pod)].emplace_back(pod.getUid().cStr());
      route_report(self, copy_report(r));
    }
  } catch (const kj::Exception& e) {
    spdlog::error("malformed node registration: {}", e.getDescription().cStr());
    return;
  }
  // A settled job (or one stopping) has no pod a node's return changes.
  for (auto& [key, entry] : st.jobs)
    if (!entry.passivating) self->send(entry.actor, node_up_atom::value, name, uids_by_job[key]);
}

// Writes of a one-time indexing of the store, committed a thousand at a time.
class IndexWrites {
 public:
  IndexWrites(Store& store, const char* what) : store_(store), what_(what) {}
  void add(Write w) {
    writes_.push_back(std::move(w));
    if (writes_.size() >= 1000) commit();
  }
  // The last writes with the marker that says the index is built, then waits for them all.
  void finish(const char* marker) {
    add({Family::Meta, marker, std::string("1")});
    commit();
    store_.flush();
  }

 private:
  void commit() {
    if (writes_.empty()) return;
    store_.commit(std::move(writes_), [what = what_](std::string error) {
      if (!error.empty()) spdlog::error("indexing the {}: {}", what, error);
    });
    writes_.clear();
  }
  Store& store_;
  const char* what_;
  std::vector<Write> writes_;
};

// Meta: the live index and the summary rows hold every job (stores from before them are
// indexed once, by reading every job).
constexpr const char* kLiveIndexKey = "live_index";

void build_live_index(Store& store) {
  spdlog::info("coordinator: indexing the stored jobs once (live index, summaries)");
  std::vector<std::string> keys;
  store.scan(Family::Jobs, [&](std::string_view key, std::string_view) { keys.emplace_back(key); });
  IndexWrites writes(store, "stored jobs");
  size_t live = 0;
  for (const auto& key : keys) {
    auto model = load_stored_job(store, key);
    if (!model) {
      // Left live: the recovery path says what is wrong with it.
      writes.add({Family::Live, key, std::string()});
      continue;
    }
    writes.add({Family::Summaries, key, encode_summary_row(*model)});
    if (!is_settled(*model)) {
      writes.add({Family::Live, key, model->job.uid});
      ++live;
    }
  }
  writes.finish(kLiveIndexKey);
  spdlog::info("coordinator: indexed jobs={} live={}", keys.size(), live);
}

constexpr const char* kHistoryIndexKey = "history_index";

// A store written before History rows: every settled job gets its row (keyed by its summary's
// last transition, as job_writes keys it), and the count goes with the marker, so that an
// indexing cut short and done again counts each row once.
void build_history_index(Store& store) {
  IndexWrites writes(store, "settled jobs");
  int64_t rows = 0;
  store.scan(Family::Summaries, [&](std::string_view key, std::string_view row) {
    if (store.get(Family::Live, key)) return;
    try {
      FlatReader reader(row, record_reader_options());
      auto job = reader.root<api::Job>();
      const auto finished = finished_ms(job.getStatus().getState().getLastTransitionMs());
      writes.add({Family::History, history_key(finished, key), job.getUid().cStr()});
      ++rows;
    } catch (const kj::Exception& e) {
      spdlog::error("job={} has an unreadable summary row: {}", key, e.getDescription().cStr());
    }
  });
  if (rows) writes.add(counter_add(kFinishedJobsCounter, rows));
  writes.finish(kHistoryIndexKey);
  if (rows) spdlog::info("coordinator: indexed settled jobs={} for history retention", rows);
}

// Only the jobs in the live index get an actor again; settled ones are read from the store
// when asked for, so a restart's time grows with the live work, not with the history.
void recover_jobs(DirSelf* self) {
  auto& st = self->state;
  if (!st.env.store->get(Family::Meta, kLiveIndexKey)) build_live_index(*st.env.store);
  if (!st.env.store->get(Family::Meta, kHistoryIndexKey)) build_history_index(*st.env.store);
  std::vector<std::string> keys;
  st.env.store->scan(Family::Live,
                     [&](std::string_view key, std::string_view) { keys.emplace_back(key); });
  size_t count = 0;
  std::map<std::string, size_t> dropped_pods;  // by node the config no longer has
  std::vector<Write> gone;                     // index entries of jobs that are not there any more
  for (const auto& key : keys) {
    if (!stored_job_exists(*st.env.store, key)) {
      gone.push_back({Family::Live, key, std::nullopt});
      continue;
    }
    auto model = load_stored_job(*st.env.store, key);
    if (!model) {
      spdlog::error("job={} cannot be recovered: {}", key, model.error());
      continue;
    }
    model->live_row = true;
    auto k = model->key();
    // Bound pods hold their resources again before any node registers, so that nothing new is
    // placed into their room (messages from one sender arrive in order). A node the config no
    // longer has will never register: its pods hold nothing and are lost once the job is up.
    const auto group = pod_group_info(*model);
    std::set<std::string> dropped;
    for (const auto& [name, p] : std::as_const(model->pods)) {
      if (p.node.empty() || !is_live(p)) continue;
      if (!st.env.nodes.empty() && !st.env.nodes.count(p.node)) {
        dropped.insert(p.node);
        ++dropped_pods[p.node];
        continue;
      }
      for (const auto& t : model->job.spec.tasks)
        if (t.name == p.task_name)
          self->send(st.env.scheduler, reserve_atom::value, k, p.uid, p.node,
                     pod_resource_request(t), group);
    }
    auto actor = start_stored_job(self, std::move(*model), false).actor;
    self->send(actor, recover_atom::value);
    for (const auto& node : dropped)
      self->delayed_send(actor, st.env.dropped_node_wait, node_lost_atom::value, node,
                         std::string("it is not in the cluster config any more"), true);
    ++count;
  }
  for (const auto& [node, pods] : dropped_pods)
    spdlog::warn(
        "node={} is not in the cluster config: pods={} bound to it are lost once its lease is "
        "surely over, in {}ms",
        node, pods, st.env.dropped_node_wait.count());
  if (!gone.empty())
    st.env.store->commit(std::move(gone), [](std::string error) {
      if (!error.empty()) spdlog::error("cannot tidy the live index: {}", error);
    });
  if (count) spdlog::info("coordinator recovered jobs={}", count);
}

caf::behavior job_directory(DirSelf* self, JobDirectoryEnv env) {
  self->state.env = std::move(env);
  // Queues and classes first: the bindings the jobs hand back count in their queue.
  // What jobs may name: known before any submission is admitted (await holds the mailbox).
  self->request(self->state.env.scheduling, caf::infinite, scheduling_names_atom::value)
      .await([self](std::vector<std::string>& queues, std::vector<std::string>& classes,
                    std::string& default_class, std::vector<std::string>& closed) {
        take_names(self->state.scheduling, queues, classes, default_class, closed);
      });
  recover_jobs(self);
  // Job actors are not linked (one failing must not take the coordinator down), so a shutdown
  // is passed on to them explicitly.
  self->set_exit_handler([=](caf::exit_msg& msg) {
    for (auto& [key, entry] : self->state.jobs) self->send_exit(entry.actor, msg.reason);
    self->quit(msg.reason);
  });
  return {
      [=](api_atom, const std::string& bytes) { return handle_api(self, bytes); },
      [=](register_atom, const std::string& bytes, const caf::actor&) { on_register(self, bytes); },
      [=](report_atom, const std::string& bytes) {
        try {
          route_report(self, bytes);
        } catch (const kj::Exception& e) {
          spdlog::error("malformed pod report: {}", e.getDescription().cStr());
        }
      },
      [=](capacity_atom, const std::string& node, const ResourceList& capacity, bool ready,
          const std::string&, const std::map<std::string, std::string>& labels) {
        auto etc = labels.find(kPrivateEtcLabel);
        self->state.nodes[node] =
            NodeCapacity{capacity, ready, etc == labels.end() || etc->second == "true"};
      },
      [=](node_lost_atom a, const std::string& node, const std::string& why, bool lease_over) {
        for (const auto& [key, entry] : self->state.jobs)
          if (!entry.deleting && !entry.passivating)
            self->send(entry.actor, a, node, why, lease_over);
      },
      [=](expire_atom, const std::string& key, const std::string& uid) {
        auto it = self->state.jobs.find(key);
        if (it == self->state.jobs.end() || it->second.actor.address() != self->current_sender())
          return;  // a successor of the same name is not the one that expired
        delete_entry(self, key, [key, uid](const std::string& error) {
          if (error.empty())
            spdlog::info("job={} uid={} deleted after ttlSecondsAfterFinished", key, uid);
          else
            spdlog::error("job={} ttl delete failed: {}", key, error);
        });
      },
      [=](purge_atom, const std::string& key, const std::string& uid) {
        auto rp = self->make_response_promise<std::string>();
        purge_job(self, key, uid, rp);
        return rp;
      },
      [=](flow_create_atom, const std::string& flow_key, const std::string& flow_uid,
          JobSpec& spec) { return flow_create(self, flow_key, flow_uid, std::move(spec)); },
      [=](flow_delete_atom, const std::string& flow_key, const std::string& flow_uid,
          const std::vector<std::string>& keys) {
        auto rp = self->make_response_promise<std::string>();
        delete_flow_jobs(self, flow_key, flow_uid, keys,
                         [rp](const std::string& error) mutable { rp.deliver(error); });
        return rp;
      },
      [=](flow_delete_atom, const std::string& key, const std::string& uid) {
        // One of a flow's jobs, failed, deleted for a retry.
        auto rp = self->make_response_promise<std::string>();
        auto done = [rp](const std::string& error) mutable { rp.deliver(error); };
        auto it = self->state.jobs.find(key);
        std::string stored_uid;
        if (it == self->state.jobs.end())
          if (auto rows = read_job_rows(*self->state.env.store, key))
            if (auto m = decode_job_row(rows->job)) stored_uid = m->job.uid;
        if (it != self->state.jobs.end() ? it->second.uid != uid : stored_uid != uid)
          done("");  // gone already
        else
          delete_entry(self, key, done);
        return rp;
      },
      [=](committed_atom, uint64_t seq, const std::string& error) {
        self->state.commits.done(seq, error);
      },
      [=](passivate_atom, const std::string& key, const std::string& uid) {
        return passivate(self, key, uid);
      },
      [=](pods_watched_atom, bool on) { self->state.pods_watched = on; },
      [=](update_atom, JobSpec& applied) { return update_volcano_job(self, std::move(applied)); },
      [=](update_atom, BatchJobSpec& applied) {
        return update_batch_job(self, std::move(applied));
      },
      // caldera apply's new objects: a submission of them (Response bytes)
      [=](create_atom, uint64_t id, ParsedDocuments& docs) {
        return submit(self, id, std::move(docs), Diagnostics{});
      },
      [=](scheduling_names_atom, const std::vector<std::string>& queues,
          const std::vector<std::string>& classes, const std::string& default_class,
          const std::vector<std::string>& closed) {
        take_names(self->state.scheduling, queues, classes, default_class, closed);
      },
      [=](live_jobs_atom, const std::string& ns) {
        // Every job with an actor: one that stops meanwhile fails the hub's list, which then
        // reads the store; one being deleted tells its pods' deletes.
        std::vector<std::string> keys;
        std::vector<caf::actor> actors;
        auto& jobs = self->state.jobs;
        for (auto it = ns.empty() ? jobs.begin() : jobs.lower_bound(ns + "/");
             it != jobs.end() && in_namespace(it->first, ns); ++it) {
          keys.push_back(it->first);
          actors.push_back(caf::actor_cast<caf::actor>(it->second.actor));
        }
        return caf::result<std::vector<std::string>, std::vector<caf::actor>>(std::move(keys),
                                                                              std::move(actors));
      },
  };
}

}  // namespace

protocol::directory spawn_job_directory(caf::actor_system& sys, JobDirectoryEnv env) {
  // Dynamically typed inside: it parks and replays messages of every kind (passivation).
  return caf::actor_cast<protocol::directory>(sys.spawn(job_directory, std::move(env)));
}

}  // namespace caldera
