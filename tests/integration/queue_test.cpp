// Queues and PriorityClasses as a user meets them on one real node: submitted with jobs, shown by
// `get queues` and `get priorityclasses`, kept across a restart, and refused with a clear error
// where a job names one that does not exist or a delete would take one a job uses.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "node_test.hpp"

namespace caldera::testing {
namespace {

using namespace std::chrono_literals;

const char* kQueues = R"(apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: research}
spec:
  weight: 3
  capability: {cpu: "1"}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: urgent}
value: 1000
preemptionPolicy: Never
description: deadlines
)";

std::string job_in(const std::string& name, const std::string& queue, const std::string& klass) {
  return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: " + name +
         "}\nspec:\n  queue: " + queue + "\n" +
         (klass.empty() ? "" : "  priorityClassName: " + klass + "\n") +
         R"(  minAvailable: 1
  tasks:
    - name: w
      replicas: 2
      template:
        spec:
          containers:
            - name: main
              command: [sh, -c, "exec sleep 60"]
              resources: {requests: {cpu: 500m}}
)";
}

class Queues : public NodeTest {};

TEST_F(Queues, AreSubmittedShownKeptAcrossARestartAndRefusedWhereTheyWouldBreakAJob) {
  auto created = node.cli({"submit", "-f", "-"}, kQueues);
  ASSERT_EQ(created.exit_code, 0) << created.err;
  EXPECT_EQ(created.out,
            "queue.scheduling.volcano.sh/research created\n"
            "priorityclass.scheduling.k8s.io/urgent created\n");

  // A job may name them; one naming a queue or class that does not exist is refused, with
  // where and why.
  auto missing = node.cli({"submit", "-f", "-"}, job_in("lost", "nowhere", "nothing"));
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("spec.queue: queue \"nowhere\" does not exist"), std::string::npos)
      << missing.err;
  EXPECT_NE(missing.err.find("spec.priorityClassName: no PriorityClass named \"nothing\""),
            std::string::npos)
      << missing.err;
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, job_in("r", "research", "urgent")).exit_code, 0);
  ASSERT_TRUE(eventually([&] {
    return get_json({"get", "job", "r"})["status"]["state"]["phase"] == "Running";
  }));

  // The queue's capability of one cpu holds both 500m pods; its status counts the pod group.
  nlohmann::json research;
  ASSERT_TRUE(eventually([&] {
    research = get_json({"get", "queue", "research"});
    return research["status"]["allocated"].value("cpu", "") == "1";
  })) << research.dump();
  EXPECT_EQ(research["spec"]["weight"], 3);
  EXPECT_EQ(research["spec"]["capability"]["cpu"], "1");
  EXPECT_EQ(research["status"]["running"], 1);
  EXPECT_EQ(research["status"]["pending"], 0);
  auto table = node.cli({"get", "queues"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("NAME       WEIGHT   STATE   CAPABILITY   ALLOCATED   DESERVED"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("research   3        Open    cpu=1        cpu=1"), std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("default    1"), std::string::npos) << table.out;
  auto classes = node.cli({"get", "priorityclasses"});
  EXPECT_NE(classes.out.find("urgent   1000    false"), std::string::npos) << classes.out;
  EXPECT_NE(classes.out.find("Never"), std::string::npos) << classes.out;

  // What a job uses stays; `default` always does.
  auto in_use = node.cli({"delete", "queue", "research"});
  EXPECT_NE(in_use.exit_code, 0);
  EXPECT_NE(in_use.err.find("queues.scheduling.volcano.sh \"research\" is in use: 1 object uses "
                            "it (job default/r); delete them first"),
            std::string::npos)
      << in_use.err;
  auto class_in_use = node.cli({"delete", "priorityclass", "urgent"});
  EXPECT_NE(class_in_use.exit_code, 0);
  EXPECT_NE(class_in_use.err.find("is in use"), std::string::npos) << class_in_use.err;
  EXPECT_NE(
      node.cli({"delete", "queue", "default"}).err.find("the default queue cannot be deleted"),
      std::string::npos);
  auto again = node.cli({"submit", "-f", "-"}, kQueues);
  EXPECT_NE(again.err.find("queues.scheduling.volcano.sh \"research\" already exists"),
            std::string::npos)
      << again.err;

  node.stop();
  node.start();
  EXPECT_EQ(get_json({"get", "queue", "research"})["spec"]["weight"], 3);
  EXPECT_EQ(get_json({"get", "priorityclass", "urgent"})["value"], 1000);
  // The adopted pods count in their queue again.
  EXPECT_TRUE(eventually([&] {
    research = get_json({"get", "queue", "research"});
    return research["status"]["allocated"].value("cpu", "") == "1";
  })) << research.dump()
      << node.cli({"get", "pods", "-o", "wide"}).out << node.cli({"describe", "job", "r"}).out;

  ASSERT_EQ(node.cli({"delete", "job", "r"}).exit_code, 0);
  ASSERT_TRUE(eventually([&] { return node.cli({"get", "job", "r"}).exit_code != 0; }));
  // A JobTemplate naming it keeps it too: the JobFlow's jobs would name it later.
  auto tmpl = job_in("t", "research", "");
  tmpl.replace(tmpl.find("batch.volcano.sh/v1alpha1\nkind: Job"), 35,
               "flow.volcano.sh/v1alpha1\nkind: JobTemplate");
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, tmpl).exit_code, 0) << tmpl;
  EXPECT_NE(node.cli({"delete", "queue", "research"}).err.find("(jobtemplate default/t)"),
            std::string::npos);
  ASSERT_EQ(node.cli({"delete", "jobtemplate", "t"}).exit_code, 0);
  EXPECT_EQ(node.cli({"delete", "queue", "research"}).exit_code, 0);
  EXPECT_EQ(node.cli({"delete", "priorityclass", "urgent"}).exit_code, 0);
  EXPECT_EQ(get_json({"get", "queues"})["items"].size(), 1u);
  auto none = node.cli({"get", "pc"});
  EXPECT_EQ(none.out + none.err, "No resources found.\n");
}

