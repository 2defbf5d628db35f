// submit, delete and the job commands: requests that change the cluster.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "client/cli/commands.hpp"
#include "common/clock.hpp"
#include "messages/yaml/job_yaml.hpp"

namespace caldera::cli {
namespace {

// kubectl's singular resource name of a Submitted.kind.
const char* resource_of(capnp::Text::Reader kind) {
  if (kind == "JobTemplate") return kTemplateResource;
  if (kind == "JobFlow") return kFlowResource;
  if (kind == "Queue") return kQueueResource;
  if (kind == "PriorityClass") return kPriorityClassResource;
  if (kind == "Job.batch") return kBatchJobResourceName;
  return kJobResource;
}

// Prints what was done to `resource`/`name`: kubectl's line, or only the name with -o name.
void report(const Globals& g, const std::string& resource, const std::string& name,
            const std::string& done) {
  if (g.output == "name")
    print_name(resource, name);
  else
    std::cout << resource << "/" << name << " " << done << "\n";
}

}  // namespace

// The file's bytes, or standard input's for "-"; nullopt (said) when it cannot be read.
std::optional<std::string> read_input(const std::string& file) {
  std::stringstream text;
  if (file == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      fail("cannot read " + file);
      return std::nullopt;
    }
    text << in.rdbuf();
  }
  return text.str();
}

int submit(const Globals& g, const std::string& file) {
  auto input = read_input(file);
  if (!input) return 1;
  const std::string& yaml = *input;
  // Sent again like a read, even after an attempt the coordinator may have carried out (it was
  // lost while it had the request, or the connection broke once the request was out): a
  // submission is all or nothing and names every object (generateName is not supported), so a
  // second sending can never create anything twice. It either creates everything (the earlier
  // attempt was not carried out) or is refused with AlreadyExists.
  //
  // That AlreadyExists is ambiguous: the earlier attempt may have created the objects, or they
  // were there before. It stays an error, followed by a note that says so. A kubectl user
  // expects `create` to say "created" only when the server created the object for this command
  // and to fail on a duplicate, and scripts rely on it (create as a lock, `create && wait`):
  // claiming "created" could hide a real duplicate, while the error costs one `get` to check.
  bool maybe_taken = false;
  Retry retry;
  retry.maybe_taken = &maybe_taken;
  int rc = 0;
  Session session(g);
  auto r = session.exchange(
      [&](api::Request::Builder b) {
        // With its size: a std::string converts through c_str(), which would stop at a NUL byte
        // (the server refuses those, naming the offset).
        b.setSubmitYaml(capnp::Text::Reader(yaml.data(), yaml.size()));
        if (g.ns_given) b.setNamespace(g.ns);
      },
      &rc, retry);
  if (!r) return rc;
  auto resp = r->root<api::Response>();
  if (resp.which() == api::Response::ERRORS) {
    rc = print_errors(resp);
    bool exists = false;
    for (auto e : resp.getErrors()) exists |= e.getCode() == api::Error::Code::ALREADY_EXISTS;
    if (exists && maybe_taken)
      std::cerr << "note: an earlier attempt of this submit reached the coordinator, which was "
                   "lost before it answered; that attempt may have created what now already "
                   "exists (check with caldera get)\n";
    return rc;
  }
  for (auto s : resp.getSubmitted())
    report(g, resource_of(s.getKind()), s.getName().cStr(), "created");
  return 0;
}

