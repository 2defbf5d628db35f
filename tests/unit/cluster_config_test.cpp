// The cluster config file: what it reads, and the paths of what is wrong in it.
#include <gtest/gtest.h>

#include "node/cluster_config.hpp"

namespace caldera {
namespace {

bool has_error(const Diagnostics& d, const std::string& path) {
  for (const auto& e : d.errors)
    if (e.path == path) return true;
  return false;
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

TEST(ClusterConfig, EmbeddedDefaultUsesThisMachine) {
  auto cfg = embedded_cluster_config("/tmp/x", 7070, 7170);
  ASSERT_EQ(cfg.nodes.size(), 1u);
  EXPECT_EQ(cfg.coordinator, cfg.nodes[0].name);
  EXPECT_GE(cfg.nodes[0].resources.get("cpu"), 1000);
  EXPECT_GT(cfg.nodes[0].resources.get("memory"), 0);
}

TEST(ClusterConfig, GatewayLimitsPerNode) {
  Diagnostics diags;
  auto cfg = parse_cluster_config(R"(
nodes:
  - {name: a, maxConnections: 2000, idleTimeout: 90s, frameTimeout: 500ms}
  - {name: b, idleTimeout: 0}
  - {name: c}
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
  - {name: b, maxConnections: many, frameTimeout: -1s}
  - {name: c, frameTimeout: [10s]}
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

}  // namespace
}  // namespace caldera