// A JobTemplate (the flow directory's) naming a queue or class keeps it too, until it goes.
TEST_F(Queues, AJobTemplateThatNamesThemKeepsThem) {
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, kQueues).exit_code, 0);
  const std::string tmpl = job_in("t", "research", "urgent");
  auto created =
      node.cli({"submit", "-f", "-"}, "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate" +
                                          tmpl.substr(tmpl.find("\nmetadata")));
  ASSERT_EQ(created.exit_code, 0) << created.err;
  auto in_use = node.cli({"delete", "queue", "research"});
  EXPECT_NE(in_use.err.find("queues.scheduling.volcano.sh \"research\" is in use: 1 object uses "
                            "it (jobtemplate default/t); delete them first"),
            std::string::npos)
      << in_use.err;
  EXPECT_NE(node.cli({"delete", "priorityclass", "urgent"}).err.find("(jobtemplate default/t)"),
            std::string::npos);
  ASSERT_EQ(node.cli({"delete", "jobtemplate", "t"}).exit_code, 0);
  EXPECT_EQ(node.cli({"delete", "queue", "research"}).exit_code, 0);
  EXPECT_EQ(node.cli({"delete", "priorityclass", "urgent"}).exit_code, 0);
}

// The README's example runs as it says.
TEST_F(Queues, TheExampleRunsBothJobs) {
  auto r = node.cli({"submit", "-f", source_path("examples/queues.yaml")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* job : {"train", "hotfix"})
    EXPECT_EQ(node.cli({"wait", "job", job, "--for=phase=Completed", "--timeout=60s"}).exit_code, 0)
        << job;
  EXPECT_EQ(get_json({"get", "queue", "research"})["spec"]["capability"]["cpu"], "2");
  EXPECT_EQ(get_json({"get", "pc", "urgent"})["value"], 1000);
}

}  // namespace
}  // namespace caldera::testing
