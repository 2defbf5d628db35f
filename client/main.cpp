// caldera: the command-line client (kubectl / vcctl habits) for a caldera cluster.
// This file maps the command line onto the commands of client/cli/.
#include <csignal>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <kj/exception.h>

#include "client/cli/commands.hpp"
#include "client/cli/watch.hpp"
#include "messages/yaml/yaml_duration.hpp"

using namespace caldera::cli;

namespace {

// What the command line chose: its name (for messages), the -o formats it prints besides its
// default, and what runs it. Set by the chosen subcommand's callback, run after parsing.
struct Chosen {
  std::string command;
  std::vector<std::string> formats;
  std::function<int()> run;
};

const std::vector<std::string> kGetFormats{"wide", "json", "yaml", "name"};
const std::vector<std::string> kNameFormat{"name"};

// The deepest subcommand the command line named ("caldera get jobs x" -> jobs).
CLI::App* deepest(CLI::App& app) {
  CLI::App* at = &app;
  for (auto subs = at->get_subcommands(); !subs.empty(); subs = at->get_subcommands())
    at = subs.front();
  return at;
}

std::string command_path(CLI::App& app) {
  std::string path = "caldera";
  for (CLI::App* at = &app; !at->get_subcommands().empty();) {
    at = at->get_subcommands().front();
    path += " " + at->get_name();
  }
  return path;
}

// A parse failure in the user's terms. Where a command or resource type was expected, names
// the word that was not understood and lists the valid ones (CLI11 only says "A subcommand is
// required").
int parse_failure(CLI::App& app, const CLI::ParseError& e) {
  if (dynamic_cast<const CLI::CallForHelp*>(&e) || dynamic_cast<const CLI::CallForAllHelp*>(&e))
    return app.exit(e);
  CLI::App* at = deepest(app);
  auto choices = at->get_subcommands([](CLI::App*) { return true; });
  if (!choices.empty()) {
    std::string valid;
    for (const auto* c : choices) valid += (valid.empty() ? "" : ", ") + c->get_name();
    std::string word;
    for (const auto& arg : app.remaining(true))
      if (!arg.empty() && arg[0] != '-') {
        word = arg;
        break;
      }
    const bool root = at == &app;
    const std::string what = root ? "command" : "resource type";
    const std::string where = root ? "" : " for " + command_path(app);
    if (!word.empty())
      return fail("unknown " + what + " \"" + word + "\"" + where + "; valid: " + valid);
    return fail(command_path(app) + " needs a " + what + ": " + valid);
  }
  fail(e.what());
  std::cerr << "See '" << command_path(app) << " --help'.\n";
  return e.get_exit_code() != 0 ? e.get_exit_code() : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"caldera: run Volcano-style batch jobs on a caldera cluster"};
  app.require_subcommand(1);
  // Global flags are read after the subcommand too (`caldera get jobs -n x`): every subcommand,
  // made after this, passes what it does not know up to its parent.
  app.fallthrough();
  Globals g;
  const char* env_server = std::getenv("CALDERA_SERVER");
  const char* env_token = std::getenv("CALDERA_TOKEN");
  const char* env_retry_for = std::getenv("CALDERA_RETRY_FOR");
  g.server = env_server ? env_server : "127.0.0.1:7070";
  g.token = env_token ? env_token : "";
  if (env_retry_for && *env_retry_for) g.retry_for = env_retry_for;
  const auto last = CLI::MultiOptionPolicy::TakeLast;  // kubectl: the last one wins
  app.add_option("--server,-s", g.server,
                 "HOST:PORT of a calderad (default $CALDERA_SERVER or 127.0.0.1:7070)")
      ->multi_option_policy(last);
  auto* ns_option = app.add_option("--namespace,-n", g.ns, "namespace (default: default)")
                        ->multi_option_policy(last);
  app.add_option("--token", g.token, "cluster auth token (default $CALDERA_TOKEN)")
      ->multi_option_policy(last);
  auto* retry_option =
      app.add_option("--retry-for", g.retry_for,
                     "how long to wait, retrying, for a coordinator or server that cannot be "
                     "reached, e.g. 30s or 2m; 0: not at all (default $CALDERA_RETRY_FOR or 30s)")
          ->type_name("DURATION")
          ->multi_option_policy(last);
  app.add_option("-o,--output", g.output,
                 "output format: wide, json, yaml or name (get); name (submit, delete, wait, "
                 "job commands); json or yaml (version)")
      ->multi_option_policy(last);

  Chosen chosen;
  auto choose = [&chosen](CLI::App* c, std::string command, std::vector<std::string> formats,
                          std::function<int()> run) {
    c->callback([&chosen, command, formats, run] { chosen = {command, formats, run}; });
  };

