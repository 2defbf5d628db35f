// The cluster config file: what it reads, and the paths of what is wrong in it.
#include <gtest/gtest.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "node/cluster_config.hpp"

namespace caldera {
namespace {

bool has_error(const Diagnostics& d, const std::string& path) {
  for (const auto& e : d.errors)
    if (e.path == path) return true;
  return false;
}

// The message of the error at `path`, "" when there is none.
std::string error_at(const Diagnostics& d, const std::string& path) {
  for (const auto& e : d.errors)
    if (e.path == path) return e.message;
  return "";
}

std::string all_errors(const Diagnostics& d) {
  std::string out;
  for (const auto& e : d.errors) out += to_string(e) + "\n";
  return out;
}

// A config of these nodes (flow mappings) under a cluster mapping.
Result<ClusterConfig> parse(const std::string& cluster, const std::vector<std::string>& nodes,
                            Diagnostics& diags) {
  std::string text = "cluster: " + cluster + "\nnodes:\n";
  for (const auto& n : nodes) text += "  - " + n + "\n";
  return parse_cluster_config(text, diags);
}

TEST(ClusterConfig, ReadsTheShippedLocalConfig) {
  Diagnostics diags;
  auto cfg =
      load_cluster_config(std::string(CALDERA_SOURCE_DIR) + "/cluster-config/local-1.yaml", diags);
  ASSERT_TRUE(cfg) << cfg.error();
  EXPECT_TRUE(diags.warnings.empty());
  EXPECT_EQ(cfg->coordinator, "node-1");
  ASSERT_EQ(cfg->nodes.size(), 1u);
  const auto& n = cfg->nodes[0];
  EXPECT_EQ(n.client_port, 7070);
  EXPECT_EQ(n.cluster_port, 7170);
  EXPECT_EQ(n.resources.get("cpu"), 4000);
  EXPECT_EQ(n.resources.get("memory"), 8LL * 1024 * 1024 * 1024 * 1000);
  EXPECT_EQ(n.resources.get("pods"), 110000);
}

TEST(ClusterConfig, ReportsEveryProblemWithItsPath) {
  Diagnostics diags;
  auto cfg = parse_cluster_config(R"(
cluster: {name: c, coordinator: ghost}
nodes:
  - {name: a, clientPort: 70000, resources: {cpu: lots}}
  - {name: a, colour: blue}
)",
                                  diags);
  EXPECT_FALSE(cfg);
  EXPECT_TRUE(has_error(diags, "nodes[0].clientPort"));
  EXPECT_TRUE(has_error(diags, "nodes[0].resources.cpu"));
  EXPECT_TRUE(has_error(diags, "nodes[1].name"));
  EXPECT_TRUE(has_error(diags, "cluster.coordinator"));
  ASSERT_EQ(diags.warnings.size(), 1u);
  EXPECT_EQ(diags.warnings[0].path, "nodes[1].colour");
}

TEST(ClusterConfig, InvalidYamlAndMissingNodesAreErrors) {
  Diagnostics a;
  EXPECT_FALSE(parse_cluster_config("nodes: [", a));
  EXPECT_FALSE(a.errors.empty());
  Diagnostics b;
  EXPECT_FALSE(parse_cluster_config("cluster: {name: x}\n", b));
  EXPECT_TRUE(has_error(b, "nodes"));
}

// An entry with a count stands for that many hollow nodes, named after it; the coordinator's
// entry cannot have one, nor may a hollow node take another entry's name.
TEST(ClusterConfig, ACountMakesHollowNodesNamedAfterTheEntry) {
  Diagnostics d;
  auto cfg = parse("{coordinator: c}",
                   {"{name: c, clusterPort: 7170, clientPort: 7070}",
                    "{name: h, clusterPort: 7171, clientPort: 7071, count: 3, "
                    "resources: {cpu: 1}, labels: {kind: hollow}}"},
                   d);
  ASSERT_TRUE(cfg.ok()) << all_errors(d);
  EXPECT_EQ(cfg->nodes[0].node_names(), (std::vector<std::string>{"c"}));
  EXPECT_EQ(cfg->nodes[1].node_names(), (std::vector<std::string>{"h-0", "h-1", "h-2"}));
  EXPECT_FALSE(cfg->nodes[0].count.has_value());

  Diagnostics bad;
  EXPECT_FALSE(parse("{coordinator: c}",
                     {"{name: c, clusterPort: 7170, clientPort: 7070, count: 2}",
                      "{name: h, clusterPort: 7171, clientPort: 7071, count: 0}",
                      "{name: g, clusterPort: 7172, clientPort: 7072, count: 5001}",
                      "{name: h-0, clusterPort: 7173, clientPort: 7073}",
                      "{name: k, clusterPort: 7174, clientPort: 7074, count: 2}",
                      "{name: k-1, clusterPort: 7175, clientPort: 7075}",
                      "{name: a, clusterPort: 7176, clientPort: 7076, count: 2}",
                      "{name: a-1, clusterPort: 7177, clientPort: 7077, count: 3}"},
                     bad)
                   .ok());
  EXPECT_NE(error_at(bad, "cluster.coordinator").find("hollow nodes need an entry of their own"),
            std::string::npos)
      << all_errors(bad);
  EXPECT_NE(error_at(bad, "nodes[1].count").find("outside 1..1000000"), std::string::npos)
      << all_errors(bad);
  EXPECT_NE(error_at(bad, "nodes[2].count").find("at most 5000"), std::string::npos)
      << all_errors(bad);
  EXPECT_NE(error_at(bad, "nodes[5].name").find("node 'k-1' is also a node of nodes[4]"),
            std::string::npos)
      << all_errors(bad);
  // a-1-0, a-1-1, a-1-2 do not meet a-0 and a-1: no error for those entries.
  EXPECT_FALSE(has_error(bad, "nodes[6].count"));
  EXPECT_FALSE(has_error(bad, "nodes[7].count"));
}

TEST(ClusterConfig, EmbeddedDefaultUsesThisMachine) {
  auto cfg = embedded_cluster_config("/tmp/x", 7070, 7170);
  ASSERT_EQ(cfg.nodes.size(), 1u);
  EXPECT_EQ(cfg.coordinator, cfg.nodes[0].name);
  EXPECT_GE(cfg.nodes[0].resources.get("cpu"), 1000);
  EXPECT_GT(cfg.nodes[0].resources.get("memory"), 0);
  // ephemeral-storage: the size of the data dir's file system (here, /tmp's: /tmp/x need not
  // exist), as the kubelet offers its root file system.
  struct statvfs fs {};
  ASSERT_EQ(::statvfs("/tmp", &fs), 0);
  EXPECT_EQ(cfg.nodes[0].resources.get("ephemeral-storage"),
            static_cast<MilliValue>(fs.f_blocks) * static_cast<MilliValue>(fs.f_frsize) * 1000);
}

TEST(ClusterConfig, ANodeOffersItsDataDirsFileSystemUnlessTheConfigSaysHowMuch) {
  ResourceList measured{{{"cpu", 2000}}};
  offer_ephemeral_storage(measured, "/tmp/not-made-yet/data");
  struct statvfs fs {};
  ASSERT_EQ(::statvfs("/tmp", &fs), 0);
  EXPECT_EQ(measured.get("ephemeral-storage"),
            static_cast<MilliValue>(fs.f_blocks) * static_cast<MilliValue>(fs.f_frsize) * 1000);
  ResourceList configured{{{"cpu", 2000}, {"ephemeral-storage", 10'000}}};
  offer_ephemeral_storage(configured, "/tmp");
  EXPECT_EQ(configured.get("ephemeral-storage"), 10'000) << "the config's figure stands";
}

TEST(ClusterConfig, GatewayLimitsPerNode) {
  Diagnostics diags;
  auto cfg = parse_cluster_config(R"(
nodes:
  - {name: a, maxConnections: 2000, idleTimeout: 90s, frameTimeout: 500ms}
  - {name: b, clientPort: 7071, clusterPort: 7171, idleTimeout: 0}
  - {name: c, clientPort: 7072, clusterPort: 7172}
)",
                                  diags);
  ASSERT_TRUE(cfg) << cfg.error();
  EXPECT_TRUE(diags.warnings.empty());
  const auto& a = cfg->nodes[0];
  EXPECT_EQ(a.max_connections, 2000u);
  EXPECT_EQ(a.idle_timeout, std::chrono::seconds(90));
  EXPECT_EQ(a.frame_timeout, std::chrono::milliseconds(500));
  EXPECT_EQ(cfg->nodes[1].idle_timeout, std::chrono::milliseconds(0));  // never
  EXPECT_FALSE(cfg->nodes[1].frame_timeout);
  EXPECT_FALSE(cfg->nodes[2].max_connections);
  EXPECT_FALSE(cfg->nodes[2].idle_timeout);
}

TEST(ClusterConfig, BadGatewayLimitsNameTheirField) {
  Diagnostics diags;
  auto cfg = parse_cluster_config(R"(
nodes:
  - {name: a, maxConnections: 0, idleTimeout: 5 minutes}
  - {name: b, clientPort: 7071, clusterPort: 7171, maxConnections: many, frameTimeout: -1s}
  - {name: c, clientPort: 7072, clusterPort: 7172, frameTimeout: [10s]}
)",
                                  diags);
  EXPECT_FALSE(cfg);
  EXPECT_TRUE(has_error(diags, "nodes[0].maxConnections"));
  EXPECT_TRUE(has_error(diags, "nodes[0].idleTimeout"));
  EXPECT_TRUE(has_error(diags, "nodes[1].maxConnections"));
  EXPECT_TRUE(has_error(diags, "nodes[1].frameTimeout"));
  EXPECT_TRUE(has_error(diags, "nodes[2].frameTimeout"));
  EXPECT_EQ(diags.errors.size(), 5u);
}

TEST(ClusterConfig, MaxConnectionsPerAddressIsAtMostMaxConnections) {
  Diagnostics diags;
  auto cfg = parse_cluster_config(R"(
nodes:
  - {name: a, maxConnections: 100, maxConnectionsPerAddress: 100}
  - {name: b, clientPort: 7071, clusterPort: 7171, maxConnectionsPerAddress: 4096}
  - {name: c, clientPort: 7072, clusterPort: 7172, maxConnectionsPerAddress: 3}
  - {name: d, clientPort: 7073, clusterPort: 7173}
)",
                                  diags);
  ASSERT_TRUE(cfg) << cfg.error() << "\n" << all_errors(diags);
  EXPECT_TRUE(diags.warnings.empty());  // a known field
  EXPECT_EQ(cfg->nodes[0].max_connections_per_address, 100u);
  EXPECT_EQ(cfg->nodes[1].max_connections_per_address, 4096u);  // the default maxConnections
  EXPECT_EQ(cfg->nodes[2].max_connections_per_address, 3u);
  EXPECT_FALSE(cfg->nodes[3].max_connections_per_address);

  Diagnostics bad;
  EXPECT_FALSE(parse_cluster_config(R"(
nodes:
  - {name: a, maxConnections: 100, maxConnectionsPerAddress: 101}
  - {name: b, clientPort: 7071, clusterPort: 7171, maxConnectionsPerAddress: 4097}
  - {name: c, clientPort: 7072, clusterPort: 7172, maxConnectionsPerAddress: 0}
  - {name: d, clientPort: 7073, clusterPort: 7173, maxConnectionsPerAddress: some}
)",
                                    bad));
  EXPECT_EQ(error_at(bad, "nodes[0].maxConnectionsPerAddress"),
            "101 is more than maxConnections, 100: the limit per client address is a share of the "
            "node's connections")
      << all_errors(bad);
  EXPECT_NE(error_at(bad, "nodes[1].maxConnectionsPerAddress")
                .find("4097 is more than maxConnections, 4096 (the default)"),
            std::string::npos)
      << all_errors(bad);
  EXPECT_NE(error_at(bad, "nodes[2].maxConnectionsPerAddress").find("outside 1..1000000"),
            std::string::npos)
      << all_errors(bad);
  EXPECT_TRUE(has_error(bad, "nodes[3].maxConnectionsPerAddress")) << all_errors(bad);
  EXPECT_EQ(bad.errors.size(), 4u) << all_errors(bad);
}

TEST(ClusterConfig, ReadsTheShippedThreeNodeConfig) {
  Diagnostics diags;
  auto cfg =
      load_cluster_config(std::string(CALDERA_SOURCE_DIR) + "/cluster-config/local-3.yaml", diags);
  ASSERT_TRUE(cfg) << cfg.error() << "\n" << all_errors(diags);
  EXPECT_TRUE(diags.warnings.empty());
  EXPECT_EQ(cfg->name, "local-3");
  EXPECT_EQ(cfg->coordinator, "node-1");
  EXPECT_EQ(cfg->token, "");
  EXPECT_EQ(cfg->heartbeat_interval, std::chrono::milliseconds(500));
  EXPECT_EQ(cfg->heartbeat_timeout, std::chrono::seconds(2));
  ASSERT_EQ(cfg->nodes.size(), 3u);
  const std::map<std::string, std::string> zone_a_ssd{{"zone", "a"}, {"disk", "ssd"}};
  const std::map<std::string, std::string> zone_b{{"zone", "b"}};
  const std::map<std::string, std::string> zone_b_ssd{{"zone", "b"}, {"disk", "ssd"}};
  const std::vector<std::map<std::string, std::string>> labels{zone_a_ssd, zone_b, zone_b_ssd};
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    const auto& n = cfg->nodes[i];
    EXPECT_EQ(n.name, "node-" + std::to_string(i + 1));
    EXPECT_EQ(n.host, "127.0.0.1");
    EXPECT_EQ(n.client_port, 7071 + i);
    EXPECT_EQ(n.cluster_port, 7171 + i);
    EXPECT_EQ(n.data_dir, "./caldera-data/local-3/" + n.name);
    EXPECT_EQ(n.labels, labels[i]);
    EXPECT_EQ(n.resources.get("pods"), 110000);
  }
  const MilliValue gi = 1024LL * 1024 * 1024 * 1000;
  EXPECT_EQ(cfg->nodes[0].resources.get("cpu"), 4000);
  EXPECT_EQ(cfg->nodes[0].resources.get("memory"), 8 * gi);
  EXPECT_EQ(cfg->nodes[1].resources.get("cpu"), 2000);
  EXPECT_EQ(cfg->nodes[1].resources.get("memory"), 4 * gi);
  EXPECT_EQ(cfg->nodes[1].resources.get("example.com/fpga"), 0);
  EXPECT_EQ(cfg->nodes[2].resources.get("cpu"), 2000);
  EXPECT_EQ(cfg->nodes[2].resources.get("memory"), 4 * gi);
  EXPECT_EQ(cfg->nodes[2].resources.get("example.com/fpga"), 1000);
}

