// kill -9 of calderad and a restart on the same data dir: nothing accepted is lost, running pods
// are re-adopted, and pods that ended meanwhile are learnt from their supervisors' records.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <future>

#include <capnp/message.h>

#include "harness.hpp"
#include "messages/codec/codec.hpp"
#include "messages/codec/flat.hpp"
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

// A store damaged while its node was down (a corrupt block in a table file): the next start's
// recovery meets it, and calderad stops saying why and what to do, instead of serving a store
// that lost records without a word.
TEST(Restart, ADamagedStoreStopsTheNodeAndSaysWhy) {
  TempDir dir;
  const auto data = dir.path() + "/node";
  {
    Calderad node(data);
    node.start();
    std::string all;
    uint64_t noise = 88172645463325252ull;  // specs that do not compress into one block
    for (int i = 0; i < 400; ++i) {
      std::string note(2000, 'x');
      for (auto& c : note) {
        noise ^= noise << 13, noise ^= noise >> 7, noise ^= noise << 17;
        c = static_cast<char>('a' + noise % 26);
      }
      // Live (simulated for 10 min, most waiting for room): a restart reads live jobs only.
      all += job_yaml("j" + std::to_string(i), "true",
                      "caldera.io/sim-duration-ms: '600000', note: " + note) +
             "---\n";
    }
    auto submitted = node.cli({"submit", "-f", "-"}, all);
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
    node.stop();
  }
  {
    Calderad node(data);  // its recovery writes the log's records into table files
    node.start();
    node.stop();
  }
  std::filesystem::path table;
  uintmax_t largest = 0;
  for (const auto& e : std::filesystem::directory_iterator(data + "/db"))
    if (e.path().extension() == ".sst" && std::filesystem::file_size(e.path()) > largest)
      table = e.path(), largest = std::filesystem::file_size(e.path());
  ASSERT_GT(largest, 100000u) << "no table file of the jobs";
  {
    std::fstream f(table, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(largest / 2));
    const std::string junk(4096, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  Calderad node(data);
  node.launch();
  int status = 0;
  ASSERT_TRUE(
      eventually([&] { return ::waitpid(node.pid(), &status, WNOHANG) == node.pid(); }, 20s))
      << "it ran on a damaged store\n"
      << node.log();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  const auto log = node.log();
  EXPECT_NE(log.find("calderad stops: the store in " + data + "/db is damaged"), std::string::npos)
      << log;
  EXPECT_NE(log.find("Corruption"), std::string::npos) << log;
}

// Deleting a job stops its running pod with the pod's own grace period: a TERM handler that
// needs 3 s gets them from terminationGracePeriodSeconds: 6 (the node's removal used 2 s).
TEST(Restart, ADeletedJobsPodGetsItsOwnGracePeriod) {
  TempDir dir;
  Calderad node(dir.path() + "/node");
  node.start();
  const auto marks = dir.path() + "/marks";
  auto yaml = job_yaml("graceful", "trap 'sleep 3; echo clean >> " + marks +
                                       "; exit 0' TERM; echo up >> " + marks + "; sleep 60 & wait");
  const std::string spec = "        spec: {";
  yaml.replace(yaml.find(spec), spec.size(), spec + "terminationGracePeriodSeconds: 6, ");
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, yaml).exit_code, 0);
  ASSERT_TRUE(eventually([&] {
    std::ifstream in(marks);
    std::string line;
    return std::getline(in, line) && line == "up";
  }));
  ASSERT_EQ(node.cli({"delete", "job", "graceful"}).exit_code, 0);
  EXPECT_TRUE(eventually(
      [&] {
        std::ifstream in(marks);
        std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        return all == "up\nclean\n";
      },
      10s))
      << node.log();
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
    // Finished just now: history retention (maxAge, 30 days) keeps it.
    job.status.state.last_transition_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                              std::chrono::system_clock::now().time_since_epoch())
                                              .count();
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
