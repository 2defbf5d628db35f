// caldera: the command-line client (kubectl / vcctl habits) for a caldera cluster.
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include <kj/exception.h>

#include "client/client.hpp"
#include "client/render.hpp"
#include "messages/codec.hpp"
#include "messages/job_status.hpp"
#include "messages/yaml_duration.hpp"

using namespace caldera;
using namespace std::chrono_literals;

namespace {

struct Globals {
  std::string server;
  std::string ns = "default";
  std::string token;
};

int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

int fail(const std::string& message) {
  std::cerr << "error: " << message << "\n";
  return 1;
}

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

// call()'s exit code when the request may be retried: no connection, or "unavailable".
constexpr int kRetry = -2;

// One request; prints warnings and errors. Returns the response only when it is not an error.
// With may_retry, a failure that a retry can cure is silent and leaves kRetry in exit_code.
std::unique_ptr<FlatReader> call(const Globals& g,
                                 const std::function<void(api::Request::Builder)>& fill,
                                 int* exit_code, bool may_retry = false) {
  auto client = Client::connect(g.server, 5s);
  if (!client) {
    *exit_code = may_retry ? kRetry : fail(client.error());
    return nullptr;
  }
  auto reply = (*client)->call([&](api::Request::Builder r) {
    r.setToken(g.token);
    fill(r);
  });
  if (!reply) {
    *exit_code = may_retry ? kRetry : fail(reply.error());
    return nullptr;
  }
  auto resp = (*reply)->root<api::Response>();
  if (may_retry && resp.which() == api::Response::ERRORS && resp.getErrors().size() > 0 &&
      resp.getErrors()[0].getCode() == api::Error::Code::UNAVAILABLE) {
    *exit_code = kRetry;
    return nullptr;
  }
  for (auto w : resp.getWarnings()) std::cerr << "Warning: " << w.cStr() << "\n";
  if (resp.which() == api::Response::ERRORS) {
    for (auto e : resp.getErrors()) {
      std::cerr << "error (" << code_name(e.getCode()) << "): ";
      if (e.getPath().size()) std::cerr << e.getPath().cStr() << ": ";
      std::cerr << e.getMessage().cStr() << "\n";
    }
    *exit_code = 1;
    return nullptr;
  }
  *exit_code = 0;
  return std::move(*reply);
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

// The job `name` in the current namespace, or nullopt (the error is printed, rc set).
std::optional<Job> fetch_job(const Globals& g, const std::string& name, int* rc) {
  auto r = call(
      g,
      [&](api::Request::Builder b) {
        auto ref = b.initGetJob();
        ref.setNamespace(g.ns);
        ref.setName(name);
      },
      rc);
  if (!r) return std::nullopt;
  return decode(r->root<api::Response>().getJob());
}

int get_jobs(const Globals& g, const std::string& name, const std::string& output, bool all_ns) {
  int rc = 0;
  if (!name.empty()) {
    auto job = fetch_job(g, name, &rc);
    if (!job) return rc;
    if (output == "json" || output == "yaml")
      print_json(job_to_json(*job), output);
    else
      print_table(jobs_table({*job}, output == "wide", now_ms()));
    return 0;
  }
  auto r = call(
      g, [&](api::Request::Builder b) { b.initListJobs().setNamespace(all_ns ? "" : g.ns); }, &rc);
  if (!r) return rc;
  std::vector<Job> jobs;
  for (auto j : r->root<api::Response>().getJobs()) jobs.push_back(decode(j));
  if (output == "json" || output == "yaml") {
    auto items = nlohmann::json::array();
    for (const auto& j : jobs) items.push_back(job_to_json(j));
    print_json(list_of(items), output);
  } else {
    print_table(jobs_table(jobs, output == "wide", now_ms()));
  }
  return 0;
}

// `get` of a JobTemplate or JobFlow kind: how to ask for one or all, and how to show them.
template <class T>
struct GetKind {
  std::function<api::ObjectRef::Builder(api::Request::Builder)> init_get;
  std::function<api::ListFilter::Builder(api::Request::Builder)> init_list;
  std::function<T(api::Response::Reader)> read_one;
  std::function<std::vector<T>(api::Response::Reader)> read_list;
  nlohmann::json (*to_json)(const T&);
  std::string (*table)(const std::vector<T>&, bool, int64_t);
};

template <class T>
int get_objects(const Globals& g, const std::string& name, const std::string& output, bool all_ns,
                const GetKind<T>& kind) {
  int rc = 0;
  std::unique_ptr<FlatReader> r = call(
      g,
      [&](api::Request::Builder b) {
        if (!name.empty()) {
          auto ref = kind.init_get(b);
          ref.setNamespace(g.ns);
          ref.setName(name);
        } else {
          kind.init_list(b).setNamespace(all_ns ? "" : g.ns);
        }
      },
      &rc);
  if (!r) return rc;
  auto resp = r->root<api::Response>();
  std::vector<T> items;
  if (name.empty())
    items = kind.read_list(resp);
  else
    items.push_back(kind.read_one(resp));
  if (output == "json" || output == "yaml") {
    auto list = nlohmann::json::array();
    for (const auto& item : items) list.push_back(kind.to_json(item));
    print_json(name.empty() ? list_of(list) : list[0], output);
  } else {
    print_table(kind.table(items, output == "wide", now_ms()));
  }
  return 0;
}

template <class T, class List>
std::vector<T> decode_all(List list) {
  std::vector<T> out;
  for (auto item : list) out.push_back(decode(item));
  return out;
}

const GetKind<JobTemplate> kTemplates{
    [](api::Request::Builder b) { return b.initGetJobTemplate(); },
    [](api::Request::Builder b) { return b.initListJobTemplates(); },
    [](api::Response::Reader r) { return decode(r.getJobTemplate()); },
    [](api::Response::Reader r) { return decode_all<JobTemplate>(r.getJobTemplates()); },
    template_to_json,
    templates_table};

const GetKind<JobFlow> kFlows{
    [](api::Request::Builder b) { return b.initGetJobFlow(); },
    [](api::Request::Builder b) { return b.initListJobFlows(); },
    [](api::Response::Reader r) { return decode(r.getJobFlow()); },
    [](api::Response::Reader r) { return decode_all<JobFlow>(r.getJobFlows()); },
    flow_to_json,
    flows_table};

std::vector<Pod> fetch_pods(const Globals& g, const std::string& job, bool all_ns, int* rc) {
  std::vector<Pod> pods;
  auto r = call(
      g,
      [&](api::Request::Builder b) {
        auto f = b.initListPods();
        f.setNamespace(all_ns ? "" : g.ns);
        f.setJobName(job);
      },
      rc);
  if (!r) return pods;
  for (auto p : r->root<api::Response>().getPods()) pods.push_back(decode(p));
  return pods;
}

int get_pods(const Globals& g, const std::string& name, const std::string& job,
             const std::string& output, bool all_ns) {
  int rc = 0;
  auto pods = fetch_pods(g, job, all_ns, &rc);
  if (rc) return rc;
  if (!name.empty()) {
    std::erase_if(pods, [&](const Pod& p) { return p.name != name; });
    if (pods.empty()) return fail("pods \"" + name + "\" not found in namespace " + g.ns);
  }
  if (output == "json" || output == "yaml") {
    auto items = nlohmann::json::array();
    for (const auto& p : pods) items.push_back(pod_to_json(p));
    print_json(name.empty() ? list_of(items) : items[0], output);
  } else {
    print_table(pods_table(pods, output == "wide", now_ms()));
  }
  return 0;
}

int get_nodes(const Globals& g, const std::string& output) {
  int rc = 0;
  auto r = call(
      g, [&](api::Request::Builder b) { b.setListNodes(); }, &rc);
  if (!r) return rc;
  std::vector<NodeInfo> nodes;
  for (auto n : r->root<api::Response>().getNodes()) nodes.push_back(decode(n));
  if (output == "json" || output == "yaml") {
    auto items = nlohmann::json::array();
    for (const auto& n : nodes) items.push_back(node_to_json(n));
    print_json(list_of(items), output);
  } else {
    print_table(nodes_table(nodes, output == "wide"));
  }
  return 0;
}

// kubectl's singular resource name of a Submitted.kind.
std::string resource_of(capnp::Text::Reader kind) {
  if (kind == "JobTemplate") return "jobtemplate.flow.volcano.sh";
  if (kind == "JobFlow") return "jobflow.flow.volcano.sh";
  return "job.batch.volcano.sh";
}

int submit(const Globals& g, const std::string& file) {
  std::stringstream text;
  if (file == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(file);
    if (!in) return fail("cannot read " + file);
    text << in.rdbuf();
  }
  int rc = 0;
  auto r = call(
      g, [&](api::Request::Builder b) { b.setSubmitYaml(text.str()); }, &rc);
  if (!r) return rc;
  for (auto s : r->root<api::Response>().getSubmitted())
    std::cout << resource_of(s.getKind()) << "/" << s.getName().cStr() << " created\n";
  return 0;
}

int describe(const Globals& g, const std::string& name) {
  int rc = 0;
  auto job = fetch_job(g, name, &rc);
  if (!job) return rc;
  auto pods = fetch_pods(g, name, false, &rc);
  if (rc) return rc;
  std::cout << describe_job(*job, pods, now_ms());
  return 0;
}

// kubectl wait: exits 0 once the job is in the phase; non-zero on timeout or when the job ends
// in another phase it cannot leave.
int wait_job(const Globals& g, const std::string& name, const std::string& condition,
             const std::string& timeout_text) {
  const std::string prefix = "phase=";
  if (condition.rfind(prefix, 0) != 0)
    return fail("--for must be phase=PHASE (e.g. --for=phase=Completed)");
  auto want = parse_job_phase(condition.substr(prefix.size()));
  if (!want) return fail("unknown phase '" + condition.substr(prefix.size()) + "'");
  auto timeout = parse_go_duration_ms(timeout_text);
  if (!timeout) return fail("--timeout must be a duration such as 30s or 5m");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(*timeout);
  auto client = Client::connect(g.server, 5s);
  if (!client) return fail(client.error());
  auto pause = 20ms;
  std::string last = "unknown";
  for (;;) {
    auto reply = (*client)->call([&](api::Request::Builder b) {
      b.setToken(g.token);
      auto ref = b.initGetJob();
      ref.setNamespace(g.ns);
      ref.setName(name);
    });
    if (!reply) return fail(reply.error());
    auto resp = (*reply)->root<api::Response>();
    if (resp.which() == api::Response::ERRORS) {
      for (auto e : resp.getErrors()) std::cerr << "error: " << e.getMessage().cStr() << "\n";
      return 1;
    }
    auto phase = parse_job_phase(resp.getJob().getStatus().getState().getPhase().cStr());
    last = resp.getJob().getStatus().getState().getPhase().cStr();
    if (phase == want) {
      std::cout << "job.batch.volcano.sh/" << name << " condition met\n";
      return 0;
    }
    if (phase && (is_finished(*phase) || *phase == JobPhase::Aborted))
      return fail("job " + name + " reached phase " + last + ", not " +
                  std::string(to_string(*want)) + " (" +
                  resp.getJob().getStatus().getState().getMessage().cStr() + ")");
    if (std::chrono::steady_clock::now() + pause > deadline)
      return fail("timed out after " + timeout_text + " waiting for job " + name +
                  " to reach phase " + std::string(to_string(*want)) + " (phase now " + last + ")");
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(250));
  }
}

int logs(const Globals& g, const std::string& pod, const std::string& container) {
  auto client = Client::connect(g.server, 5s);
  if (!client) return fail(client.error());
  int64_t offset = 0;
  for (;;) {
    auto reply = (*client)->call([&](api::Request::Builder b) {
      b.setToken(g.token);
      auto req = b.initPodLog();
      req.getPod().setNamespace(g.ns);
      req.getPod().setName(pod);
      req.setContainer(container);
      req.setOffset(offset);
    });
    if (!reply) return fail(reply.error());
    auto resp = (*reply)->root<api::Response>();
    if (resp.which() == api::Response::ERRORS) {
      for (auto e : resp.getErrors()) std::cerr << "error: " << e.getMessage().cStr() << "\n";
      return 1;
    }
    auto log = resp.getLog();
    auto data = log.getData();
    std::cout.write(reinterpret_cast<const char*>(data.begin()),
                    static_cast<std::streamsize>(data.size()));
    if (log.getNextOffset() == offset || log.getEof()) break;
    offset = log.getNextOffset();
  }
  std::cout.flush();
  return 0;
}

// `resource` is what kubectl prints: job.batch.volcano.sh "NAME" deleted.
int delete_object(const Globals& g, const std::string& name, const std::string& resource,
                  const std::function<api::ObjectRef::Builder(api::Request::Builder)>& init) {
  int rc = 0;
  auto r = call(
      g,
      [&](api::Request::Builder b) {
        auto ref = init(b);
        ref.setNamespace(g.ns);
        ref.setName(name);
      },
      &rc);
  if (!r) return rc;
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
  std::cout << "job.batch.volcano.sh/" << name << " " << action << " issued\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"caldera: run Volcano-style batch jobs on a caldera cluster"};
  app.require_subcommand(1);
  Globals g;
  const char* env_server = std::getenv("CALDERA_SERVER");
  const char* env_token = std::getenv("CALDERA_TOKEN");
  g.server = env_server ? env_server : "127.0.0.1:7070";
  g.token = env_token ? env_token : "";
  app.add_option("--server,-s", g.server,
                 "HOST:PORT of a calderad (default $CALDERA_SERVER or 127.0.0.1:7070)");
  app.add_option("--namespace,-n", g.ns, "namespace (default: default)");
  app.add_option("--token", g.token, "cluster auth token (default $CALDERA_TOKEN)");

  int rc = 0;
  std::string file, output, name, job_filter, condition, timeout = "30s", container;
  bool all_ns = false;

  auto* submit_cmd = app.add_subcommand(
      "submit", "submit Job, JobTemplate and JobFlow documents from a YAML file");
  submit_cmd->add_option("-f,--filename", file, "YAML file, or - for standard input")->required();
  submit_cmd->callback([&] { rc = submit(g, file); });

  auto* get = app.add_subcommand("get", "list or show jobs, pods, jobtemplates, jobflows or nodes");
  get->require_subcommand(1);
  auto add_get = [&](const std::string& what, const std::string& help, bool named) {
    auto* c = get->add_subcommand(what, help);
    if (named) c->add_option("name", name, "name");
    c->add_option("-o,--output", output, "wide, json or yaml");
    c->add_flag("-A,--all-namespaces", all_ns, "every namespace");
    return c;
  };
  for (auto alias : {"jobs", "job"}) {
    add_get(alias, "Volcano jobs", true)->callback([&] { rc = get_jobs(g, name, output, all_ns); });
  }
  for (auto alias : {"pods", "pod"}) {
    auto* c = add_get(alias, "pods of jobs", true);
    c->add_option("--job", job_filter, "only this job's pods");
    c->callback([&] { rc = get_pods(g, name, job_filter, output, all_ns); });
  }
  for (auto alias : {"jobtemplates", "jobtemplate"}) {
    add_get(alias, "Volcano JobTemplates", true)->callback([&] {
      rc = get_objects(g, name, output, all_ns, kTemplates);
    });
  }
  for (auto alias : {"jobflows", "jobflow"}) {
    add_get(alias, "Volcano JobFlows", true)->callback([&] {
      rc = get_objects(g, name, output, all_ns, kFlows);
    });
  }
  for (auto alias : {"nodes", "node"})
    add_get(alias, "cluster nodes", false)->callback([&] { rc = get_nodes(g, output); });

  auto* desc = app.add_subcommand("describe", "show a job in detail with its pods");
  auto* desc_job = desc->add_subcommand("job", "a Volcano job");
  desc_job->add_option("name", name)->required();
  desc_job->callback([&] { rc = describe(g, name); });
  desc->require_subcommand(1);

  auto* wait = app.add_subcommand("wait", "wait until a job reaches a phase");
  auto* wait_cmd = wait->add_subcommand("job", "a Volcano job");
  wait_cmd->add_option("name", name)->required();
  wait_cmd->add_option("--for", condition, "phase=PHASE")->required();
  wait_cmd->add_option("--timeout", timeout, "how long to wait (default 30s)");
  wait_cmd->callback([&] { rc = wait_job(g, name, condition, timeout); });
  wait->require_subcommand(1);

  auto* logs_cmd = app.add_subcommand("logs", "print a pod's output (stdout and stderr)");
  logs_cmd->add_option("pod", name)->required();
  logs_cmd->add_option("-c,--container", container, "the container, when the pod has several");
  logs_cmd->callback([&] { rc = logs(g, name, container); });

  auto* del = app.add_subcommand(
      "delete", "delete a job (with its pods and logs), a jobtemplate or a jobflow");
  const std::vector<std::tuple<std::string, std::string, std::string,
                               std::function<api::ObjectRef::Builder(api::Request::Builder)>>>
      deletable{{"job", "a Volcano job", "job.batch.volcano.sh",
                 [](api::Request::Builder b) { return b.initDeleteJob(); }},
                {"jobtemplate", "a Volcano JobTemplate", "jobtemplate.flow.volcano.sh",
                 [](api::Request::Builder b) { return b.initDeleteJobTemplate(); }},
                {"jobflow", "a Volcano JobFlow", "jobflow.flow.volcano.sh",
                 [](api::Request::Builder b) { return b.initDeleteJobFlow(); }}};
  for (const auto& kind : deletable) {
    auto* c = del->add_subcommand(std::get<0>(kind), std::get<1>(kind));
    c->add_option("name", name)->required();
    c->callback([&] { rc = delete_object(g, name, std::get<2>(kind), std::get<3>(kind)); });
  }
  del->require_subcommand(1);

  const std::vector<std::pair<std::string, std::string>> commands{{"abort", "AbortJob"},
                                                                  {"resume", "ResumeJob"},
                                                                  {"restart", "RestartJob"},
                                                                  {"terminate", "TerminateJob"},
                                                                  {"complete", "CompleteJob"}};
  for (const auto& [verb, action] : commands) {
    auto* c = app.add_subcommand(verb, "issue " + action + " to a job");
    auto* j = c->add_subcommand("job", "a Volcano job");
    j->add_option("name", name)->required();
    std::string a = action;
    j->callback([&, a] { rc = command(g, a, name); });
    c->require_subcommand(1);
  }

  try {
    CLI11_PARSE(app, argc, argv);
  } catch (const kj::Exception& e) {
    return fail(std::string("malformed response from the server: ") + e.getDescription().cStr());
  }
  return rc;
}
