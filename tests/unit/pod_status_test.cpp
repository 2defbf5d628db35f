// How a node derives a pod's status from its containers (the kubelet's rules) and runs a
// simulated pod's clock.
#include "actors/node/core/pod_status.hpp"

#include <gtest/gtest.h>

namespace caldera {
namespace {

ContainerStatus container(const std::string& name, ContainerState state, int64_t started,
                          int64_t finished = 0, int32_t exit_code = 0,
                          const std::string& reason = "") {
  ContainerStatus c;
  c.name = name;
  c.state = state;
  c.started_ms = started;
  c.finished_ms = finished;
  c.exit_code = exit_code;
  c.reason = reason;
  return c;
}

TEST(PodStatus, RunningFromTheFirstContainerStartUntilTheLastEnd) {
  Pod p;
  apply_containers(
      p,
      {container("a", ContainerState::Running, 200), container("b", ContainerState::Running, 150)},
      "", 999);
  EXPECT_EQ(p.phase, PodPhase::Running);
  EXPECT_EQ(p.started_ms, 150);
  EXPECT_EQ(p.finished_ms, 0);
  apply_containers(p,
                   {container("a", ContainerState::Terminated, 200, 900),
                    container("b", ContainerState::Terminated, 150, 700)},
                   "", 999);
  EXPECT_EQ(p.phase, PodPhase::Succeeded);
  EXPECT_EQ(p.finished_ms, 900);
}

TEST(PodStatus, AContainerThatCouldNotStartNamesItself) {
  Pod p;
  apply_containers(
      p, {container("main", ContainerState::Terminated, 0, 0, 127, "StartError: no such file")}, "",
      555);
  EXPECT_EQ(p.phase, PodPhase::Failed);
  EXPECT_EQ(p.reason, "StartError: no such file");
  EXPECT_EQ(p.message, "container main: StartError: no such file");
  EXPECT_EQ(p.finished_ms, 555) << "no container end: now";
}

TEST(PodStatus, APodThatCouldNotBeCreatedIsFailedCreate) {
  Pod p;
  apply_containers(p, {container("main", ContainerState::Terminated, 0, 10, 1)},
                   "cannot write the pod's files", 20);
  EXPECT_EQ(p.phase, PodPhase::Failed);
  EXPECT_EQ(p.reason, kFailedCreate);
  EXPECT_EQ(p.message, "cannot write the pod's files");
}

TEST(PodStatus, APodStoppedAsItsLeaseRanOutIsLostWhateverItExitedWith) {
  Pod p;
  p.node = "node-2";
  apply_containers(p,
                   {container("main", ContainerState::Terminated, 5, 10, 0, "LeaseExpired"),
                    container("side", ContainerState::Terminated, 5, 9, 0, "Completed")},
                   "", 20);
  EXPECT_EQ(p.phase, PodPhase::Failed) << "exit 0 on SIGTERM is still a stop, not a success";
  EXPECT_EQ(p.reason, kNodeLost);
  EXPECT_NE(p.message.find("node node-2 stopped the pod: its lease ran out"), std::string::npos)
      << p.message;
  Pod sim;
  sim.containers.push_back(container("main", ContainerState::Waiting, 0));
  start_simulated(sim, 1);
  end_simulated(sim, 137, 9, std::string(kLeaseExpired), 50);
  EXPECT_EQ(sim.reason, kNodeLost);
  Pod running;
  apply_containers(running, {container("main", ContainerState::Running, 5)}, "", 20);
  apply_lease_expiry(running);
  EXPECT_EQ(running.phase, PodPhase::Running) << "only an ended pod";
}

TEST(PodStatus, ASimulatedPodRunsThenEndsWithItsExitCode) {
  Pod p;
  p.containers = {container("a", ContainerState::Waiting, 0),
                  container("b", ContainerState::Waiting, 0)};
  start_simulated(p, 100);
  EXPECT_EQ(p.phase, PodPhase::Running);
  EXPECT_EQ(p.started_ms, 100);
  for (const auto& c : p.containers) EXPECT_EQ(c.state, ContainerState::Running);
  end_simulated(p, 3, 0, "Error", 250);
  EXPECT_EQ(p.phase, PodPhase::Failed);
  EXPECT_EQ(p.finished_ms, 250);
  for (const auto& c : p.containers) {
    EXPECT_EQ(c.state, ContainerState::Terminated);
    EXPECT_EQ(c.exit_code, 3);
  }
  end_simulated(p, 0, 0, "Completed", 300);
  EXPECT_EQ(p.phase, PodPhase::Succeeded);
}

}  // namespace
}  // namespace caldera