  std::string file, name, job_filter, condition, timeout = "30s";
  bool all_ns = false, client_only = false;
  LogOptions log_options;

  auto* submit_cmd = app.add_subcommand(
      "submit",
      "submit Job, JobTemplate, JobFlow, Queue and PriorityClass documents from a YAML file");
  submit_cmd->alias("create");  // kubectl create -f
  submit_cmd->add_option("-f,--filename", file, "YAML file, or - for standard input")->required();
  choose(submit_cmd, "submit", kNameFormat, [&] { return submit(g, file); });

  auto* apply_cmd = app.add_subcommand(
      "apply",
      "create what a YAML file names, or update it where it exists (a Job's minAvailable, "
      "replicas, maxRetry, ttl and priority class; a Queue; a JobTemplate; a PriorityClass)");
  apply_cmd->alias("replace");  // kubectl replace -f: the file is the whole object here too
  apply_cmd->add_option("-f,--filename", file, "YAML file, or - for standard input")->required();
  choose(apply_cmd, "apply", kNameFormat, [&] { return caldera::cli::apply(g, file); });

  auto* get = app.add_subcommand(
      "get",
      "list or show jobs, pods, podgroups, jobtemplates, jobflows, nodes, queues, "
      "priorityclasses or the schedulerconfig");
  get->require_subcommand(1);
  get->add_flag("-A,--all-namespaces", all_ns, "every namespace");
  bool watching = false;
  get->add_flag("-w,--watch", watching,
                "after the list, print each change as it happens (jobs, pods, jobflows)");
  auto add_get = [&](const std::string& what, const std::string& alias, const std::string& help,
                     bool named) {
    auto* c = get->add_subcommand(what, help)->alias(alias);
    if (named) c->add_option("name", name, "name");
    return c;
  };
  auto* get_vcjobs = add_get("jobs", "job", "Volcano jobs", true);
  for (const char* alias : {"vcjob", "vcjobs", "jobs.batch.volcano.sh", "job.batch.volcano.sh"})
    get_vcjobs->alias(alias);
  choose(get_vcjobs, "get", kGetFormats, [&] {
    return watching ? watch_jobs(g, name, all_ns, JobKind::Volcano)
                    : get_jobs(g, name, all_ns, JobKind::Volcano);
  });
  choose(add_get("jobs.batch", "job.batch", "Kubernetes Jobs (batch/v1)", true), "get", kGetFormats,
         [&] {
           return watching ? watch_jobs(g, name, all_ns, JobKind::Batch)
                           : get_jobs(g, name, all_ns, JobKind::Batch);
         });
  auto* get_pods_cmd = add_get("pods", "pod", "pods of jobs", true);
  get_pods_cmd->add_option("--job", job_filter, "only this job's pods");
  choose(get_pods_cmd, "get", kGetFormats, [&] {
    return watching ? watch_pods(g, name, job_filter, all_ns)
                    : get_pods(g, name, job_filter, all_ns);
  });
  auto* get_pg =
      add_get("podgroups", "podgroup", "the jobs' pod groups (gang, queue, verdict)", true);
  get_pg->alias("pg");
  choose(get_pg, "get", kGetFormats, [&] {
    return watching ? fail("get -w watches jobs, jobs.batch, pods and jobflows")
                    : get_pod_groups(g, name, all_ns);
  });
  choose(add_get("jobtemplates", "jobtemplate", "Volcano JobTemplates", true), "get", kGetFormats,
         [&] {
           return watching ? fail("get -w watches jobs, jobs.batch, pods and jobflows")
                           : get_templates(g, name, all_ns);
         });
  choose(add_get("jobflows", "jobflow", "Volcano JobFlows", true), "get", kGetFormats,
         [&] { return watching ? watch_flows(g, name, all_ns) : get_flows(g, name, all_ns); });
  choose(add_get("nodes", "node", "cluster nodes", false), "get", kGetFormats, [&] {
    return watching ? fail("get -w watches jobs, jobs.batch, pods and jobflows") : get_nodes(g);
  });
  choose(add_get("queues", "queue", "Volcano queues: weight, capability, share and use", true)
             ->alias("q"),
         "get", kGetFormats, [&] {
           return watching ? fail("get -w watches jobs, jobs.batch, pods and jobflows")
                           : get_queues(g, name);
         });
  choose(add_get("priorityclasses", "priorityclass", "priority classes", true)->alias("pc"), "get",
         kGetFormats, [&] {
           return watching ? fail("get -w watches jobs, jobs.batch, pods and jobflows")
                           : get_priority_classes(g, name);
         });

