// What containers inherit from calderad, and what they must not: calderad raises its soft
// RLIMIT_NOFILE for client connections (up to the hard limit, ~1M on some hosts), and containers
// start with the limit calderad was started with. Real calderad, real shim, real containers.
#include <sys/resource.h>

#include <gtest/gtest.h>

#include "harness.hpp"

namespace caldera::testing {
namespace {

// Sets this process's soft limit (so calderad's original one) for the test's length.
class SoftOpenFiles {
 public:
  explicit SoftOpenFiles(rlim_t soft) {
    ::getrlimit(RLIMIT_NOFILE, &saved_);
    rlimit lowered = saved_;
    lowered.rlim_cur = soft;
    ok_ = ::setrlimit(RLIMIT_NOFILE, &lowered) == 0;
  }
  ~SoftOpenFiles() { ::setrlimit(RLIMIT_NOFILE, &saved_); }
  bool ok() const { return ok_; }

 private:
  rlimit saved_{};
  bool ok_ = false;
};

TEST(ContainerLimits, ContainersSeeTheOpenFilesLimitCalderadWasStartedWith) {
  rlimit rl{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &rl), 0);
  if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max <= 1500)
    GTEST_SKIP() << "the hard limit " << rl.rlim_max << " leaves nothing to raise";
  SoftOpenFiles soft(1100);
  ASSERT_TRUE(soft.ok());
  TempDir dir;
  Calderad node(dir.path() + "/node");
  node.start();
  auto submitted = node.cli({"submit", "-f", "-"}, R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: limits}
spec:
  tasks:
    - name: main
      replicas: 1
      template: {spec: {containers: [{name: main, command: [sh, -c, "ulimit -n"]}]}}
)");
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  auto done = node.cli({"wait", "job", "limits", "--for=phase=Completed", "--timeout=30s"});
  ASSERT_EQ(done.exit_code, 0) << done.err;
  auto logs = node.cli({"logs", "limits-main-0"});
  ASSERT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_EQ(logs.out, "1100\n");
}

}  // namespace
}  // namespace caldera::testing
