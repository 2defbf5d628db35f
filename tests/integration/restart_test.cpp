// kill -9 of calderad and a restart on the same data dir: nothing accepted is lost, running pods
// are re-adopted, and pods that ended meanwhile are learnt from their supervisors' records.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <thread>

#include <future>

#include <capnp/message.h>

#include "harness.hpp"
#include "messages/codec.hpp"
#include "messages/flat.hpp"
#include "messages/store.capnp.h"
#include "storage/store.hpp"

namespace caldera::testing {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

std::string job_yaml(const std::string& name, const std::string& script,
                     const std::string& annotations = "") {
  return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: " + name +
         "}\nspec:\n  tasks:\n    - name: main\n      replicas: 1\n      template:\n" +
         (annotations.empty() ? "" : "        metadata: {annotations: {" + annotations + "}}\n") +
         "        spec: {containers: [{name: main, command: [sh, -c, \"" + script + "\"]}]}\n";
}

std::string phase_of(const Calderad& node, const std::string& job) {
  auto r = node.cli({"get", "job", job, "-o", "json"});
  if (r.exit_code != 0) return "error: " + r.err;
  return json::parse(r.out)["status"]["state"]["phase"];
}

TEST(Restart, KillNineLosesNothingAndRunningPodsAreAdopted) {
  TempDir dir;
  Calderad node(dir.path() + "/node");
  node.start();
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, job_yaml("finished", "echo one")).exit_code, 0);
  ASSERT_EQ(
      node.cli({"wait", "job", "finished", "--for=phase=Completed", "--timeout=30s"}).exit_code, 0);
  // Runs across the restart: its output proves the same process went on.
  ASSERT_EQ(node.cli({"submit", "-f", "-"},
                     job_yaml("across", "echo before; sleep 3; echo after; exit 4"))
                .exit_code,
            0);
  // Ends while the node is down.
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, job_yaml("meanwhile", "sleep 1; exit 0")).exit_code, 0);
  // Simulated: continues with the time it has left.
  ASSERT_EQ(node.cli({"submit", "-f", "-"},
                     job_yaml("simulated", "true", "caldera.io/sim-duration-ms: '2500'"))
                .exit_code,
            0);
  for (auto job : {"across", "meanwhile", "simulated"})
    ASSERT_EQ(node.cli({"wait", "job", job, "--for=phase=Running", "--timeout=30s"}).exit_code, 0)
        << job;

  node.kill9();
  std::this_thread::sleep_for(1500ms);  // the scenario itself: "meanwhile" ends while we are down
  node.start();

  EXPECT_EQ(phase_of(node, "finished"), "Completed");
  auto logs = node.cli({"logs", "finished-main-0"});
  EXPECT_EQ(logs.out, "one\n");

  auto wait = node.cli({"wait", "job", "across", "--for=phase=Failed", "--timeout=30s"});
  EXPECT_EQ(wait.exit_code, 0) << wait.err << node.log();
  EXPECT_EQ(node.cli({"logs", "across-main-0"}).out, "before\nafter\n");
  auto pods = json::parse(node.cli({"get", "pods", "--job", "across", "-o", "json"}).out);
  ASSERT_EQ(pods["items"].size(), 1u);
  EXPECT_EQ(pods["items"][0]["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"],
            4);

  EXPECT_EQ(
      node.cli({"wait", "job", "meanwhile", "--for=phase=Completed", "--timeout=30s"}).exit_code, 0)
      << node.log();
  EXPECT_EQ(
      node.cli({"wait", "job", "simulated", "--for=phase=Completed", "--timeout=30s"}).exit_code, 0)
      << node.log();
  auto sim = json::parse(node.cli({"get", "job", "simulated", "-o", "json"}).out);
  EXPECT_EQ(sim["status"]["succeeded"], 1);
}

TEST(Restart, AcceptedJobsSurviveRepeatedKills) {
  TempDir dir;
  Calderad node(dir.path() + "/node");
  node.start();
  for (int i = 0; i < 5; ++i) {
    auto name = "job" + std::to_string(i);
    auto r = node.cli({"submit", "-f", "-"}, job_yaml(name, "exit 0"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    node.kill9();  // right after "created": the job must already be durable
    node.start();
  }
  for (int i = 0; i < 5; ++i) {
    auto name = "job" + std::to_string(i);
    EXPECT_EQ(node.cli({"wait", "job", name, "--for=phase=Completed", "--timeout=30s"}).exit_code,
              0)
        << name << "\n"
        << node.log();
  }
}

}  // namespace
}  // namespace caldera::testing

namespace caldera::testing {
namespace {

// A data dir written before specs had rows of their own: the job row holds the spec. The new
// binary reads it, gives the spec its row on the job's first write, and still has it after the
// next restart (the first one that depends on the spec row).
TEST(Restart, AJobRowThatHoldsItsSpecIsReadAndKeepsItAcrossRestarts) {
  TempDir dir;
  const std::string data = dir.path() + "/node";
  {
    auto store = Store::open(data + "/db");
    ASSERT_TRUE(store) << store.error();
    Job job;
    job.uid = "old-uid";
    job.created_ms = 1'700'000'000'000;
    job.spec.name = "legacy";
    TaskSpec task;
    task.name = "main";
    task.replicas = 1;
    Container container;
    container.name = "main";
    container.command = {"true"};
    task.template_.containers.push_back(container);
    job.spec.tasks.push_back(task);
    job.spec.min_available = 1;
    job.status.state.phase = JobPhase::Completed;
    capnp::MallocMessageBuilder b;
    encode(job, b.initRoot<store::JobRecord>().initJob());  // as the previous binary wrote it
    std::promise<std::string> written;
    (*store)->commit({Write{Family::Jobs, "default/legacy", to_bytes(b)}},
                     [&](std::string error) { written.set_value(error); });
    ASSERT_EQ(written.get_future().get(), "");
  }
  Calderad node(data);
  auto spec_of = [&] {
    auto r = node.cli({"get", "job", "legacy", "-o", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err << node.log();
    if (r.exit_code != 0) return std::string();
    auto j = nlohmann::json::parse(r.out);
    return j["spec"]["tasks"][0]["name"].get<std::string>() + " " +
           j["status"]["state"]["phase"].get<std::string>();
  };
  node.start();
  EXPECT_EQ(spec_of(), "main Completed");
  node.kill9();
  node.start();
  EXPECT_EQ(spec_of(), "main Completed");
  EXPECT_EQ(node.log().find("cannot be recovered"), std::string::npos) << node.log();
}

}  // namespace
}  // namespace caldera::testing