int apply(const Globals& g, const std::string& file) {
  auto input = read_input(file);
  if (!input) return 1;
  const std::string& yaml = *input;
  // Sent again like a read: an apply states what should be, so a second sending after an attempt
  // the coordinator may have carried out finds it done ("unchanged") and changes nothing twice.
  int rc = 0;
  Session session(g);
  auto r = session.exchange(
      [&](api::Request::Builder b) {
        b.setApplyYaml(capnp::Text::Reader(yaml.data(), yaml.size()));
        if (g.ns_given) b.setNamespace(g.ns);
      },
      &rc);
  if (!r) return rc;
  auto resp = r->root<api::Response>();
  if (resp.which() == api::Response::ERRORS) return print_errors(resp);
  if (resp.which() != api::Response::APPLIED) return fail("unexpected answer to apply");
  auto applied = resp.getApplied();
  for (auto o : applied.getObjects())
    report(g, resource_of(o.getKind()), o.getName().cStr(), o.getAction().cStr());
  return applied.getErrors().size() > 0 ? print_errors(applied.getErrors()) : 0;
}

int delete_file(const Globals& g, const std::string& file) {
  auto input = read_input(file);
  if (!input) return 1;
  Diagnostics diags;
  auto docs = parse_yaml(*input, diags, g.ns_given ? g.ns : std::string());
  for (const auto& w : diags.warnings) std::cerr << "Warning: " << to_string(w) << "\n";
  if (!diags.ok()) {
    for (const auto& e : diags.errors) std::cerr << "error: " << to_string(e) << "\n";
    return 1;
  }
  if (docs.empty()) return fail("no Job, JobTemplate, JobFlow, Queue or PriorityClass in " + file);
  // Each as `caldera delete KIND NAME` in its namespace, users before what they use (a queue
  // in use cannot be deleted); one that fails leaves the others deleted, as kubectl does.
  int rc = 0;
  auto one = [&](Deletable kind, const std::string& ns, const std::string& name) {
    Globals in = g;
    if (!ns.empty()) in.ns = ns;
    rc = std::max(rc, delete_object(in, kind, name));
  };
  for (const auto& f : docs.flows) one(Deletable::JobFlow, f.value.namespace_, f.value.name);
  for (const auto& j : docs.jobs) one(Deletable::Job, j.value.namespace_, j.value.name);
  for (const auto& j : docs.batch_jobs) one(Deletable::BatchJob, j.value.namespace_, j.value.name);
  for (const auto& t : docs.templates)
    one(Deletable::JobTemplate, t.value.namespace_, t.value.name);
  for (const auto& q : docs.queues) one(Deletable::Queue, "", q.value.name);
  for (const auto& c : docs.priority_classes) one(Deletable::PriorityClass, "", c.value.name);
  return rc;
}

int operate_queue(const Globals& g, const std::string& name, const std::string& action) {
  int rc = 0;
  Session session(g);
  auto r = session.exchange(
      [&](api::Request::Builder b) {
        auto op = b.initOperateQueue();
        op.setName(name);
        op.setAction(action);
      },
      &rc);
  if (!r) return rc;
  auto resp = r->root<api::Response>();
  if (resp.which() == api::Response::ERRORS) return print_errors(resp);
  // vcctl queue operate prints nothing; kubectl's habit is a line of what changed.
  report(g, kQueueResource, name, action == "open" ? "opened" : "closed");
  return 0;
}

