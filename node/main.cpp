// calderad: one caldera node. With no arguments, an embedded single-node cluster on 127.0.0.1.
#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include <gperftools/malloc_extension.h>
#include <prometheus/exposer.h>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/api/api_router.hpp"
#include "actors/cluster/core/identity.hpp"
#include "actors/cluster/membership_actor.hpp"
#include "actors/cluster/membership_port.hpp"
#include "actors/directory/job_directory.hpp"
#include "actors/directory/report_port.hpp"
#include "actors/history/retention_actor.hpp"
#include "actors/jobflow/flow_directory.hpp"
#include "actors/metrics/metrics.hpp"
#include "actors/node/coordinator_link.hpp"
#include "actors/node/node_actor.hpp"
#include "actors/node/process_runner.hpp"
#include "actors/protocol/atoms.hpp"
#include "actors/scheduler/scheduler_actor.hpp"
#include "actors/scheduler/scheduling_objects.hpp"
#include "actors/store/commit_relay.hpp"
#include "actors/timer/timer_actor.hpp"
#include "actors/uid.hpp"
#include "actors/watch/watch_hub.hpp"
#include "messages/model/pod.hpp"
#include "node/client_bridge.hpp"
#include "node/cluster_config.hpp"
#include "node/fifo_stealing.hpp"
#include "node/gateway.hpp"
#include "storage/store.hpp"

namespace fs = std::filesystem;
using namespace caldera;

namespace {

std::string sibling_executable(const std::string& name) {
  std::error_code ec;
  auto self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? name : (self.parent_path() / name).string();
}

int fail(const std::string& message) {
  std::cerr << "calderad: " << message << "\n";
  return 1;
}

// Descriptors kept for everything but admitted client connections: RocksDB files, CAF sockets,
// pod pipes, and the refused connections the gateway is still explaining itself to.
constexpr size_t kReservedDescriptors = 512;

struct OpenFiles {
  size_t now = 0;         // the soft limit in force, 0 if unknown
  uint64_t original = 0;  // the soft limit before it was raised; 0 if it was not
};

// Every client connection holds a descriptor, and the usual soft limit of 1024 would run out
// (failing RocksDB and pods as well) long before the connection limit.
OpenFiles raise_open_files_limit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return {};
  OpenFiles out;
  rlim_t target = rl.rlim_max;
  if (target == RLIM_INFINITY) {
    // Linux refuses an unlimited NOFILE; fs.nr_open is the most it takes.
    unsigned long nr_open = 1u << 20;
    std::ifstream("/proc/sys/fs/nr_open") >> nr_open;
    target = nr_open;
  }
  if (rl.rlim_cur < target) {
    rlimit raised{target, rl.rlim_max};
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) {
      out.original = rl.rlim_cur;
      rl.rlim_cur = target;
    }
  }
  out.now = rl.rlim_cur == RLIM_INFINITY ? 0 : static_cast<size_t>(rl.rlim_cur);
  return out;
}

// A Go duration from a flag into `out`; false when malformed.
bool duration_flag(const std::string& text, std::chrono::milliseconds& out) {
  auto ms = parse_timeout(text);
  if (ms) out = *ms;
  return ms.has_value();
}

}  // namespace

