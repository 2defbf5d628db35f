// A gang that does not fit says so: a warning at submit, the reason Unschedulable with the
// shortfall while it waits; and a command the job's phase ignores is an error, not "issued".
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "client/client.hpp"
#include "messages/model/resources.hpp"
#include "node_test.hpp"

namespace caldera::testing {
namespace {

using namespace std::chrono_literals;

// `replicas` pods each asking `cpu` and running `script`, all of them needed at once.
std::string gang_yaml(const std::string& name, int replicas, const std::string& cpu,
                      const std::string& script = "sleep 60") {
  return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: " + name +
         "}\nspec:\n  minAvailable: " + std::to_string(replicas) +
         "\n  tasks:\n    - name: main\n      replicas: " + std::to_string(replicas) +
         "\n      template:\n        spec:\n          containers:\n            - name: main\n"
         "              command: [sh, -c, \"" +
         script + "\"]\n" +
         (cpu.empty() ? "" : "              resources: {requests: {cpu: \"" + cpu + "\"}}\n");
}

class Unschedulable : public NodeTest {
 protected:
  // The node's cpu in whole cores: a pod asking for all of it fits alone, never beside another.
  // The embedded node has the machine's cores, so the figures below follow the machine.
  int cores() {
    auto cpu = get_json({"get", "nodes"})["items"][0]["status"]["capacity"]["cpu"];
    return std::stoi(cpu.get<std::string>());
  }

  nlohmann::json state_of(const std::string& job) {
    return get_json({"get", "job", job})["status"]["state"];
  }

  ::testing::AssertionResult reaches(const std::string& job, const std::string& phase) {
    auto r = node.cli({"wait", "job", job, "--for=phase=" + phase, "--timeout=30s"});
    if (r.exit_code == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << r.err << node.cli({"describe", "job", job}).out;
  }
};

TEST_F(Unschedulable, AGangLargerThanTheClusterIsAcceptedWithAWarningAndSaysWhyItWaits) {
  const auto n = std::to_string(cores());
  const auto three_n = std::to_string(3 * cores());
  auto submit = node.cli({"submit", "-f", "-"}, gang_yaml("big", 3, n));
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  EXPECT_NE(submit.out.find("job.batch.volcano.sh/big created"), std::string::npos);
  EXPECT_NE(
      submit.err.find("Warning: job big needs " + three_n +
                      " cpu for its minAvailable 3 pods; the cluster has " + n + " cpu in all"),
      std::string::npos)
      << submit.err;

  // One of the three fits before the gang's statement is discarded (seed 004's count).
  const std::string why =
      "2/3 tasks in gang unschedulable: 1 node: insufficient cpu; "
      "minAvailable 3 needs cpu " +
      three_n + ", the ready nodes have " + n + " in all";
  ASSERT_TRUE(eventually([&] { return state_of("big")["reason"] == "Unschedulable"; }, 10s))
      << state_of("big").dump();
  auto state = state_of("big");
  EXPECT_EQ(state["phase"], "Pending");
  EXPECT_EQ(state["message"], why);
  auto describe = node.cli({"describe", "job", "big"});
  EXPECT_NE(describe.out.find(why), std::string::npos) << describe.out;

  // A job that fits gets no warning.
  auto small = node.cli({"submit", "-f", "-"}, gang_yaml("small", 1, "", "true"));
  ASSERT_EQ(small.exit_code, 0) << small.err;
  EXPECT_EQ(small.err.find("Warning"), std::string::npos) << small.err;
  ASSERT_TRUE(reaches("small", "Completed"));
  EXPECT_EQ(state_of("big")["reason"], "Unschedulable");
}

TEST_F(Unschedulable, AGangThatWaitsForRoomSaysSoUntilItIsPlaced) {
  const auto n = std::to_string(cores());
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, gang_yaml("hog", 1, n)).exit_code, 0);
  ASSERT_TRUE(reaches("hog", "Running"));
  auto later = node.cli({"submit", "-f", "-"}, gang_yaml("later", 1, n));
  ASSERT_EQ(later.exit_code, 0) << later.err;
  EXPECT_EQ(later.err.find("Warning"), std::string::npos) << later.err;  // fits the cluster
  ASSERT_TRUE(eventually([&] { return state_of("later")["reason"] == "Unschedulable"; }, 10s))
      << state_of("later").dump();
  EXPECT_EQ(state_of("later")["message"],
            "1/1 tasks in gang unschedulable: 1 node: insufficient cpu");
  // Its pod group says the same: Pending, Unschedulable, in its queue; hog's runs.
  auto pg = nlohmann::json::parse(node.cli({"get", "podgroup", "later", "-o", "json"}).out);
  EXPECT_EQ(pg["kind"], "PodGroup");
  EXPECT_EQ(pg["spec"]["minMember"], 1);
  EXPECT_EQ(pg["spec"]["queue"], "default");
  EXPECT_EQ(pg["status"]["phase"], "Pending");
  EXPECT_EQ(pg["status"]["conditions"][0]["type"], "Unschedulable");
  EXPECT_EQ(pg["status"]["conditions"][0]["message"],
            "1/1 tasks in gang unschedulable: 1 node: insufficient cpu");
  auto table = node.cli({"get", "pg", "-o", "wide"}).out;
  EXPECT_NE(table.find("NAME    STATUS    MINMEMBER   RUNNINGS"), std::string::npos) << table;
  EXPECT_NE(table.find("1 node: insufficient cpu"), std::string::npos) << table;
  auto describe = node.cli({"describe", "job", "later"}).out;
  EXPECT_NE(describe.find("Pod Group:\n  Phase:"), std::string::npos) << describe;