TEST(ClusterConfig, HeartbeatsDefaultToHalfASecondAndTwoSeconds) {
  Diagnostics diags;
  auto cfg = parse_cluster_config("nodes: [{name: a}]\n", diags);
  ASSERT_TRUE(cfg) << cfg.error();
  EXPECT_EQ(cfg->heartbeat_interval, std::chrono::milliseconds(500));
  EXPECT_EQ(cfg->heartbeat_timeout, std::chrono::milliseconds(2000));
}

TEST(ClusterConfig, HistoryKeepsAMillionJobsForThirtyDaysUnlessTold) {
  Diagnostics diags;
  auto cfg = parse_cluster_config("nodes: [{name: a}]\n", diags);
  ASSERT_TRUE(cfg) << cfg.error();
  EXPECT_EQ(cfg->history.max_finished_jobs, 1'000'000);
  EXPECT_EQ(cfg->history.max_age_ms, int64_t{30} * 24 * 3600 * 1000);

  auto told = parse("{history: {maxFinishedJobs: 500, maxAge: 7d}}", {"{name: a}"}, diags);
  ASSERT_TRUE(told) << all_errors(diags);
  EXPECT_EQ(told->history.max_finished_jobs, 500);
  EXPECT_EQ(told->history.max_age_ms, int64_t{7} * 24 * 3600 * 1000);
  auto all = parse("{history: {maxFinishedJobs: 0, maxAge: \"0\"}}", {"{name: a}"}, diags);
  ASSERT_TRUE(all) << all_errors(diags);
  EXPECT_EQ(all->history, (RetentionPolicy{0, 0}));
  auto hours = parse("{history: {maxAge: 36h}}", {"{name: a}"}, diags);
  ASSERT_TRUE(hours) << all_errors(diags);
  EXPECT_EQ(hours->history.max_age_ms, int64_t{36} * 3600 * 1000);
  EXPECT_EQ(hours->history.max_finished_jobs, 1'000'000);

  Diagnostics bad;
  parse("{history: {maxFinishedJobs: -1, maxAge: 3 weeks, maxCount: 2}}", {"{name: a}"}, bad);
  EXPECT_NE(error_at(bad, "cluster.history.maxFinishedJobs").find("\"-1\" is not a count"),
            std::string::npos)
      << all_errors(bad);
  EXPECT_NE(error_at(bad, "cluster.history.maxAge").find("\"3 weeks\" is not a duration"),
            std::string::npos)
      << all_errors(bad);
  bool warned = false;
  for (const auto& w : bad.warnings) warned = warned || w.path == "cluster.history.maxCount";
  EXPECT_TRUE(warned);
  Diagnostics flat;
  parse("{history: 5}", {"{name: a}"}, flat);
  EXPECT_TRUE(has_error(flat, "cluster.history"));
}