int delete_object(const Globals& g, Deletable kind, const std::string& name) {
  const char* resource = kind == Deletable::Job           ? kJobResource
                         : kind == Deletable::BatchJob    ? kBatchJobResourceName
                         : kind == Deletable::JobTemplate ? kTemplateResource
                         : kind == Deletable::JobFlow     ? kFlowResource
                         : kind == Deletable::Queue       ? kQueueResource
                                                          : kPriorityClassResource;
  // Deleting is idempotent: a second sending cannot delete anything else. After an attempt the
  // coordinator may have carried out (it was lost while it had the request), a retry that finds
  // the object gone most likely finds the work of that attempt: what the user asked for holds,
  // so the command succeeds, as if the first answer had come, with a warning that says why
  // (rather than failing a `delete && ...` script because of its own first attempt).
  bool maybe_taken = false;
  Retry retry;
  retry.maybe_taken = &maybe_taken;
  int rc = 0;
  Session session(g);
  auto r = session.exchange(
      [&](api::Request::Builder b) {
        // Queues and classes are cluster-scoped: a name only.
        if (kind == Deletable::Queue) return b.setDeleteQueue(name);
        if (kind == Deletable::PriorityClass) return b.setDeletePriorityClass(name);
        const bool job = kind == Deletable::Job || kind == Deletable::BatchJob;
        auto ref = job                              ? b.initDeleteJob()
                   : kind == Deletable::JobTemplate ? b.initDeleteJobTemplate()
                                                    : b.initDeleteJobFlow();
        ref.setNamespace(g.ns);
        ref.setName(name);
        if (kind == Deletable::BatchJob) ref.setKind(kBatchJobKind);
      },
      &rc, retry);
  if (!r) return rc;
  auto resp = r->root<api::Response>();
  if (resp.which() == api::Response::ERRORS) {
    const bool gone =
        resp.getErrors().size() > 0 && resp.getErrors()[0].getCode() == api::Error::Code::NOT_FOUND;
    if (!gone || !maybe_taken) return print_errors(resp);
    std::cerr << "Warning: " << resource << " \"" << name
              << "\" was not found when the delete was sent again: the earlier attempt, which "
                 "the coordinator had when it was lost, most likely deleted it\n";
  }
  // kubectl: job.batch.volcano.sh "NAME" deleted
  if (g.output == "name")
    print_name(resource, name);
  else
    std::cout << resource << " \"" << name << "\" deleted\n";
  return 0;
}

int command(const Globals& g, const std::string& action, const std::string& name) {
  // One id for every sending, so that a command retried after the coordinator was lost while it
  // had it acts once: the job remembers the ids of the commands it carried out (in its record),
  // and answers a known one "done" without acting again.
  std::random_device rd;
  const std::string id = fmt::format("{}-{}-{:08x}", system_now_ms(), getpid(), rd());
  int rc = 0;
  auto r = call(
      g,
      [&](api::Request::Builder b) {
        auto c = b.initCommand();
        c.getJob().setNamespace(g.ns);
        c.getJob().setName(name);
        c.setAction(action);
        c.setCommandId(id);
      },
      &rc);
  if (!r) return rc;
  report(g, kJobResource, name, action + " issued");
  return 0;
}

int patch_batch_job(const Globals& g, const std::string& name, const std::string& type,
                    const std::string& patch) {
  // The fields a Job's patch may change are scalars: a strategic merge patch (kubectl's
  // default) of them is a merge patch.
  if (type != "merge" && type != "strategic")
    return fail("--type " + type +
                " is not supported: caldera takes --type merge (a JSON merge "
                "patch; strategic, kubectl's default, means the same for a Job's fields)");
  // A patch names the values it sets: sending it again sets them again.
  int rc = 0;
  auto r = call(
      g,
      [&](api::Request::Builder b) {
        auto p = b.initPatchJob();
        p.getJob().setNamespace(g.ns);
        p.getJob().setName(name);
        p.getJob().setKind(kBatchJobKind);
        p.setPatch(patch);
      },
      &rc);
  if (!r) return rc;
  report(g, kBatchJobResourceName, name, "patched");
  return 0;
}

int backup(const Globals& g, const std::string& dir) {
  // The directory is the coordinator's: a relative one is taken from here, which is where it is
  // when the CLI runs on the coordinator's machine.
  std::error_code ec;
  auto absolute = std::filesystem::absolute(dir, ec).lexically_normal().string();
  if (ec) absolute = dir;
  int rc = 0;
  auto r = call(
      g, [&](api::Request::Builder b) { b.setBackup(absolute); }, &rc);
  if (!r) return rc;
  std::cout << "backup of the coordinator's store written to " << absolute
            << " on its machine; restore it with calderad --restore-from " << absolute << "\n";
  return 0;
}

}  // namespace caldera::cli
