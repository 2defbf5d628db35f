// get, describe and version: requests that only read.
#include <iostream>
#include <optional>
#include <set>

#include "client/cli/commands.hpp"
#include "client/render.hpp"
#include "client/render_batch_job.hpp"
#include "common/clock.hpp"
#include "messages/codec/codec.hpp"
#include "messages/codec/queue_codec.hpp"

#ifndef CALDERA_VERSION
#define CALDERA_VERSION "unknown"
#endif

namespace caldera::cli {
namespace {

// Items per page of a list (kubectl's --chunk-size default).
constexpr uint32_t kPageSize = 500;

using InitList = std::function<api::ListFilter::Builder(api::Request::Builder)>;

// Reads a list page by page: each page's response goes to on_page, and the next page is asked
// for with the previous one's Response.continue until it is empty (at once from a server that
// does not page). Returns the exit code.
int list_pages(const Globals& g, const InitList& init, const std::string& ns,
               const std::string& job, const std::function<void(api::Response::Reader)>& on_page) {
  std::string token;
  // A server that sends a token again would have us read its pages in a circle, forever.
  std::set<std::string> seen;
  Session session(g);
  for (;;) {
    int rc = 0;
    auto r = session.call(
        [&](api::Request::Builder b) {
          auto f = init(b);
          f.setNamespace(ns);
          f.setJobName(job);
          f.setLimit(kPageSize);
          f.setContinue(token);
        },
        &rc);
    if (!r) return rc;
    auto resp = r->root<api::Response>();
    on_page(resp);
    std::string next = resp.getContinue();
    if (next.empty()) return 0;
    if (!seen.insert(next).second)
      return fail("the server returned the same continue token twice: " + next);
    token = std::move(next);
  }
}

std::string list_namespace(const Globals& g, bool all_ns) {
  return all_ns ? "" : g.ns;
}

// The job `name` of the kind in the current namespace, or nullopt (the error is printed, rc
// set).
std::optional<Job> fetch_job(const Globals& g, const std::string& name, JobKind kind, int* rc) {
  auto r = call(
      g,
      [&](api::Request::Builder b) {
        auto ref = b.initGetJob();
        ref.setNamespace(g.ns);
        ref.setName(name);
        if (kind == JobKind::Batch) ref.setKind(kBatchJobKind);
      },
      rc);
  if (!r) return std::nullopt;
  return decode(r->root<api::Response>().getJob());
}

// Every pod (of `job` when not empty, of either kind unless `kind` says) in the current
// namespace, or every namespace.
std::optional<std::vector<Pod>> fetch_pods(const Globals& g, const std::string& job, bool all_ns,
                                           int* rc, std::optional<JobKind> kind = std::nullopt) {
  std::vector<Pod> pods;
  *rc = list_pages(
      g,
      [kind](api::Request::Builder b) {
        auto f = b.initListPods();
        if (kind) f.setKind(*kind == JobKind::Batch ? kBatchJobKind : "jobs");
        return f;
      },
      list_namespace(g, all_ns), job,
      [&](api::Response::Reader resp) {
        for (auto p : resp.getPods()) pods.push_back(decode(p));
      });
  if (*rc) return std::nullopt;
  return pods;
}

// Prints one object (name set) or a list of them in the -o format.
template <class T>
void print_objects(const Globals& g, const std::vector<T>& items, bool one, const char* resource,
                   nlohmann::json (*to_json)(const T&),
                   const std::function<std::string(const std::vector<T>&, bool)>& table,
                   const std::function<std::string(const T&)>& name_of) {
  if (g.output == "json" || g.output == "yaml") {
    auto list = nlohmann::json::array();
    for (const auto& item : items) list.push_back(to_json(item));
    print_json(one && !list.empty() ? list[0] : list_of(list), g.output);
  } else if (g.output == "name") {
    for (const auto& item : items) print_name(resource, name_of(item));
  } else {
    print_table(table(items, g.output == "wide"));
  }
}

// `get` of a JobTemplate or JobFlow kind: how to ask for one or all, and how to show them.
template <class T>
struct GetKind {
  std::function<api::ObjectRef::Builder(api::Request::Builder)> init_get;
  InitList init_list;
  std::function<T(api::Response::Reader)> read_one;
  std::function<void(api::Response::Reader, std::vector<T>&)> read_list;
  nlohmann::json (*to_json)(const T&);
  std::string (*table)(const std::vector<T>&, bool, int64_t);
  const char* resource;
};

template <class T>
int get_objects(const Globals& g, const std::string& name, bool all_ns, const GetKind<T>& kind) {
  int rc = 0;
  std::vector<T> items;
  if (!name.empty()) {
    // Named: the call depends on T, and its type must not.
    std::unique_ptr<FlatReader> r = call(
        g,
        [&](api::Request::Builder b) {
          auto ref = kind.init_get(b);
          ref.setNamespace(g.ns);
          ref.setName(name);
        },
        &rc);
    if (!r) return rc;
    items.push_back(kind.read_one(r->root<api::Response>()));
  } else {
    rc = list_pages(g, kind.init_list, list_namespace(g, all_ns), "",
                    [&](api::Response::Reader resp) { kind.read_list(resp, items); });
    if (rc) return rc;
  }
  print_objects<T>(
      g, items, !name.empty(), kind.resource, kind.to_json,
      [&](const std::vector<T>& v, bool wide) { return kind.table(v, wide, system_now_ms()); },
      [](const T& t) { return t.spec.name; });
  return 0;
}

template <class T, class List>
void decode_into(List list, std::vector<T>& out) {
  for (auto item : list) out.push_back(decode(item));
}

const GetKind<JobTemplate> kTemplates{
    [](api::Request::Builder b) { return b.initGetJobTemplate(); },
    [](api::Request::Builder b) { return b.initListJobTemplates(); },
    [](api::Response::Reader r) { return decode(r.getJobTemplate()); },
    [](api::Response::Reader r, std::vector<JobTemplate>& out) {
      decode_into(r.getJobTemplates(), out);
    },
    template_to_json,
    templates_table,
    kTemplateResource};

const GetKind<JobFlow> kFlows{
    [](api::Request::Builder b) { return b.initGetJobFlow(); },
    [](api::Request::Builder b) { return b.initListJobFlows(); },
    [](api::Response::Reader r) { return decode(r.getJobFlow()); },
    [](api::Response::Reader r, std::vector<JobFlow>& out) { decode_into(r.getJobFlows(), out); },
    flow_to_json,
    flows_table,
    kFlowResource};

}  // namespace

namespace {

// The named job, or every job of the namespace (all with all_ns), to `on_job`; 0 or the exit
// code. A table or names need no specs nor events: unless -o json|yaml, a list asks for
// summaries, a fraction of the bytes.
int fetch_jobs(const Globals& g, const std::string& name, bool all_ns, JobKind kind,
               const std::function<void(Job)>& on_job) {
  int rc = 0;
  if (!name.empty()) {
    auto job = fetch_job(g, name, kind, &rc);
    if (job) on_job(std::move(*job));
    return rc;
  }
  // A Kubernetes Job's wide row shows its containers, which summaries leave out.
  const bool summary =
      g.output != "json" && g.output != "yaml" && !(kind == JobKind::Batch && g.output == "wide");
  return list_pages(
      g,
      [summary, kind](api::Request::Builder b) {
        auto f = b.initListJobs();
        f.setSummary(summary);
        if (kind == JobKind::Batch) f.setKind(kBatchJobKind);
        return f;
      },
      list_namespace(g, all_ns), "",
      [&](api::Response::Reader resp) {
        for (auto j : resp.getJobs()) on_job(decode(j));
      });
}

}  // namespace

int get_jobs(const Globals& g, const std::string& name, bool all_ns, JobKind kind) {
  std::vector<Job> jobs;
  if (int rc = fetch_jobs(g, name, all_ns, kind, [&](Job j) { jobs.push_back(std::move(j)); }))
    return rc;
  const bool batch = kind == JobKind::Batch;
  print_objects<Job>(
      g, jobs, !name.empty(), batch ? kBatchJobResourceName : kJobResource,
      batch ? batch_job_to_json : job_to_json,
      [&](const std::vector<Job>& v, bool wide) {
        return batch ? batch_jobs_table(v, wide, system_now_ms(), all_ns)
                     : jobs_table(v, wide, system_now_ms(), all_ns);
      },
      [](const Job& j) { return j.spec.name; });
  return 0;
}

int get_pod_groups(const Globals& g, const std::string& name, bool all_ns) {
  std::vector<PodGroupView> groups;
  if (int rc = fetch_jobs(g, name, all_ns, JobKind::Volcano,
                          [&](Job j) { groups.push_back(pod_group_of(j)); }))
    return rc;
  print_objects<PodGroupView>(
      g, groups, !name.empty(), kPodGroupResource, pod_group_to_json,
      [&](const std::vector<PodGroupView>& v, bool wide) {
        return pod_groups_table(v, wide, system_now_ms(), all_ns);
      },
      [](const PodGroupView& pg) { return pg.name; });
  return 0;
}

int get_pods(const Globals& g, const std::string& name, const std::string& job, bool all_ns) {
  int rc = 0;
  auto pods = fetch_pods(g, job, all_ns, &rc);
  if (!pods) return rc;
  if (!name.empty()) {
    std::erase_if(*pods, [&](const Pod& p) { return p.name != name; });
    if (pods->empty()) return fail("pods \"" + name + "\" not found in namespace " + g.ns);
  }
  print_objects<Pod>(
      g, *pods, !name.empty(), kPodResource, pod_to_json,
      [&](const std::vector<Pod>& v, bool wide) {
        return pods_table(v, wide, system_now_ms(), all_ns);
      },
      [](const Pod& p) { return p.name; });
  return 0;
}

int get_templates(const Globals& g, const std::string& name, bool all_ns) {
  return get_objects(g, name, all_ns, kTemplates);
}

int get_flows(const Globals& g, const std::string& name, bool all_ns) {
  return get_objects(g, name, all_ns, kFlows);
}

// Cluster-scoped lists come whole (a cluster has few queues and classes); a name filters.
int get_queues(const Globals& g, const std::string& name) {
  int rc = 0;
  auto r = call(
      g, [&](api::Request::Builder b) { b.setListQueues(); }, &rc);
  if (!r) return rc;
  std::vector<QueueView> queues;
  for (auto q : r->root<api::Response>().getQueues())
    if (name.empty() || q.getName() == name) queues.push_back({decode(q), decode_status(q)});
  if (!name.empty() && queues.empty())
    return fail("queues.scheduling.volcano.sh \"" + name + "\" not found");
  print_objects<QueueView>(
      g, queues, !name.empty(), kQueueResource, queue_to_json,
      [](const std::vector<QueueView>& v, bool wide) {
        return queues_table(v, wide, system_now_ms());
      },
      [](const QueueView& q) { return q.queue.spec.name; });
  return 0;
}

int get_priority_classes(const Globals& g, const std::string& name) {
  int rc = 0;
  auto r = call(
      g, [&](api::Request::Builder b) { b.setListPriorityClasses(); }, &rc);
  if (!r) return rc;
  std::vector<PriorityClass> classes;
  for (auto c : r->root<api::Response>().getPriorityClasses())
    if (name.empty() || c.getName() == name) classes.push_back(decode(c));
  if (!name.empty() && classes.empty())
    return fail("priorityclasses.scheduling.k8s.io \"" + name + "\" not found");
  print_objects<PriorityClass>(
      g, classes, !name.empty(), kPriorityClassResource, priority_class_to_json,
      [](const std::vector<PriorityClass>& v, bool wide) {
        return priority_classes_table(v, wide, system_now_ms());
      },
      [](const PriorityClass& c) { return c.name; });
  return 0;
}

int get_nodes(const Globals& g) {
  int rc = 0;
  auto r = call(
      g, [&](api::Request::Builder b) { b.setListNodes(); }, &rc);
  if (!r) return rc;
  std::vector<NodeInfo> nodes;
  decode_into(r->root<api::Response>().getNodes(), nodes);
  print_objects<NodeInfo>(
      g, nodes, false, kNodeResource, node_to_json,
      [](const std::vector<NodeInfo>& v, bool wide) {
        return nodes_table(v, wide, system_now_ms());
      },
      [](const NodeInfo& n) { return n.name; });
  return 0;
}

int get_scheduler_conf(const Globals& g) {
  int rc = 0;
  auto r = call(
      g, [](api::Request::Builder b) { b.setGetSchedulerConf(); }, &rc);
  if (!r) return rc;
  auto resp = r->root<api::Response>();
  if (!resp.isSchedulerConf()) return fail("the server did not answer with a scheduler conf");
  std::cout << resp.getSchedulerConf().cStr();
  return 0;
}

int describe_job(const Globals& g, const std::string& name, JobKind kind) {
  int rc = 0;
  auto job = fetch_job(g, name, kind, &rc);
  if (!job) return rc;
  auto pods = fetch_pods(g, name, false, &rc, kind);
  if (!pods) return rc;
  const int64_t now = system_now_ms();
  std::cout << (kind == JobKind::Batch ? describe_batch_job(*job, *pods, now)
                                       : caldera::describe_job(*job, *pods, now));
  return 0;
}

int describe_flow(const Globals& g, const std::string& name) {
  int rc = 0;
  auto r = call(
      g,
      [&](api::Request::Builder b) {
        auto ref = b.initGetJobFlow();
        ref.setNamespace(g.ns);
        ref.setName(name);
      },
      &rc);
  if (!r) return rc;
  std::cout << caldera::describe_flow(decode(r->root<api::Response>().getJobFlow()),
                                      system_now_ms());
  return 0;
}

int describe_pod(const Globals& g, const std::string& name) {
  int rc = 0;
  auto pods = fetch_pods(g, "", false, &rc);
  if (!pods) return rc;
  for (const auto& p : *pods) {
    if (p.name != name) continue;
    std::cout << caldera::describe_pod(p, system_now_ms());
    return 0;
  }
  return fail("pods \"" + name + "\" not found in namespace " + g.ns);
}

int version(const Globals& g, bool client_only) {
  nlohmann::json j{{"clientVersion", {{"gitVersion", CALDERA_VERSION}}}};
  std::optional<std::string> server;
  int rc = 0;
  if (!client_only) {
    // One attempt, never a wait for the coordinator: version tells what answers now (kubectl
    // version, too, reports an unreachable server at once).
    Retry once;
    once.enabled = false;
    auto r = call(
        g, [](api::Request::Builder b) { b.setPing(); }, &rc, once);
    if (r) {
      auto pong = r->root<api::Response>().getPong();
      server = pong.getVersion();
      j["serverVersion"] = {{"gitVersion", *server}, {"node", pong.getNode().cStr()}};
    }
  }
  if (g.output == "json" || g.output == "yaml") {
    print_json(j, g.output);
  } else {
    std::cout << "Client Version: " << CALDERA_VERSION << "\n";
    if (server) std::cout << "Server Version: " << *server << "\n";
  }
  return rc;
}

}  // namespace caldera::cli