  // Its one form is Volcano's YAML, which -o yaml names too.
  choose(add_get("schedulerconfig", "schedulerconf",
                 "the scheduler conf in force (Volcano's volcano-scheduler.conf)", false),
         "get", {"yaml"}, [&] {
           return watching ? fail("get -w watches jobs, jobs.batch, pods and jobflows")
                           : get_scheduler_conf(g);
         });

  auto* desc =
      app.add_subcommand("describe", "show a job (with its pods), a pod or a jobflow in detail");
  desc->require_subcommand(1);
  auto* desc_job = desc->add_subcommand("job", "a Volcano job");
  for (const char* alias : {"jobs", "vcjob", "vcjobs", "jobs.batch.volcano.sh"})
    desc_job->alias(alias);
  desc_job->add_option("name", name)->required();
  choose(desc_job, "describe", {}, [&] { return describe_job(g, name, JobKind::Volcano); });
  auto* desc_batch = desc->add_subcommand("jobs.batch", "a Kubernetes Job (batch/v1)");
  desc_batch->alias("job.batch");
  desc_batch->add_option("name", name)->required();
  choose(desc_batch, "describe", {}, [&] { return describe_job(g, name, JobKind::Batch); });
  auto* desc_pod = desc->add_subcommand("pod", "a pod of a job");
  desc_pod->add_option("name", name)->required();
  choose(desc_pod, "describe", {}, [&] { return describe_pod(g, name); });
  auto* desc_flow = desc->add_subcommand("jobflow", "a Volcano JobFlow and its DAG");
  desc_flow->add_option("name", name)->required();
  choose(desc_flow, "describe", {}, [&] { return describe_flow(g, name); });

  auto* wait = app.add_subcommand("wait", "wait until a job or jobflow reaches a phase");
  wait->require_subcommand(1);
  wait->add_option("--for", condition, "phase=PHASE")->required();
  wait->add_option("--timeout", timeout, "how long to wait (default 30s)");
  auto* wait_cmd = wait->add_subcommand("job", "a Volcano job");
  for (const char* alias : {"jobs", "vcjob", "vcjobs", "jobs.batch.volcano.sh"})
    wait_cmd->alias(alias);
  wait_cmd->add_option("name", name)->required();
  choose(wait_cmd, "wait", kNameFormat, [&] { return wait_job(g, name, condition, timeout); });
  auto* wait_batch = wait->add_subcommand("jobs.batch", "a Kubernetes Job: --for=condition=TYPE");
  wait_batch->alias("job.batch");
  wait_batch->add_option("name", name)->required();
  choose(wait_batch, "wait", kNameFormat,
         [&] { return wait_batch_job(g, name, condition, timeout); });
  auto* wait_flow_cmd = wait->add_subcommand("jobflow", "a Volcano JobFlow");
  wait_flow_cmd->add_option("name", name)->required();
  choose(wait_flow_cmd, "wait", kNameFormat,
         [&] { return wait_flow(g, name, condition, timeout); });

  auto* logs_cmd = app.add_subcommand("logs", "print a pod's output (stdout and stderr)");
  logs_cmd->add_option("pod", name)->required();
  logs_cmd->add_option("-c,--container", log_options.container,
                       "the container, when the pod has several");
  logs_cmd->add_option("--tail", log_options.tail, "only the last N lines (default: all)");
  logs_cmd->add_flag("-f,--follow", log_options.follow,
                     "keep printing until the pod's containers have ended");
  choose(logs_cmd, "logs", {}, [&] { return logs(g, name, log_options); });

  auto* del = app.add_subcommand(
      "delete",
      "delete a job (with its pods and logs), a jobtemplate, a jobflow, a queue, a priorityclass, "
      "or with -f every object a YAML file names");
  std::string delete_file_name;
  del->add_option("-f,--filename", delete_file_name,
                  "delete every object a YAML file names (or - for standard input)");
  // A kind and a name, or -f (kubectl delete -f FILE).
  del->require_subcommand(0, 1);
  // Its callback runs after a named kind's: it chooses only when no kind was named.
  del->callback([&, del] {
    if (!del->get_subcommands().empty()) {
      if (!delete_file_name.empty())
        chosen.run = [] {
          return fail("caldera delete takes a resource type and a name, or -f FILE, not both");
        };
      return;
    }
    chosen = {"delete", kNameFormat, [&] {
                if (delete_file_name.empty())
                  return fail("caldera delete needs a resource type and a name, or -f FILE");
                return delete_file(g, delete_file_name);
              }};
  });
  const std::vector<std::tuple<std::string, std::string, Deletable>> deletable{
      {"job", "a Volcano job", Deletable::Job},
      {"jobs.batch", "a Kubernetes Job (batch/v1)", Deletable::BatchJob},
      {"jobtemplate", "a Volcano JobTemplate", Deletable::JobTemplate},
      {"jobflow", "a Volcano JobFlow", Deletable::JobFlow},
      {"queue", "a Volcano Queue no job uses", Deletable::Queue},
      {"priorityclass", "a PriorityClass no job names", Deletable::PriorityClass}};
  for (const auto& [kind_name, help, kind] : deletable) {
    auto* c = del->add_subcommand(kind_name, help);
    if (kind == Deletable::Job)
      for (const char* alias : {"jobs", "vcjob", "vcjobs", "jobs.batch.volcano.sh"})
        c->alias(alias);
    if (kind == Deletable::BatchJob) c->alias("job.batch");
    c->add_option("name", name)->required();
    choose(c, "delete", kNameFormat, [&, kind = kind] { return delete_object(g, kind, name); });
  }