constexpr time_t kReleaseFreeMemorySeconds = 5;
// What idle threads may keep of freed memory, all together (tcmalloc's default is 32 MiB): after
// a burst of jobs their caches hold what the burst freed, which no release hands back.
constexpr size_t kThreadCacheBytes = size_t{4} << 20;

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);  // libuv writes to closed sockets; never die of it
  if (!std::getenv("TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES"))  // an operator's setting wins
    MallocExtension::instance()->SetNumericProperty("tcmalloc.max_total_thread_cache_bytes",
                                                    kThreadCacheBytes);

  CLI::App app{"calderad: a caldera node (Volcano batch semantics without Kubernetes)"};
  std::string config_path, node_name, data_dir = "./caldera-data", host = "127.0.0.1";
  std::string log_level = "info", port_file, shim_path = sibling_executable("caldera-shim");
  int port = 7070, cluster_port = 7170;
  bool no_fsync = false;
  bool accept_empty_store = false;
  std::string restore_from;
  unsigned actor_threads = 2;
  size_t max_connections = 0, max_connections_per_address = 0;
  std::string idle_timeout, frame_timeout;
  std::string log_max_size = "10Mi";
  int64_t log_max_files = 5;
  app.add_option("--config", config_path, "cluster config file (cluster-config/*.yaml)");
  app.add_option("--node", node_name, "this node's name in the cluster config");
  app.add_option("--data-dir", data_dir, "data directory of the embedded default node");
  app.add_option("--port", port, "client port of the embedded default node (0: any free port)");
  app.add_option("--cluster-port", cluster_port, "cluster port of the embedded default node");
  app.add_option("--port-file", port_file, "write the client port here once serving");
  int metrics_port = -1;
  app.add_option("--metrics-port", metrics_port,
                 "serve Prometheus metrics on this port (0: off; default: the node's metricsPort)");
  app.add_option("--log-level", log_level, "error, warn, info or debug");
  app.add_option("--shim", shim_path, "the caldera-shim executable");
  app.add_flag("--no-fsync", no_fsync, "do not fsync group commits (benchmarks only: unsafe)");
  bool no_private_etc = false;
  app.add_flag("--no-private-etc", no_private_etc,
               "do not show pods their svc files at /etc/volcano (a private mount namespace "
               "each); they find them in $VC_POD_DIR/volcano");
  app.add_option("--restore-from", restore_from,
                 "coordinator: before starting, copy this backup (caldera admin backup) into its "
                 "empty data dir; it then carries on the cluster in the next generation");
  app.add_flag("--accept-empty-store", accept_empty_store,
               "coordinator: carry on the cluster its nodes belong to with this empty store (its "
               "store was lost): their pods of jobs it does not know are then stopped");
  app.add_option("--actor-threads", actor_threads,
                 "threads that run actors (default 2). 1 takes less CPU per job on a 2-CPU "
                 "machine, but then one long handler (a 10,000-pod job's) holds up all others")
      ->check(CLI::Range(1u, 256u));
  auto* max_connections_opt =
      app.add_option("--max-connections", max_connections,
                     "client connections at once; more are refused (default 4096, or the node's "
                     "maxConnections)")
          ->check(CLI::Range(size_t{1}, size_t{1'000'000}));
  auto* per_address_opt =
      app.add_option("--max-connections-per-address", max_connections_per_address,
                     "client connections at once from one client address, at most "
                     "--max-connections; more are refused (default 2048, or the node's "
                     "maxConnectionsPerAddress)")
          ->check(CLI::Range(size_t{1}, size_t{1'000'000}));
  app.add_option("--idle-timeout", idle_timeout,
                 "close client connections idle this long, e.g. 5m (default; 0: never)");
  app.add_option("--frame-timeout", frame_timeout,
                 "close client connections stuck in the middle of a request this long, e.g. 10s "
                 "(default; 0: never)");
  auto* log_size_opt = app.add_option(
      "--container-log-max-size", log_max_size,
      "embedded default node: rotate a container's log past this size (default 10Mi)");
  auto* log_files_opt = app.add_option(
      "--container-log-max-files", log_max_files,
      "embedded default node: log files kept per container, the current one included (default 5)");
  int64_t history_max_jobs = RetentionPolicy{}.max_finished_jobs;
  std::string history_max_age = "30d";
  auto* history_jobs_opt =
      app.add_option("--history-max-finished-jobs", history_max_jobs,
                     "embedded default node: finished jobs kept, the oldest deleted first "
                     "(default 1000000; 0: all)")
          ->check(CLI::Range(int64_t{0}, int64_t{1'000'000'000'000}));
  auto* history_age_opt = app.add_option(
      "--history-max-age", history_max_age,
      "embedded default node: finished jobs are deleted this long after they finished, e.g. "
      "30d or 720h (default 30d; 0: never)");
  std::string scheduler_conf_file;
  auto* scheduler_conf_opt = app.add_option(
      "--scheduler-conf", scheduler_conf_file,
      "embedded default node: Volcano's scheduler conf file (volcano-scheduler.conf, or the "
      "ConfigMap holding it; default: enqueue, allocate, preempt, reclaim, backfill with "
      "Volcano's default plugins)");
  CLI11_PARSE(app, argc, argv);

  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  spdlog::set_level(spdlog::level::from_str(log_level));

  ClusterConfig cluster;
  if (!config_path.empty()) {
    Diagnostics diags;
    auto loaded = load_cluster_config(config_path, diags);
    for (const auto& w : diags.warnings) spdlog::warn("config={} {}", config_path, to_string(w));
    if (!loaded) {
      for (const auto& e : diags.errors) std::cerr << config_path << ": " << to_string(e) << "\n";
      return fail(loaded.error());
    }
    cluster = std::move(*loaded);
    if (log_size_opt->count() || log_files_opt->count())
      return fail(
          "--container-log-max-size/--container-log-max-files are for the embedded node; "
          "set containerLogMaxSize/containerLogMaxFiles of the node in " +
          config_path);
    if (history_jobs_opt->count() || history_age_opt->count())
      return fail(
          "--history-max-finished-jobs/--history-max-age are for the embedded node; set "
          "cluster.history {maxFinishedJobs, maxAge} in " +
          config_path);
    if (scheduler_conf_opt->count())
      return fail(
          "--scheduler-conf is for the embedded node; set cluster.scheduler (the conf, or the "
          "name of its file) in " +
          config_path);
    if (node_name.empty()) {
      if (cluster.nodes.size() != 1)
        return fail("--node NAME is required: the config lists several nodes");
      node_name = cluster.nodes.front().name;
    }
  } else {
    if (port < 0 || port > 65535 || cluster_port < 0 || cluster_port > 65535)
      return fail("ports must be within 0..65535");
    cluster = embedded_cluster_config(data_dir, static_cast<uint16_t>(port),
                                      static_cast<uint16_t>(cluster_port));
    auto log_bytes = parse_container_log_max_size(log_max_size);
    if (!log_bytes) return fail("--container-log-max-size: " + log_bytes.error());
    if (auto problem = check_container_log_max_files(log_max_files))
      return fail("--container-log-max-files: " + *problem);
    cluster.nodes.front().container_log_max_size = *log_bytes;
    cluster.nodes.front().container_log_max_files = static_cast<int32_t>(log_max_files);
    auto age = parse_history_age_ms(history_max_age);
    if (!age)
      return fail("--history-max-age: '" + history_max_age +
                  "' is not a duration (examples: 30d, 720h, 90m; 0: never)");
    cluster.history = RetentionPolicy{history_max_jobs, *age};
    if (scheduler_conf_opt->count()) {
      Diagnostics diags;
      auto conf = load_scheduler_conf(scheduler_conf_file, "", diags);
      for (const auto& w : diags.warnings)
        spdlog::warn("scheduler-conf={} {}", scheduler_conf_file, to_string(w));
      if (!conf) {
        for (const auto& e : diags.errors)
          std::cerr << scheduler_conf_file << ": " << to_string(e) << "\n";
        return fail("--scheduler-conf: " + conf.error() + " " + scheduler_conf_file);
      }
      cluster.scheduler = std::move(*conf);
    }
    node_name = cluster.nodes.front().name;
  }
  const NodeConfig* node = cluster.find(node_name);
  if (!node) {
    std::string names;
    for (const auto& n : cluster.nodes) names += (names.empty() ? "" : ", ") + n.name;
    return fail("--node: '" + node_name + "' is not in the cluster config (its nodes: " + names +
                ")");
  }
  const bool is_coordinator = node->name == cluster.coordinator;
  const NodeConfig* coordinator_node = cluster.find(cluster.coordinator);
  if (access(shim_path.c_str(), X_OK) != 0)
    return fail("cannot run the pod supervisor '" + shim_path + "' (use --shim PATH)");

  // Flags override the node's config, which overrides the defaults.
  GatewayLimits limits;
  if (node->max_connections) limits.max_connections = *node->max_connections;
  if (node->idle_timeout) limits.idle_timeout = *node->idle_timeout;
  if (node->frame_timeout) limits.frame_timeout = *node->frame_timeout;
  if (*max_connections_opt) limits.max_connections = max_connections;
  if (node->max_connections_per_address)
    limits.max_connections_per_address = *node->max_connections_per_address;
  if (*per_address_opt) limits.max_connections_per_address = max_connections_per_address;
  if ((node->max_connections_per_address || *per_address_opt) &&
      limits.max_connections_per_address > limits.max_connections)
    return fail("the connection limit per client address, " +
                std::to_string(limits.max_connections_per_address) +
                ", is more than the connection limit, " + std::to_string(limits.max_connections) +
                " (--max-connections-per-address and --max-connections, or the node's "
                "maxConnectionsPerAddress and maxConnections)");
  if (!idle_timeout.empty() && !duration_flag(idle_timeout, limits.idle_timeout))
    return fail("--idle-timeout: '" + idle_timeout + "' is not a duration (examples: 30s, 5m, 0)");
  if (!frame_timeout.empty() && !duration_flag(frame_timeout, limits.frame_timeout))
    return fail("--frame-timeout: '" + frame_timeout +
                "' is not a duration (examples: 10s, 500ms, 0)");
  const OpenFiles open_files_limit = raise_open_files_limit();
  if (size_t open_files = open_files_limit.now; open_files > 0) {
    size_t fits =
        open_files > 2 * kReservedDescriptors ? open_files - kReservedDescriptors : open_files / 2;
    if (limits.max_connections > fits) {
      spdlog::warn("calderad max-connections {} lowered to {}: the open files limit is {}",
                   limits.max_connections, fits, open_files);
      limits.max_connections = fits;
      // Else one client could take every place again.
      if (limits.max_connections_per_address >= fits) {
        limits.max_connections_per_address = std::max<size_t>(1, fits / 2);
        spdlog::warn("calderad max-connections-per-address lowered to {}, half of that",
                     limits.max_connections_per_address);
      }
    }
  }

  if (metrics_port > 65535) return fail("--metrics-port must be within 0..65535");
  const uint16_t metrics_on =
      metrics_port >= 0 ? static_cast<uint16_t>(metrics_port) : node->metrics_port;
  auto metrics = std::make_shared<Metrics>();

  // Handle SIGINT/SIGTERM in this thread only: block them before any other thread starts.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  std::unique_ptr<prometheus::Exposer> exposer;  // its HTTP threads start with signals blocked
  if (metrics_on != 0) {
    const auto address = node->host + ":" + std::to_string(metrics_on);
    try {
      exposer = std::make_unique<prometheus::Exposer>(address, 2);
    } catch (const std::exception& e) {
      return fail("cannot serve metrics on " + address + ": " + e.what());
    }
    exposer->RegisterCollectable(metrics->registry());
    spdlog::info("calderad node={} metrics on http://{}/metrics", node->name, address);
  }

  // After the signals are blocked: RocksDB and the store writer start threads of their own.
  StoreOptions store_options;
  store_options.sync = !no_fsync;
  store_options.on_batch = [metrics](std::chrono::nanoseconds d, size_t writes) {
    metrics->store_batch(d, writes);
  };
  // The relay exists once the actor system does (before any actor writes), and is gone before
  // the system is: completions after that have no one to tell.
  struct RelayHolder {
    std::mutex mu;
    caf::actor relay;
  };
  auto relay = std::make_shared<RelayHolder>();
  store_options.deliver = [relay](Completions batch) {
    std::lock_guard lock(relay->mu);
    if (relay->relay) relay_completions(relay->relay, std::move(batch));
  };
  const std::string db_dir = node->data_dir + "/db";
  // A damaged store (a read that met an I/O error or a corrupt block) would pass for one with
  // records missing: calderad stops instead of serving part of its state.
  store_options.on_damaged = [db_dir, is_coordinator](const std::string& error) {
    spdlog::critical(
        "calderad stops: the store in {} is damaged ({}); nothing more is served from it. {}",
        db_dir, error,
        is_coordinator ? "Restore a backup (calderad --restore-from DIR, made with caldera admin "
                         "backup) into an empty data dir, or move the data dir aside"
                       : "Move the data dir aside: the node joins again with a new store");
    spdlog::shutdown();
    std::_Exit(1);
  };
  if (!restore_from.empty()) {
    if (!is_coordinator) return fail("--restore-from: only the coordinator's store is backed up");
    std::error_code ec;
    if (!fs::exists(restore_from + "/CURRENT", ec))
      return fail("--restore-from: '" + restore_from +
                  "' is not a backup (no CURRENT file; make one with caldera admin backup DIR)");
    if (fs::exists(db_dir + "/CURRENT", ec))
      return fail("--restore-from: the data dir already has a store (" + db_dir +
                  "); move it aside first, so that nothing is overwritten");
    fs::create_directories(db_dir, ec);
    if (!ec) fs::copy(restore_from, db_dir, fs::copy_options::recursive, ec);
    if (ec)
      return fail("--restore-from: cannot copy '" + restore_from + "' to " + db_dir + ": " +
                  ec.message());
  }
  auto opened = Store::open(db_dir, store_options);
  if (!opened) return fail(opened.error());
  std::shared_ptr<Store> store = std::move(*opened);
  if (!restore_from.empty())
    spdlog::info("calderad restored the coordinator's store from {}", restore_from);

  caf::actor_system_config cfg;
  cfg.load<caf::io::middleman>();
  // A connection whose peer says nothing (SIGSTOP, a partition) is closed after a whole lease, not
  // sooner: a coordinator that is only paused then answers the heartbeats queued meanwhile on the
  // same connection, renewing the workers' leases at once, instead of making them connect and
  // register anew while their leases run out. A hung worker is NotReady after heartbeatTimeout
  // all the same (the membership's own heartbeats), and a dead one at once (its connection
  // closes).
  cfg.set("middleman.heartbeat-interval", caf::timespan{cluster.heartbeat_interval});
  cfg.set("middleman.connection-timeout", caf::timespan{cluster.lease_timeout});
  cfg.set("scheduler.max-threads", static_cast<size_t>(actor_threads));
  // Work stealing whose queues stay in FIFO order (node/fifo_stealing.hpp): on 2 CPUs, 5% more
  // simulated jobs a second and 9% less CPU per job than CAF's own (medians of 6 paired runs,
  // scripts/bench/submit-throughput.sh).
  cfg.load<FifoStealingCoordinator>();
  // An idle CAF worker polls, then naps 50 us at a time for 500 naps, then sleeps until woken. The
  // naps cost a context switch each, which took a third of calderad's CPU per real pod: skip
  // them (scripts/bench/submit-throughput.sh, 0.53 -> 0.37 ms per job).
  cfg.set("work-stealing.moderate-poll-attempts", 0);
  caf::actor_system sys{cfg};
  {
    std::lock_guard lock(relay->mu);
    relay->relay = spawn_commit_relay(sys);
  }

  // The coordinator's actors run on the coordinator node only; a worker reaches them through its
  // link, over the cluster port.
  protocol::scheduler scheduler;
  protocol::membership membership;
  protocol::report_port reports;  // all a worker may send the directory: its pod reports
  caf::actor timer, router, link, retention;
  protocol::directory directory;         // which jobs exist (actors/directory)
  caf::actor scheduling;                 // the Queues and PriorityClasses (actors/scheduler)
  protocol::watch_hub watches;           // the clients' watches (actors/watch)
  protocol::flow_directory flows;        // JobTemplates and JobFlows (actors/jobflow)
  std::vector<caf::actor> hollow_links;  // one per hollow node beyond the first (link)
  protocol::membership_port
      member_port;  // all that other processes reach: registrations, heartbeats
  if (is_coordinator) {
    Diagnostics plugin_diags;
    auto policy = sched::policy_from(cluster.scheduler, "cluster.scheduler", plugin_diags);
    for (const auto& w : plugin_diags.warnings) spdlog::warn("scheduler {}", to_string(w));
    std::string actions, plugins;
    for (const auto& a : policy.actions) actions += (actions.empty() ? "" : ",") + a;
    for (const auto& tier : cluster.scheduler.tiers)
      for (const auto& p : tier.plugins) plugins += (plugins.empty() ? "" : ",") + p.name;
    spdlog::info("scheduler actions={} plugins={}", actions, plugins);
    NodeTaints taints;
    for (const auto& n : cluster.nodes)
      if (!n.taints.empty())
        for (const auto& name : n.node_names()) taints[name] = n.taints;
    scheduler = spawn_scheduler(sys, metrics, std::move(policy), std::move(taints));
    timer = spawn_timer(sys);
    MembershipEnv members;
    members.scheduler = scheduler;
    if (auto id = store->get(Family::Meta, kClusterIdKey)) members.identity.id = *id;
    if (auto g = store->get(Family::Meta, kClusterGenerationKey))
      members.identity.generation = std::strtoull(g->c_str(), nullptr, 10);
    members.candidate_id = random_uid();
    members.alone = true;
    for (const auto& n : cluster.nodes) members.alone = members.alone && n.name == node->name;
    members.accept_empty_store = accept_empty_store;
    members.restored = !restore_from.empty();
    members.store = store;
    if (!members.identity.id.empty())
      spdlog::info("cluster id={} generation={}", members.identity.id, members.identity.generation);
    if (accept_empty_store && !members.identity.id.empty())
      spdlog::warn("--accept-empty-store: the store is not empty (cluster {}): ignored",
                   members.identity.id);
    members.options.heartbeat_timeout_ms = cluster.heartbeat_timeout.count();
    members.options.lease_ms = cluster.lease_timeout.count();
    members.options.token = cluster.token;
    for (const auto& n : cluster.nodes)
      for (const auto& name : n.node_names()) {
        members.options.allowed.insert(name);
        members.resources[name] = n.resources;
      }
    const auto members_allowed = members.options.allowed;
    const auto dropped_node_wait = std::chrono::milliseconds(startup_wait_ms(members.options));
    membership = spawn_membership(sys, std::move(members));
    watches = spawn_watch_hub(sys, store);
    scheduling = spawn_scheduling_objects(sys, SchedulingObjectsEnv{store, scheduler});
    flows = spawn_flow_directory(sys, FlowDirectoryEnv{store, watches, metrics});
    directory = spawn_job_directory(
        sys, JobDirectoryEnv{store, scheduler, scheduling, timer, membership, metrics, flows,
                             watches, members_allowed, dropped_node_wait});
    caf::anon_send(watches, coordinator_atom::value, caf::actor_cast<caf::actor>(directory));
    caf::anon_send(flows, coordinator_atom::value, caf::actor_cast<caf::actor>(directory));
    retention = spawn_retention(sys, RetentionEnv{store, directory, metrics, cluster.history,
                                                  std::chrono::milliseconds(1000), WallClock{}});
    router = spawn_api_router(
        sys, ApiRouterEnv{store, directory, flows, membership, scheduler, watches, scheduling,
                          node->name, sched::scheduler_conf_yaml(cluster.scheduler)});
    // Sent by a local actor: the membership takes this only from its own process.
    caf::scoped_actor wiring{sys};
    reports = spawn_report_port(sys, directory);
    wiring->send(membership, coordinator_atom::value, caf::actor_cast<caf::actor>(directory),
                 router, caf::actor_cast<caf::actor>(reports));
    wiring->send(scheduler, membership_atom::value, caf::actor_cast<caf::actor>(membership));
    if (!config_path.empty()) {
      member_port = spawn_membership_port(sys, membership);
      auto published =
          sys.middleman().publish(member_port, node->cluster_port, node->host.c_str(), true);
      if (!published) {
        caf::anon_send_exit(member_port, caf::exit_reason::user_shutdown);
        caf::anon_send_exit(membership, caf::exit_reason::user_shutdown);
        caf::anon_send_exit(router, caf::exit_reason::user_shutdown);
        caf::anon_send_exit(reports, caf::exit_reason::user_shutdown);
        caf::anon_send_exit(directory, caf::exit_reason::user_shutdown);
        caf::anon_send_exit(flows, caf::exit_reason::user_shutdown);
        caf::anon_send_exit(retention, caf::exit_reason::user_shutdown);
        caf::anon_send_exit(watches, caf::exit_reason::user_shutdown);
        caf::anon_send_exit(scheduling, caf::exit_reason::user_shutdown);
        caf::anon_send_exit(scheduler, caf::exit_reason::user_shutdown);
        caf::anon_send_exit(timer, caf::exit_reason::user_shutdown);
        {
          std::lock_guard lock(relay->mu);
          caf::anon_send_exit(relay->relay, caf::exit_reason::user_shutdown);
          relay->relay = nullptr;
        }
        return fail("cannot listen on the cluster port " + node->host + ":" +
                    std::to_string(node->cluster_port) + ": " + sys.render(published.error()));
      }
      spdlog::info("calderad node={} coordinator of cluster={} listening for nodes on {}:{}",
                   node->name, cluster.name, node->host, *published);
      wiring->send(membership, listen_atom::value);
    }
  }
  // The nodes this process is: one, or an entry's hollow nodes (each with its own link).
  const auto names = node->node_names();
  if (!is_coordinator) {
    CoordinatorLinkEnv link_env;
    link_env.host = coordinator_node->host;
    link_env.port = coordinator_node->cluster_port;
    link_env.heartbeat_interval = cluster.heartbeat_interval;
    link_env.heartbeat_timeout = cluster.heartbeat_timeout;
    link_env.lease_timeout = cluster.lease_timeout;
    for (const auto& name : names) {
      link_env.node_name = name;
      (link ? hollow_links.emplace_back() : link) = spawn_coordinator_link(sys, link_env);
    }
  }
  NodeActorEnv node_env;
  node_env.name = node->name;
  node_env.address = node->host + ":" + std::to_string(node->cluster_port);
  node_env.capacity = node->resources;
  // A node the config gives no ephemeral-storage offers its own data dir's file system.
  offer_ephemeral_storage(node_env.capacity, node->data_dir);
  // Absolute: pods start in their own directory, and paths given to them must stay valid there.
  node_env.data_dir = std::filesystem::absolute(node->data_dir).lexically_normal().string();
  node_env.shim_path = shim_path;
  // Volcano's pods read their host lists at /etc/volcano: shown there by the shim where the
  // machine lets it (a private mount namespace and an overlay, as root), said once here, and as a
  // node label that admission reads to tell a job whose pods will not find them there.
  if (!node->count) {
    std::string why = no_private_etc ? std::string("--no-private-etc")
                                     : probe_views(shim_path, node_env.data_dir);
    node_env.etc_volcano = why.empty();
    if (why.empty())
      spdlog::info("calderad node={} shows pods their svc files at /etc/volcano", node->name);
    else
      spdlog::warn(
          "calderad node={} cannot show pods their svc files at /etc/volcano ({}): they "
          "find them in $VC_POD_DIR/volcano",
          node->name, why);
  }
  // A worker's pods run under its lease; the coordinator's own run on while it is down, as
  // nobody could replace them then.
  if (!is_coordinator && !node->count) node_env.lease_file = node_env.data_dir + "/lease";
  node_env.store = store;
  node_env.coordinator = is_coordinator ? caf::actor_cast<caf::actor>(directory) : link;
  node_env.membership = is_coordinator ? caf::actor_cast<caf::actor>(membership) : link;
  node_env.token = cluster.token;
  node_env.labels = node->labels;
  // Hollow nodes run no process: nothing of theirs reads files, and they say nothing of it.
  if (!node->count) node_env.labels[kPrivateEtcLabel] = node_env.etc_volcano ? "true" : "false";
  node_env.is_coordinator = is_coordinator;
  node_env.container_log_max_size = node->container_log_max_size;
  node_env.container_log_max_files = node->container_log_max_files;
  // Containers are not calderad's client connections: they get the limit it was started with.
  node_env.container_open_files_limit = open_files_limit.original;
  node_env.metrics = metrics;
  node_env.hollow = node->count.has_value();
  // A host of hollow nodes reads the records once for all of them (each would scan them all),
  // and deletes those of nodes it no longer has (the count shrank; simulated, nothing runs).
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> records_of;
  if (node_env.hollow) {
    std::set<std::string> mine(names.begin(), names.end());
    std::vector<Write> gone;
    size_t real = 0;
    store->scan(Family::NodePods, [&](std::string_view key, std::string_view value) {
      auto slash = key.find('/');
      if (slash == std::string_view::npos) {
        ++real;  // a real node's, from before the entry had a count: left as it is
        return;
      }
      std::string name(key.substr(0, slash));
      if (mine.count(name))
        records_of[name].emplace_back(std::string(key), std::string(value));
      else
        gone.push_back({Family::NodePods, std::string(key), std::nullopt});
    });
    if (!gone.empty()) {
      spdlog::warn("calderad node={} deletes {} pod records of hollow nodes it no longer has",
                   node->name, gone.size());
      store->commit(std::move(gone), {});
    }
    if (real > 0)
      spdlog::warn("calderad node={} ignores {} pod records of a real node on its data dir",
                   node->name, real);
  }
  std::vector<protocol::node> node_actors;
  for (size_t i = 0; i < names.size(); ++i) {
    node_env.name = names[i];
    if (node_env.hollow)
      node_env.records = std::make_shared<const std::vector<std::pair<std::string, std::string>>>(
          std::move(records_of[names[i]]));
    if (node_env.hollow)
      node_env.coordinator = node_env.membership = i == 0 ? link : hollow_links[i - 1];
    node_actors.push_back(spawn_node_actor(sys, node_env));
  }
  if (node_env.hollow)
    spdlog::info("calderad node={} hosts {} hollow nodes {} ... {}", node->name, names.size(),
                 names.front(), names.back());

  auto sink = std::make_shared<ReplySink>();
  auto bridge = spawn_client_bridge(sys, sink, is_coordinator ? router : link, cluster.token);
  auto gateway = Gateway::start(
      node->host, node->client_port, limits,
      [bridge](uint64_t connection, std::string frame) {
        caf::anon_send(bridge, frame_atom::value, connection, std::move(frame));
      },
      [bridge](uint64_t connection) { caf::anon_send(bridge, closed_atom::value, connection); });
  int status = 0;
  if (!gateway) {
    status = fail(gateway.error());
  } else {
    sink->attach(gateway->get());
    auto real_port = (*gateway)->port();
    if (!port_file.empty()) {
      std::ofstream(port_file + ".tmp") << real_port << "\n";
      fs::rename(port_file + ".tmp", port_file);
    }
    spdlog::info("calderad node={} cluster={} serving clients on {}:{} data={} actor_threads={}",
                 node->name, cluster.name, node->host, real_port, node->data_dir, actor_threads);
    // tcmalloc keeps the pages a burst of work freed (thousands of jobs at once): handed back
    // every few seconds, the node's resident memory follows what it holds, not its busiest
    // moment.
    int sig = 0;
    const timespec every{kReleaseFreeMemorySeconds, 0};
    while ((sig = sigtimedwait(&stop_signals, nullptr, &every)) < 0)
      MallocExtension::instance()->ReleaseFreeMemory();
    spdlog::info("calderad node={} stopping on signal {}", node->name, sig);
    sink->attach(nullptr);
    gateway->reset();
  }
  // The membership goes first: a node actor of this process that stops before it would be seen
  // as a node lost, and its pods, which keep running and are re-adopted, written off as NodeLost.
  if (membership) caf::anon_send_exit(membership, caf::exit_reason::user_shutdown);
  if (member_port) caf::anon_send_exit(member_port, caf::exit_reason::user_shutdown);
  for (auto& a : node_actors) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  for (auto& l : hollow_links) caf::anon_send_exit(l, caf::exit_reason::user_shutdown);
  if (scheduler) caf::anon_send_exit(scheduler, caf::exit_reason::user_shutdown);
  if (reports) caf::anon_send_exit(reports, caf::exit_reason::user_shutdown);
  if (watches) caf::anon_send_exit(watches, caf::exit_reason::user_shutdown);
  if (flows) caf::anon_send_exit(flows, caf::exit_reason::user_shutdown);
  reports = nullptr;
  watches = nullptr;
  flows = nullptr;
  scheduler = nullptr;
  membership = nullptr;
  if (directory) caf::anon_send_exit(directory, caf::exit_reason::user_shutdown);
  for (auto* a : {&bridge, &link, &router, &retention, &scheduling, &timer})
    if (*a) caf::anon_send_exit(*a, caf::exit_reason::user_shutdown);
  member_port = nullptr;
  node_actors.clear();
  hollow_links.clear();
  bridge = link = router = timer = nullptr;
  directory = nullptr;
  // Every actor has finished its last write before the store is flushed; pods keep running under
  // their supervisors and are re-adopted by the next start.
  {
    std::lock_guard lock(relay->mu);
    caf::anon_send_exit(relay->relay, caf::exit_reason::user_shutdown);
    relay->relay = nullptr;
  }
  sys.await_all_actors_done();
  store->flush();
  auto st = store->stats();
  spdlog::info(
      "calderad node={} stopped store_commits={} store_batches={} store_writes={} "
      "store_coalesced={}",
      node->name, st.commits, st.batches, st.writes, st.coalesced);
  return status;
}
