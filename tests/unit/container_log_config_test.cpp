// Container log rotation in the cluster config: containerLogMaxSize and containerLogMaxFiles.
#include <gtest/gtest.h>

#include "node/cluster_config.hpp"

namespace caldera {
namespace {

std::string error_at(const Diagnostics& d, const std::string& path) {
  for (const auto& e : d.errors)
    if (e.path == path) return e.message;
  return "";
}

TEST(ContainerLogConfig, DefaultsAreTheKubeletsWhenUnset) {
  Diagnostics diags;
  auto cfg = parse_cluster_config("nodes: [{name: a}]\n", diags);
  ASSERT_TRUE(cfg) << cfg.error();
  EXPECT_EQ(cfg->nodes[0].container_log_max_size, 10 * 1024 * 1024);
  EXPECT_EQ(cfg->nodes[0].container_log_max_files, 5);
  auto embedded = embedded_cluster_config("/tmp/x", 7070, 7170);
  EXPECT_EQ(embedded.nodes[0].container_log_max_size, 10 * 1024 * 1024);
  EXPECT_EQ(embedded.nodes[0].container_log_max_files, 5);
}

TEST(ContainerLogConfig, ReadsQuantitiesPerNode) {
  Diagnostics diags;
  auto cfg = parse_cluster_config(R"(
nodes:
  - {name: a, host: 10.0.0.1, containerLogMaxSize: 1Mi, containerLogMaxFiles: 2}
  - {name: b, host: 10.0.0.2, containerLogMaxSize: "512Ki"}
  - {name: c, host: 10.0.0.3, containerLogMaxSize: 2000000, containerLogMaxFiles: 10}
  - {name: d, host: 10.0.0.4, containerLogMaxSize: 1.5Ki}
)",
                                  diags);
  ASSERT_TRUE(cfg) << cfg.error();
  EXPECT_TRUE(diags.warnings.empty());
  EXPECT_EQ(cfg->nodes[0].container_log_max_size, 1 << 20);
  EXPECT_EQ(cfg->nodes[0].container_log_max_files, 2);
  EXPECT_EQ(cfg->nodes[1].container_log_max_size, 512 << 10);
  EXPECT_EQ(cfg->nodes[1].container_log_max_files, 5);
  EXPECT_EQ(cfg->nodes[2].container_log_max_size, 2000000);
  EXPECT_EQ(cfg->nodes[2].container_log_max_files, 10);
  EXPECT_EQ(cfg->nodes[3].container_log_max_size, 1536);
}

TEST(ContainerLogConfig, ReportsEachBadValueWithItsPath) {
  Diagnostics diags;
  auto cfg = parse_cluster_config(R"(
nodes:
  - {name: a, host: 10.0.0.1, containerLogMaxSize: lots, containerLogMaxFiles: 1}
  - {name: b, host: 10.0.0.2, containerLogMaxSize: 100, containerLogMaxFiles: many}
  - {name: c, host: 10.0.0.3, containerLogMaxSize: 1500m, containerLogMaxFiles: 1001}
  - {name: d, host: 10.0.0.4, containerLogMaxSize: {a: 1}, containerLogMaxFiles: [5]}
)",
                                  diags);
  EXPECT_FALSE(cfg);
  EXPECT_NE(error_at(diags, "nodes[0].containerLogMaxSize").find("not a quantity"),
            std::string::npos);
  EXPECT_NE(error_at(diags, "nodes[0].containerLogMaxFiles").find("2..1000"), std::string::npos);
  EXPECT_NE(error_at(diags, "nodes[1].containerLogMaxSize").find("minimum, 1Ki"),
            std::string::npos);
  EXPECT_NE(error_at(diags, "nodes[1].containerLogMaxFiles").find("whole number"),
            std::string::npos);
  EXPECT_NE(error_at(diags, "nodes[2].containerLogMaxSize").find("whole number of bytes"),
            std::string::npos);
  EXPECT_NE(error_at(diags, "nodes[2].containerLogMaxFiles").find("2..1000"), std::string::npos);
  EXPECT_NE(error_at(diags, "nodes[3].containerLogMaxSize"), "");
  EXPECT_NE(error_at(diags, "nodes[3].containerLogMaxFiles"), "");
  EXPECT_EQ(diags.errors.size(), 8u);
}

TEST(ContainerLogConfig, TheFlagParsersAgreeWithTheFile) {
  auto ok = parse_container_log_max_size("10Mi");
  ASSERT_TRUE(ok) << ok.error();
  EXPECT_EQ(*ok, 10 * 1024 * 1024);
  EXPECT_FALSE(parse_container_log_max_size("-1Mi"));
  EXPECT_FALSE(parse_container_log_max_size(""));
  EXPECT_EQ(check_container_log_max_files(2), std::nullopt);
  EXPECT_NE(check_container_log_max_files(0), std::nullopt);
}

}  // namespace
}  // namespace caldera