  auto* queue_cmd =
      app.add_subcommand("queue", "open or close a Volcano queue (vcctl queue operate)");
  queue_cmd->require_subcommand(1);
  for (const auto& [verb, help] : std::vector<std::pair<std::string, std::string>>{
           {"open", "let the queue take new jobs again"},
           {"close", "refuse new jobs in the queue; its jobs go on (Closing until they end)"}}) {
    auto* c = queue_cmd->add_subcommand(verb, help);
    c->add_option("name", name, "the queue")->required();
    choose(c, "queue " + verb, kNameFormat,
           [&, verb = verb] { return operate_queue(g, name, verb); });
  }

  const std::vector<std::pair<std::string, std::string>> commands{{"abort", "AbortJob"},
                                                                  {"resume", "ResumeJob"},
                                                                  {"restart", "RestartJob"},
                                                                  {"terminate", "TerminateJob"},
                                                                  {"complete", "CompleteJob"}};
  for (const auto& [verb, action] : commands) {
    auto* c = app.add_subcommand(verb, "issue " + action + " to a job");
    c->require_subcommand(1);
    auto* j = c->add_subcommand("job", "a Volcano job");
    j->add_option("name", name)->required();
    choose(j, verb, kNameFormat, [&, a = action] { return command(g, a, name); });
  }

  std::string patch_type = "strategic", patch_text;
  auto* patch = app.add_subcommand("patch", "change a Kubernetes Job's spec (kubectl patch)");
  patch->require_subcommand(1);
  auto* patch_batch = patch->add_subcommand("jobs.batch", "a Kubernetes Job (batch/v1)");
  patch_batch->alias("job.batch");
  patch_batch->add_option("name", name)->required();
  patch_batch->add_option("--type", patch_type,
                          "merge or strategic (kubectl's default): a JSON merge patch");
  patch_batch
      ->add_option("-p,--patch", patch_text, "the patch, e.g. '{\"spec\":{\"suspend\":false}}'")
      ->required();
  choose(patch_batch, "patch", kNameFormat,
         [&] { return patch_batch_job(g, name, patch_type, patch_text); });

  auto* admin = app.add_subcommand("admin", "operate the cluster");
  admin->require_subcommand(1);
  auto* backup_cmd = admin->add_subcommand(
      "backup", "copy the coordinator's store, while it runs, into DIR (new) on its machine");
  backup_cmd->add_option("dir", name, "the backup's directory; must not exist")->required();
  choose(backup_cmd, "admin backup", {}, [&] { return backup(g, name); });

  auto* version_cmd = app.add_subcommand("version", "the client's and the server's versions");
  version_cmd->add_flag("--client", client_only, "the client's version only");
  choose(version_cmd, "version", {"json", "yaml"}, [&] { return version(g, client_only); });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return parse_failure(app, e);
  }
  g.ns_given = ns_option->count() > 0;
  auto retry_for = caldera::parse_go_duration_ms(g.retry_for);
  if (!retry_for || *retry_for < 0)
    return fail((retry_option->count() > 0 ? "--retry-for" : "$CALDERA_RETRY_FOR") +
                std::string(" must be a duration such as 30s or 2m, or 0 for no retry; got \"") +
                g.retry_for + "\"");
  g.retry_for_ms = *retry_for;
  if (!chosen.run) return fail("nothing to do (see caldera --help)");
  if (auto error = output_error(g.output, chosen.formats, chosen.command)) return fail(*error);
  try {
    return chosen.run();
  } catch (const kj::Exception& e) {
    return fail(std::string("malformed response from the server: ") + e.getDescription().cStr());
  }
}