  ASSERT_EQ(node.cli({"delete", "job", "hog"}).exit_code, 0);
  ASSERT_TRUE(reaches("later", "Running"));
  EXPECT_EQ(state_of("later")["reason"], "MinAvailableReached");
  pg = nlohmann::json::parse(node.cli({"get", "podgroup", "later", "-o", "json"}).out);
  EXPECT_EQ(pg["status"]["phase"], "Running");
  EXPECT_EQ(pg["status"]["conditions"][0]["type"], "Scheduled");
}

// The enqueue action (Volcano's overcommit, 1.2 times the cluster): a gang it admits is Inqueue
// while it does not fit, and what its minimum asks is kept from later gangs, which stay Pending
// until there is budget for them, though they would fit the node.
TEST_F(Unschedulable, APodGroupStaysPendingUntilTheEnqueueActionAdmitsItThenIsInqueue) {
  const int64_t milli = 1000 * cores();
  const auto part = [](int64_t m) { return std::to_string(m) + "m"; };
  // 0.6 of the node, on a node labelled as none is: admitted (the node could hold it), never
  // placed.
  auto picky = gang_yaml("picky", 1, part(milli * 6 / 10));
  ASSERT_NE(picky.find("          containers:"), std::string::npos) << picky;
  picky.replace(picky.find("          containers:"), 0, "          nodeSelector: {zone: mars}\n");
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, picky).exit_code, 0) << picky;
  auto phase_of = [&](const std::string& name) {
    auto r = node.cli({"get", "podgroup", name, "-o", "json"});
    return r.exit_code == 0 ? nlohmann::json::parse(r.out)["status"].value("phase", "") : "";
  };
  ASSERT_TRUE(eventually([&] { return state_of("picky")["reason"] == "Unschedulable"; }, 10s))
      << state_of("picky").dump();
  EXPECT_EQ(phase_of("picky"), "Inqueue");
  EXPECT_EQ(state_of("picky")["message"],
            "1/1 tasks in gang unschedulable: 1 node: node selector does not match");

  // 0.7 of the node fits it, but not the budget left (1.2 less picky's 0.6).
  ASSERT_EQ(
      node.cli({"submit", "-f", "-"}, gang_yaml("next", 1, part(milli * 7 / 10), "true")).exit_code,
      0);
  ASSERT_TRUE(eventually([&] { return state_of("next")["reason"] == "Unschedulable"; }, 10s))
      << state_of("next").dump();
  EXPECT_EQ(phase_of("next"), "Pending");
  EXPECT_EQ(state_of("next")["message"],
            "1/1 tasks in gang unschedulable: not enqueued: its minimum (cpu " +
                format_quantity(milli * 7 / 10) + ") is more than the cluster has left to admit")
      << state_of("next").dump();
  auto queues = get_json({"get", "queues", "default", "-o", "json"});
  EXPECT_EQ(queues["status"]["pending"], 1) << queues.dump();
  EXPECT_EQ(queues["status"]["inqueue"], 1) << queues.dump();

  ASSERT_EQ(node.cli({"delete", "job", "picky"}).exit_code, 0);
  ASSERT_TRUE(reaches("next", "Completed"));
}

TEST_F(Unschedulable, ACommandOnAFinishedJobIsAnErrorButARetryOfOneThatActedIsNot) {
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, gang_yaml("done", 1, "", "true")).exit_code, 0);
  ASSERT_TRUE(reaches("done", "Completed"));
  auto abort = node.cli({"abort", "job", "done"});
  EXPECT_NE(abort.exit_code, 0);
  EXPECT_EQ(abort.out.find("issued"), std::string::npos) << abort.out;
  EXPECT_NE(abort.err.find("error (failed precondition): job done is Completed: AbortJob does "
                           "nothing in this phase"),
            std::string::npos)
      << abort.err;
  auto resume = node.cli({"resume", "job", "done"});
  EXPECT_NE(resume.exit_code, 0);
  EXPECT_NE(resume.err.find("ResumeJob does nothing in this phase"), std::string::npos)
      << resume.err;
  EXPECT_EQ(state_of("done")["phase"], "Completed");

  // A command that acted, retried with its id once the phase no longer takes it: still "done".
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, gang_yaml("run", 1, "", "sleep 60")).exit_code, 0);
  ASSERT_TRUE(reaches("run", "Running"));
  auto command = [&](const std::string& id) -> api::Response::Which {
    auto c = Client::connect(node.server(), 5s);
    EXPECT_TRUE(c) << c.error();
    if (!c) return api::Response::ERRORS;
    auto r = (*c)->call([&](api::Request::Builder b) {
      auto cmd = b.initCommand();
      cmd.getJob().setName("run");
      cmd.setAction("AbortJob");
      cmd.setCommandId(id);
    });
    EXPECT_TRUE(r) << r.error();
    return r ? (*r)->root<api::Response>().which() : api::Response::ERRORS;
  };
  EXPECT_EQ(command("abort-1"), api::Response::OK);
  ASSERT_TRUE(reaches("run", "Aborted"));
  EXPECT_EQ(command("abort-1"), api::Response::OK);
  EXPECT_EQ(command("abort-2"), api::Response::ERRORS);
}

}  // namespace
}  // namespace caldera::testing
