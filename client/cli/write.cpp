// submit, delete and the job commands: requests that change the cluster.
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "client/cli/commands.hpp"

namespace caldera::cli {
namespace {

// kubectl's singular resource name of a Submitted.kind.
const char* resource_of(capnp::Text::Reader kind) {
  if (kind == "JobTemplate") return kTemplateResource;
  if (kind == "JobFlow") return kFlowResource;
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

int submit(const Globals& g, const std::string& file) {
  std::stringstream text;
  if (file == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(file, std::ios::binary);
    if (!in) return fail("cannot read " + file);
    text << in.rdbuf();
  }
  const std::string yaml = text.str();
  int rc = 0;
  auto r = call(
      g,
      [&](api::Request::Builder b) {
        // With its size: a std::string converts through c_str(), which would stop at a NUL byte
        // (the server refuses those, naming the offset).
        b.setSubmitYaml(capnp::Text::Reader(yaml.data(), yaml.size()));
        if (g.ns_given) b.setNamespace(g.ns);
      },
      &rc);
  if (!r) return rc;
  for (auto s : r->root<api::Response>().getSubmitted())
    report(g, resource_of(s.getKind()), s.getName().cStr(), "created");
  return 0;
}

int delete_object(const Globals& g, Deletable kind, const std::string& name) {
  int rc = 0;
  auto r = call(
      g,
      [&](api::Request::Builder b) {
        auto ref = kind == Deletable::Job           ? b.initDeleteJob()
                   : kind == Deletable::JobTemplate ? b.initDeleteJobTemplate()
                                                    : b.initDeleteJobFlow();
        ref.setNamespace(g.ns);
        ref.setName(name);
      },
      &rc);
  if (!r) return rc;
  const char* resource = kind == Deletable::Job           ? kJobResource
                         : kind == Deletable::JobTemplate ? kTemplateResource
                                                          : kFlowResource;
  // kubectl: job.batch.volcano.sh "NAME" deleted
  if (g.output == "name")
    print_name(resource, name);
  else
    std::cout << resource << " \"" << name << "\" deleted\n";
  return 0;
}

int command(const Globals& g, const std::string& action, const std::string& name) {
  // One id for every attempt, so that a command retried after a lost connection acts once.
  std::random_device rd;
  const std::string id = fmt::format("{}-{}-{:08x}", now_ms(), getpid(), rd());
  int rc = 0;
  std::unique_ptr<FlatReader> r;
  for (int attempt = 0; attempt < 3 && (attempt == 0 || rc == kRetry); ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(200 << attempt));
    r = call(
        g,
        [&](api::Request::Builder b) {
          auto c = b.initCommand();
          c.getJob().setNamespace(g.ns);
          c.getJob().setName(name);
          c.setAction(action);
          c.setCommandId(id);
        },
        &rc, attempt < 2);
  }
  if (!r) return rc;
  report(g, kJobResource, name, action + " issued");
  return 0;
}

}  // namespace caldera::cli