TEST(ClusterConfig, HeartbeatsAreGoDurations) {
  struct Case {
    std::string interval, timeout;
    std::chrono::milliseconds want_interval, want_timeout;
  };
  using std::chrono::milliseconds;
  for (const auto& c : std::vector<Case>{
           {"100ms", "300ms", milliseconds(100), milliseconds(300)},
           {"1s", "1m30s", milliseconds(1000), milliseconds(90'000)},
           {"60s", "10m", milliseconds(60'000), milliseconds(600'000)},  // both maximums
           {"1ms", "2ms", milliseconds(1), milliseconds(2)},
           {"\"250ms\"", "1.5s", milliseconds(250), milliseconds(1500)},
       }) {
    SCOPED_TRACE(c.interval + " " + c.timeout);
    Diagnostics diags;
    auto cfg = parse("{heartbeatInterval: " + c.interval + ", heartbeatTimeout: " + c.timeout + "}",
                     {"{name: a}"}, diags);
    ASSERT_TRUE(cfg) << all_errors(diags);
    EXPECT_TRUE(diags.warnings.empty());
    EXPECT_EQ(cfg->heartbeat_interval, c.want_interval);
    EXPECT_EQ(cfg->heartbeat_timeout, c.want_timeout);
  }
  // Only one given: the other keeps its default.
  Diagnostics diags;
  auto cfg = parse("{heartbeatInterval: 1s}", {"{name: a}"}, diags);
  ASSERT_TRUE(cfg) << all_errors(diags);
  EXPECT_EQ(cfg->heartbeat_interval, std::chrono::seconds(1));
  EXPECT_EQ(cfg->heartbeat_timeout, std::chrono::seconds(2));
}

TEST(ClusterConfig, BadHeartbeatsNameTheirFieldAndSayWhy) {
  struct Case {
    std::string cluster, path, says;
  };
  for (const auto& c : std::vector<Case>{
           {"{heartbeatInterval: 0}", "cluster.heartbeatInterval", "more than 0"},
           {"{heartbeatInterval: 0s}", "cluster.heartbeatInterval", "more than 0"},
           {"{heartbeatInterval: -1s}", "cluster.heartbeatInterval", "more than 0"},
           {"{heartbeatInterval: 500}", "cluster.heartbeatInterval", "not a duration"},
           {"{heartbeatInterval: half a second}", "cluster.heartbeatInterval", "not a duration"},
           {"{heartbeatInterval: [1s]}", "cluster.heartbeatInterval", "must be a duration"},
           {"{heartbeatInterval: 61s, heartbeatTimeout: 5m}", "cluster.heartbeatInterval",
            "maximum, 60s"},
           {"{heartbeatTimeout: 11m}", "cluster.heartbeatTimeout", "maximum, 10m"},
           {"{heartbeatTimeout: 0}", "cluster.heartbeatTimeout", "more than 0"},
           {"{heartbeatTimeout: soon}", "cluster.heartbeatTimeout", "not a duration"},
           {"{heartbeatInterval: 2s, heartbeatTimeout: 2s}", "cluster.heartbeatTimeout",
            "must be more than heartbeatInterval, 2s"},
           {"{heartbeatInterval: 1s, heartbeatTimeout: 500ms}", "cluster.heartbeatTimeout",
            "must be more than heartbeatInterval, 1s"},
           {"{heartbeatTimeout: 400ms}", "cluster.heartbeatTimeout",
            "must be more than heartbeatInterval, 500ms"},
           // The default timeout (2s) is not more than this: the interval, written, is blamed.
           {"{heartbeatInterval: 5s}", "cluster.heartbeatInterval", "2s by default"},
       }) {
    SCOPED_TRACE(c.cluster);
    Diagnostics diags;
    EXPECT_FALSE(parse(c.cluster, {"{name: a}"}, diags));
    ASSERT_EQ(diags.errors.size(), 1u) << all_errors(diags);
    EXPECT_EQ(diags.errors[0].path, c.path);
    EXPECT_NE(diags.errors[0].message.find(c.says), std::string::npos) << all_errors(diags);
    EXPECT_NE(diags.errors[0].message.find("example"), std::string::npos) << all_errors(diags);
  }
}

TEST(ClusterConfig, TheLeaseIsFiveSecondsOrTheHeartbeatTimeoutAndNeverShorterThanIt) {
  using std::chrono::milliseconds;
  struct Case {
    std::string cluster;
    milliseconds want;
  };
  for (const auto& c : std::vector<Case>{
           {"{}", milliseconds(5000)},
           {"{heartbeatTimeout: 1s}", milliseconds(5000)},
           {"{heartbeatInterval: 5s, heartbeatTimeout: 20s}", milliseconds(20'000)},
           {"{leaseTimeout: 3s}", milliseconds(3000)},
           {"{heartbeatTimeout: 3s, leaseTimeout: 3s}", milliseconds(3000)},
           {"{leaseTimeout: 1m30s}", milliseconds(90'000)},
       }) {
    SCOPED_TRACE(c.cluster);
    Diagnostics diags;
    auto cfg = parse(c.cluster, {"{name: a}"}, diags);
    ASSERT_TRUE(cfg) << all_errors(diags);
    EXPECT_TRUE(diags.warnings.empty());
    EXPECT_EQ(cfg->lease_timeout, c.want);
  }
  struct Bad {
    std::string cluster, says;
  };
  for (const auto& c : std::vector<Bad>{
           {"{leaseTimeout: 1s}", "must be at least heartbeatTimeout, 2s"},
           {"{heartbeatTimeout: 4s, leaseTimeout: 3s}", "must be at least heartbeatTimeout, 4s"},
           {"{leaseTimeout: 0}", "more than 0"},
           {"{leaseTimeout: 11m}", "maximum, 10m"},
           {"{leaseTimeout: later}", "not a duration"},
       }) {
    SCOPED_TRACE(c.cluster);
    Diagnostics diags;
    EXPECT_FALSE(parse(c.cluster, {"{name: a}"}, diags));
    ASSERT_EQ(diags.errors.size(), 1u) << all_errors(diags);
    EXPECT_EQ(diags.errors[0].path, "cluster.leaseTimeout");
    EXPECT_NE(diags.errors[0].message.find(c.says), std::string::npos) << all_errors(diags);
  }
}

TEST(ClusterConfig, KnownClusterFieldsAreQuietAndOthersWarned) {
  Diagnostics diags;
  auto cfg = parse(
      "{name: c, coordinator: a, token: t0k, heartbeatInterval: 1s, heartbeatTimeout: 3s, "
      "colour: blue, nodez: []}",
      {"{name: a}"}, diags);
  ASSERT_TRUE(cfg) << all_errors(diags);
  EXPECT_EQ(cfg->name, "c");
  EXPECT_EQ(cfg->token, "t0k");
  ASSERT_EQ(diags.warnings.size(), 2u);
  EXPECT_EQ(diags.warnings[0].path, "cluster.colour");
  EXPECT_EQ(diags.warnings[0].message, "unknown field, ignored");
  EXPECT_EQ(diags.warnings[1].path, "cluster.nodez");
}

TEST(ClusterConfig, ScoringIsLeastAllocatedUnlessBinpackIsChosen) {
  Diagnostics diags;
  auto cfg = parse("{name: c}", {"{name: a}"}, diags);
  ASSERT_TRUE(cfg) << all_errors(diags);
  EXPECT_EQ(cfg->scoring, sched::Scoring::LeastAllocated);
  cfg = parse("{name: c, scoring: binpack}", {"{name: a}"}, diags);
  ASSERT_TRUE(cfg) << all_errors(diags);
  EXPECT_EQ(cfg->scoring, sched::Scoring::Binpack);
  EXPECT_TRUE(diags.warnings.empty());
  Diagnostics bad;
  EXPECT_FALSE(parse("{name: c, scoring: spread}", {"{name: a}"}, bad));
  ASSERT_EQ(bad.errors.size(), 1u) << all_errors(bad);
  EXPECT_EQ(bad.errors[0].path, "cluster.scoring");
  EXPECT_EQ(bad.errors[0].message, "\"spread\" is not a scoring; use binpack or least-allocated");
}

// A directory of its own under /tmp, removed with what it holds.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = "/tmp/caldera-config-XXXXXX";
    if (::mkdtemp(tmpl.data())) path_ = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string write(const std::string& name, const std::string& text) const {
    auto file = path_ / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
    return file.string();
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::vector<std::string> plugin_names(const sched::SchedulerConf& conf, size_t tier) {
  std::vector<std::string> out;
  for (const auto& p : conf.tiers.at(tier).plugins) out.push_back(p.name);
  return out;
}

TEST(ClusterConfig, SchedulerIsVolcanosDefaultConfUnlessGiven) {
  Diagnostics diags;
  auto cfg = parse("{name: c}", {"{name: a}"}, diags);
  ASSERT_TRUE(cfg) << all_errors(diags);
  EXPECT_EQ(cfg->scheduler, sched::default_scheduler_conf());
  EXPECT_EQ(embedded_cluster_config("/tmp/x", 0, 0).scheduler, sched::default_scheduler_conf());
}

TEST(ClusterConfig, SchedulerTakesTheConfInPlace) {
  Diagnostics diags;
  auto cfg = parse_cluster_config(R"(
cluster:
  name: c
  scheduler:
    actions: "enqueue, allocate"
    tiers:
    - plugins:
      - name: gang
        enablePreemptable: false
      - name: binpack
        arguments: {binpack.weight: 5}
nodes: [{name: a}]
)",
                                  diags);
  ASSERT_TRUE(cfg) << all_errors(diags);
  EXPECT_TRUE(diags.warnings.empty());
  EXPECT_EQ(cfg->scheduler.actions, (std::vector<std::string>{"enqueue", "allocate"}));
  EXPECT_EQ(plugin_names(cfg->scheduler, 0), (std::vector<std::string>{"gang", "binpack"}));
  EXPECT_FALSE(cfg->scheduler.plugin("gang")->enabled("enablePreemptable"));
  EXPECT_EQ(cfg->scheduler.plugin("binpack")->number("binpack.weight", 1), 5);
  EXPECT_EQ(cfg->scoring, sched::Scoring::LeastAllocated);  // as before: scoring was not given

  Diagnostics bad;
  EXPECT_FALSE(parse("{name: c, scheduler: {actions: allocate, tiers: [{plugins: [{name: tdm}]}]}}",
                     {"{name: a}"}, bad));
  EXPECT_NE(error_at(bad, "cluster.scheduler.tiers[0].plugins[0].name")
                .find("\"tdm\" is not a plugin caldera's scheduler has; known: priority"),
            std::string::npos)
      << all_errors(bad);
  Diagnostics list;
  EXPECT_FALSE(parse("{name: c, scheduler: [allocate]}", {"{name: a}"}, list));
  EXPECT_TRUE(has_error(list, "cluster.scheduler")) << all_errors(list);
}

TEST(ClusterConfig, SchedulerNamesAFileRelativeToTheConfigsDirectory) {
  TempDir dir;
  dir.write("conf/volcano-scheduler.conf",
            "actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins:\n  - name: gang\n");
  auto config = dir.write("conf/cluster.yaml",
                          "cluster: {name: c, scheduler: volcano-scheduler.conf}\n"
                          "nodes: [{name: a}]\n");
  Diagnostics diags;
  auto cfg = load_cluster_config(config, diags);  // from the test's working directory
  ASSERT_TRUE(cfg) << cfg.error() << all_errors(diags);
  EXPECT_EQ(cfg->scheduler.actions, (std::vector<std::string>{"enqueue", "allocate", "backfill"}));
  EXPECT_EQ(plugin_names(cfg->scheduler, 0), std::vector<std::string>{"gang"});

  // An absolute path is taken as it is; problems in the file are at cluster.scheduler.
  auto bad = dir.write("elsewhere/bad.conf", "actions: shuffle\ntiers: []\n");
  Diagnostics bad_diags;
  EXPECT_FALSE(parse("{name: c, scheduler: " + bad + "}", {"{name: a}"}, bad_diags));
  EXPECT_NE(error_at(bad_diags, "cluster.scheduler.actions").find("\"shuffle\" is not an action"),
            std::string::npos)
      << all_errors(bad_diags);
}

TEST(ClusterConfig, AMissingSchedulerFileIsAnErrorNamingIt) {
  TempDir dir;
  auto config = dir.write("cluster.yaml",
                          "cluster: {name: c, scheduler: missing.conf}\nnodes: [{name: a}]\n");
  Diagnostics diags;
  EXPECT_FALSE(load_cluster_config(config, diags));
  EXPECT_EQ(error_at(diags, "cluster.scheduler"), "cannot read the scheduler conf " +
                                                      (dir.path() / "missing.conf").string() +
                                                      ": No such file or directory")
      << all_errors(diags);
  Diagnostics directory;
  EXPECT_FALSE(
      parse("{name: c, scheduler: " + dir.path().string() + "}", {"{name: a}"}, directory));
  EXPECT_NE(error_at(directory, "cluster.scheduler").find("Is a directory"), std::string::npos)
      << all_errors(directory);
  Diagnostics huge;
  auto big = dir.write("big.conf", std::string(sched::kMaxSchedulerConfBytes + 1, '#'));
  EXPECT_FALSE(parse("{name: c, scheduler: " + big + "}", {"{name: a}"}, huge));
  EXPECT_NE(error_at(huge, "cluster.scheduler").find("more than 1048576 bytes (1 MiB)"),
            std::string::npos)
      << all_errors(huge);
}

TEST(ClusterConfig, ScoringAndSchedulerTogetherAreRefused) {
  Diagnostics diags;
  EXPECT_FALSE(parse("{name: c, scoring: binpack, scheduler: {actions: allocate, tiers: []}}",
                     {"{name: a}"}, diags));
  EXPECT_NE(
      error_at(diags, "cluster.scoring").find("nodeorder plugin (least-allocated) or binpack"),
      std::string::npos)
      << all_errors(diags);
}

TEST(ClusterConfig, ScoringBinpackPutsBinpackInPlaceOfNodeorder) {
  Diagnostics diags;
  auto cfg = parse("{name: c, scoring: binpack}", {"{name: a}"}, diags);
  ASSERT_TRUE(cfg) << all_errors(diags);
  EXPECT_EQ(cfg->scoring, sched::Scoring::Binpack);  // still read by the scheduler
  auto expected = sched::default_scheduler_conf();
  EXPECT_EQ(cfg->scheduler.actions, expected.actions);
  EXPECT_EQ(plugin_names(cfg->scheduler, 0), plugin_names(expected, 0));
  EXPECT_EQ(plugin_names(cfg->scheduler, 1),
            (std::vector<std::string>{"overcommit", "drf", "predicates", "proportion", "binpack"}));
  cfg = parse("{name: c, scoring: least-allocated}", {"{name: a}"}, diags);
  ASSERT_TRUE(cfg) << all_errors(diags);
  EXPECT_EQ(cfg->scheduler, expected);
}

TEST(ClusterConfig, ClusterMustBeAMapping) {
  Diagnostics diags;
  EXPECT_FALSE(parse("[local-3]", {"{name: a}"}, diags));
  EXPECT_TRUE(has_error(diags, "cluster"));
}

TEST(ClusterConfig, NodeLabelsAreRead) {
  Diagnostics diags;
  auto cfg = parse_cluster_config(R"(
nodes:
  - name: a
    clientPort: 7071
    clusterPort: 7171
    labels:
      zone: eu-west-1a
      disk: ssd
      example.com/fpga: "true"
      kubernetes.io/hostname: a
      gpu: ""
      spot:
      Tier_2.x: "0"
      count: 3
  - {name: b, clientPort: 7072, clusterPort: 7172, labels: {}}
  - {name: c, clientPort: 7073, clusterPort: 7173}
)",
                                  diags);
  ASSERT_TRUE(cfg) << all_errors(diags);
  EXPECT_TRUE(diags.warnings.empty());  // labels is a known field
  const std::map<std::string, std::string> want{{"zone", "eu-west-1a"},
                                                {"disk", "ssd"},
                                                {"example.com/fpga", "true"},
                                                {"gpu", ""},
                                                {"spot", ""},
                                                {"kubernetes.io/hostname", "a"},
                                                {"Tier_2.x", "0"},
                                                {"count", "3"}};
  EXPECT_EQ(cfg->nodes[0].labels, want);
  EXPECT_TRUE(cfg->nodes[1].labels.empty());
  EXPECT_TRUE(cfg->nodes[2].labels.empty());
}

TEST(ClusterConfig, LabelNamesAndValuesFollowKubernetesRules) {
  const std::string name63(63, 'n'), name64(64, 'n');
  Diagnostics ok_diags;
  auto ok = parse(
      "{}", {"{name: a, labels: {" + name63 + ": " + name63 + ", example.com/" + name63 + ": x}}"},
      ok_diags);
  ASSERT_TRUE(ok) << all_errors(ok_diags);
  EXPECT_EQ(ok->nodes[0].labels.at(name63), name63);

  struct Case {
    std::string labels, path;
  };
  for (const auto& c : std::vector<Case>{
           {"{zone: a b}", "nodes[0].labels.zone"},
           {"{zone: a/b}", "nodes[0].labels.zone"},
           {"{zone: " + name64 + "}", "nodes[0].labels.zone"},
           {"{zone: [a]}", "nodes[0].labels.zone"},
           {"{zone: {a: b}}", "nodes[0].labels.zone"},
           {"{" + name64 + ": a}", "nodes[0].labels." + name64},
           {"{\"\": a}", "nodes[0].labels."},
           {"{\"a b\": c}", "nodes[0].labels.a b"},
           {"{example.com/: a}", "nodes[0].labels.example.com/"},
           {"{/zone: a}", "nodes[0].labels./zone"},
           {"{Example.com/zone: a}", "nodes[0].labels.Example.com/zone"},
           {"{a/b/c: a}", "nodes[0].labels.a/b/c"},
           {"{zone: a, zone: b}", "nodes[0].labels.zone"},
           {"[zone]", "nodes[0].labels"},
           {"zone=a", "nodes[0].labels"},
       }) {
    SCOPED_TRACE(c.labels);
    Diagnostics diags;
    EXPECT_FALSE(parse("{}", {"{name: a, labels: " + c.labels + "}"}, diags));
    ASSERT_EQ(diags.errors.size(), 1u) << all_errors(diags);
    EXPECT_EQ(diags.errors[0].path, c.path) << all_errors(diags);
  }
}

TEST(ClusterConfig, BadLabelsAreReportedOnTheirNode) {
  Diagnostics diags;
  EXPECT_FALSE(parse("{}",
                     {"{name: a, labels: {zone: a}}",
                      "{name: b, clientPort: 7072, clusterPort: 7172, labels: {zone: \"a:b\"}}"},
                     diags));
  ASSERT_EQ(diags.errors.size(), 1u) << all_errors(diags);
  EXPECT_EQ(diags.errors[0].path, "nodes[1].labels.zone");
  EXPECT_NE(diags.errors[0].message.find("a:b"), std::string::npos);
  EXPECT_NE(diags.errors[0].message.find("example"), std::string::npos);
}

TEST(ClusterConfig, ANodesClientAndClusterPortsMustDiffer) {
  Diagnostics diags;
  EXPECT_FALSE(parse("{}", {"{name: a, clientPort: 7070, clusterPort: 7070}"}, diags));
  ASSERT_EQ(diags.errors.size(), 1u) << all_errors(diags);
  EXPECT_EQ(diags.errors[0].path, "nodes[0].clusterPort");
  EXPECT_EQ(diags.errors[0].message, "port 7070 on 127.0.0.1 is already nodes[0].clientPort");
}

TEST(ClusterConfig, TwoNodesOnOneHostCannotShareAPort) {
  Diagnostics diags;
  EXPECT_FALSE(parse("{}",
                     {"{name: a, host: 127.0.0.1, clientPort: 7071, clusterPort: 7171}",
                      "{name: b, host: 127.0.0.1, clientPort: 7072, clusterPort: 7172}",
                      "{name: c, host: 127.0.0.1, clientPort: 7073, clusterPort: 7072}"},
                     diags));
  ASSERT_EQ(diags.errors.size(), 1u) << all_errors(diags);
  EXPECT_EQ(diags.errors[0].path, "nodes[2].clusterPort");
  EXPECT_EQ(diags.errors[0].message, "port 7072 on 127.0.0.1 is already nodes[1].clientPort");
}

TEST(ClusterConfig, TwoNodesOnOneHostCannotShareTheDefaultPorts) {
  Diagnostics diags;
  EXPECT_FALSE(parse("{}", {"{name: a}", "{name: b}"}, diags));
  EXPECT_EQ(error_at(diags, "nodes[1].clientPort"),
            "port 7070 on 127.0.0.1 is already nodes[0].clientPort");
  EXPECT_EQ(error_at(diags, "nodes[1].clusterPort"),
            "port 7170 on 127.0.0.1 is already nodes[0].clusterPort");
  EXPECT_EQ(diags.errors.size(), 2u) << all_errors(diags);
}

TEST(ClusterConfig, NodesOnDifferentHostsMayShareAPort) {
  Diagnostics diags;
  auto cfg = parse("{}",
                   {"{name: a, host: 10.0.0.1}", "{name: b, host: 10.0.0.2}",
                    // hosts are compared as written: these are different too
                    "{name: c, host: localhost}", "{name: d, host: 127.0.0.1}"},
                   diags);
  ASSERT_TRUE(cfg) << all_errors(diags);
  EXPECT_EQ(cfg->nodes.size(), 4u);
}

TEST(ClusterConfig, ANodeOnEveryAddressClashesWithEveryHost) {
  Diagnostics diags;
  EXPECT_FALSE(parse("{}",
                     {"{name: a, host: 10.0.0.1, clientPort: 7071, clusterPort: 7171}",
                      "{name: b, host: 0.0.0.0, clientPort: 7072, clusterPort: 7171}"},
                     diags));
  ASSERT_EQ(diags.errors.size(), 1u) << all_errors(diags);
  EXPECT_EQ(diags.errors[0].path, "nodes[1].clusterPort");
  EXPECT_EQ(diags.errors[0].message,
            "port 7171 on 0.0.0.0 is already nodes[0].clusterPort (on 10.0.0.1)");

  Diagnostics other_way;
  EXPECT_FALSE(parse("{}",
                     {"{name: a, host: 0.0.0.0, clientPort: 7071, clusterPort: 7171}",
                      "{name: b, host: 10.0.0.2, clientPort: 7071, clusterPort: 7172}"},
                     other_way));
  ASSERT_EQ(other_way.errors.size(), 1u) << all_errors(other_way);
  EXPECT_EQ(other_way.errors[0].path, "nodes[1].clientPort");
}

TEST(ClusterConfig, APortThatIsWrongIsNotAlsoAClash) {
  Diagnostics diags;
  EXPECT_FALSE(parse("{}",
                     {"{name: a, clientPort: 7071, clusterPort: 7171}",
                      "{name: b, clientPort: 70000, clusterPort: 7172}"},
                     diags));
  ASSERT_EQ(diags.errors.size(), 1u) << all_errors(diags);
  EXPECT_EQ(diags.errors[0].path, "nodes[1].clientPort");
}

TEST(ClusterConfig, TwoNodesCannotShareADataDir) {
  struct Case {
    std::string first, second;
  };
  for (const auto& c : std::vector<Case>{
           {"./data/x", "./data/x"},
           {"./data/x", "data/x/"},
           {"data/./y/../x", "data//x"},
           {"/var/lib/caldera", "/var/lib/caldera/"},
           {"./caldera-data/b", ""},  // b's default
       }) {
    SCOPED_TRACE(c.first + " " + c.second);
    Diagnostics diags;
    std::string second = "{name: b, clientPort: 7072, clusterPort: 7172";
    if (!c.second.empty()) second += ", dataDir: \"" + c.second + "\"";
    second += "}";
    EXPECT_FALSE(parse(
        "{}",
        {"{name: a, clientPort: 7071, clusterPort: 7171, dataDir: \"" + c.first + "\"}", second},
        diags));
    ASSERT_EQ(diags.errors.size(), 1u) << all_errors(diags);
    EXPECT_EQ(diags.errors[0].path, "nodes[1].dataDir");
    EXPECT_NE(diags.errors[0].message.find("nodes[0].dataDir"), std::string::npos);
  }
}

TEST(ClusterConfig, DistinctDataDirsAreFine) {
  Diagnostics diags;
  auto cfg = parse("{}",
                   {"{name: a, clientPort: 7071, clusterPort: 7171, dataDir: ./data/a}",
                    "{name: b, clientPort: 7072, clusterPort: 7172, dataDir: ./data/a/b}",
                    "{name: c, clientPort: 7073, clusterPort: 7173}",
                    "{name: d, clientPort: 7074, clusterPort: 7174, dataDir: /data/a}"},
                   diags);
  ASSERT_TRUE(cfg) << all_errors(diags);
  EXPECT_EQ(cfg->nodes[2].data_dir, "./caldera-data/c");
}

TEST(ClusterConfig, DuplicateNodeNamesAreRefusedOnce) {
  Diagnostics diags;
  EXPECT_FALSE(parse("{}",
                     {"{name: a, clientPort: 7071, clusterPort: 7171}",
                      "{name: a, clientPort: 7072, clusterPort: 7172}"},
                     diags));
  ASSERT_EQ(diags.errors.size(), 1u) << all_errors(diags);  // not also their default dataDir
  EXPECT_EQ(diags.errors[0].path, "nodes[1].name");
}

TEST(ClusterConfig, PathsCountNodesAsWrittenPastOneThatIsNoMapping) {
  Diagnostics diags;
  EXPECT_FALSE(parse("{}",
                     {"just-a-name", "{name: a, clientPort: 7071, clusterPort: 7171}",
                      "{name: a, clientPort: 7071, clusterPort: 7172}"},
                     diags));
  EXPECT_TRUE(has_error(diags, "nodes[0]"));
  EXPECT_TRUE(has_error(diags, "nodes[2].name"));
  EXPECT_TRUE(has_error(diags, "nodes[2].clientPort"));
  EXPECT_EQ(error_at(diags, "nodes[2].clientPort"),
            "port 7071 on 127.0.0.1 is already nodes[1].clientPort");
}

TEST(ClusterConfig, MetricsPortIsPerNodeOffByDefaultAndMustNotClash) {
  Diagnostics diags;
  auto cfg = parse_cluster_config(R"(
nodes:
  - {name: a, metricsPort: 9090}
  - {name: b, clientPort: 7071, clusterPort: 7171, metricsPort: 0}
  - {name: c, clientPort: 7072, clusterPort: 7172}
)",
                                  diags);
  ASSERT_TRUE(cfg) << cfg.error() << all_errors(diags);
  EXPECT_TRUE(diags.warnings.empty());
  EXPECT_EQ(cfg->nodes[0].metrics_port, 9090);
  EXPECT_EQ(cfg->nodes[1].metrics_port, 0);
  EXPECT_EQ(cfg->nodes[2].metrics_port, 0);

  Diagnostics bad;
  parse_cluster_config(R"(
nodes:
  - {name: a, metricsPort: 7070}
  - {name: b, clientPort: 7071, clusterPort: 7171, metricsPort: 70000}
)",
                       bad);
  EXPECT_EQ(error_at(bad, "nodes[0].metricsPort"),
            "port 7070 on 127.0.0.1 is already nodes[0].clientPort")
      << all_errors(bad);
  EXPECT_EQ(error_at(bad, "nodes[1].metricsPort"), "port 70000 is outside 1..65535")
      << all_errors(bad);
}

}  // namespace
}  // namespace caldera
