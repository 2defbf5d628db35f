// `caldera apply` as a kubectl user meets it on one real node: what does not exist is created,
// what exists is updated where Volcano lets it change (and refused, naming the field, where it
// does not), a running gang job is scaled up and down, queues are closed and opened, and
// `delete -f` deletes what a file names. Updates are durable: a restart keeps them.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "node_test.hpp"

namespace caldera::testing {
namespace {

using json = nlohmann::json;

std::string queue(const std::string& name, int weight, const std::string& state = "") {
  return "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: " + name +
         "}\nspec: {weight: " + std::to_string(weight) + "}\n" +
         (state.empty() ? "" : "status: {state: " + state + "}\n");
}

// A gang of `replicas` pods that each print how many hosts the svc plugin lists for the task,
// then run until stopped.
std::string gang(const std::string& name, int replicas, const std::string& queue_name = "",
                 const std::string& extra = "") {
  return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: " + name +
         "}\nspec:\n  minAvailable: 2\n" +
         (queue_name.empty() ? "" : "  queue: " + queue_name + "\n") + extra +
         "  plugins: {svc: []}\n  tasks:\n    - name: w\n      replicas: " +
         std::to_string(replicas) +
         "\n      template:\n        spec:\n          containers:\n            - name: main\n"
         "              command: [sh, -c, 'echo hosts $(wc -l < volcano/w.host) $VC_W_HOSTS; "
         "exec sleep 60']\n";
}

class Apply : public NodeTest {
 protected:
  CommandResult apply(const std::string& yaml) { return node.cli({"apply", "-f", "-"}, yaml); }

  std::vector<std::string> running_pods(const std::string& job) {
    std::vector<std::string> out;
    auto pods = get_json({"get", "pods", "--job", job});
    for (const auto& p : pods["items"])
      if (p["status"]["phase"] == "Running") out.push_back(p["metadata"]["name"]);
    std::sort(out.begin(), out.end());
    return out;
  }
};

TEST_F(Apply, CreatesWhatIsMissingUpdatesWhatExistsAndSaysWhichForEachDocument) {
  // The default queue exists without a document: applying one changes its weight.
  auto first = apply(queue("research", 2) + "---\n" + queue("default", 3));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out,
            "queue.scheduling.volcano.sh/research created\n"
            "queue.scheduling.volcano.sh/default configured\n");
  auto again = apply(queue("research", 2) + "---\n" + queue("default", 3));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out,
            "queue.scheduling.volcano.sh/research unchanged\n"
            "queue.scheduling.volcano.sh/default unchanged\n");
  // kubectl's other verb for the same.
  auto replaced = node.cli({"replace", "-f", "-"}, queue("research", 5));
  ASSERT_EQ(replaced.exit_code, 0) << replaced.err;
  EXPECT_EQ(replaced.out, "queue.scheduling.volcano.sh/research configured\n");
  auto research = get_json({"get", "queue", "research"});
  EXPECT_EQ(research["spec"]["weight"], 5);
  EXPECT_EQ(research["metadata"]["generation"], 2);
  EXPECT_EQ(get_json({"get", "queue", "default"})["spec"]["weight"], 3);

  // Durable: a restart keeps both.
  node.stop();
  node.start();
  EXPECT_EQ(get_json({"get", "queue", "default"})["spec"]["weight"], 3);
  EXPECT_EQ(get_json({"get", "queue", "research"})["spec"]["weight"], 5);
}

TEST_F(Apply, AClosedQueueRefusesANewJobAndKeepsItsRunningOne) {
  ASSERT_EQ(apply(queue("research", 1)).exit_code, 0);
  ASSERT_EQ(apply(gang("keeps", 2, "research")).exit_code, 0);
  ASSERT_TRUE(eventually([&] { return running_pods("keeps").size() == 2; }));

  auto closed = node.cli({"queue", "close", "research"});
  ASSERT_EQ(closed.exit_code, 0) << closed.err;
  EXPECT_EQ(closed.out, "queue.scheduling.volcano.sh/research closed\n");
  // Closed, with a pod group still running in it: Closing, as Volcano reports it.
  EXPECT_EQ(get_json({"get", "queue", "research"})["status"]["state"], "Closing");
  auto table = node.cli({"get", "queues"});
  EXPECT_NE(table.out.find("STATE"), std::string::npos) << table.out;
  auto refused = node.cli({"submit", "-f", "-"}, gang("new", 2, "research"));
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("spec.queue: queue \"research\" is Closed: it takes no new jobs"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(apply(gang("new", 2, "research")).exit_code, 0) << "apply creates nothing there";
  EXPECT_EQ(get_json({"get", "job", "keeps"})["status"]["state"]["phase"], "Running");
  EXPECT_EQ(running_pods("keeps").size(), 2u);

  // Once its job is gone the queue is Closed; opened, it takes jobs again.
  ASSERT_EQ(node.cli({"delete", "job", "keeps"}).exit_code, 0);
  EXPECT_TRUE(eventually([&] {
    return get_json({"get", "queue", "research"})["status"]["state"] == "Closed";
  }));
  ASSERT_EQ(node.cli({"queue", "open", "research"}).exit_code, 0);
  EXPECT_EQ(get_json({"get", "queue", "research"})["status"]["state"], "Open");
  auto taken = node.cli({"submit", "-f", "-"}, gang("new", 2, "research"));
  EXPECT_EQ(taken.exit_code, 0) << taken.err;

  auto missing = node.cli({"queue", "close", "nowhere"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("\"nowhere\" not found"), std::string::npos) << missing.err;
}

TEST_F(Apply, ScalesARunningGangJobUpAndDownWithTheHostListsOfItsNewPods) {
  ASSERT_EQ(apply(gang("el", 2)).exit_code, 0);
  ASSERT_TRUE(eventually([&] { return running_pods("el").size() == 2; }));
  auto up = apply(gang("el", 4));
  ASSERT_EQ(up.exit_code, 0) << up.err;
  EXPECT_EQ(up.out, "job.batch.volcano.sh/el configured\n");
  ASSERT_TRUE(eventually([&] { return running_pods("el").size() == 4; }))
      << node.cli({"get", "pods"}).out;
  auto job = get_json({"get", "job", "el"});
  EXPECT_EQ(job["metadata"]["generation"], 2);
  EXPECT_EQ(job["status"]["observedGeneration"], 2);
  EXPECT_EQ(job["status"]["state"]["phase"], "Running") << "the gang of 2 ran all along";
  // A new pod is told of every pod of the scaled task.
  std::string log;
  ASSERT_TRUE(eventually([&] {
    log = node.cli({"logs", "el-w-3"}).out;
    return !log.empty();
  }));
  EXPECT_EQ(log.substr(0, 8), "hosts 4 ") << log;

  auto down = apply(gang("el", 2));
  ASSERT_EQ(down.exit_code, 0) << down.err;
  EXPECT_EQ(down.out, "job.batch.volcano.sh/el configured\n");
  // The highest indexes go; the job runs on with the pods it wants, and counts only them.
  ASSERT_TRUE(eventually([&] {
    return get_json({"get", "pods", "--job", "el"})["items"].size() == 2;
  })) << node.cli({"get", "pods"}).out;
  EXPECT_EQ(running_pods("el"), (std::vector<std::string>{"el-w-0", "el-w-1"}));
  job = get_json({"get", "job", "el"});
  EXPECT_EQ(job["status"]["state"]["phase"], "Running");
  EXPECT_EQ(job["status"]["running"], 2);
  EXPECT_EQ(job["metadata"]["generation"], 3);
  EXPECT_EQ(apply(gang("el", 2)).out, "job.batch.volcano.sh/el unchanged\n");
}

TEST_F(Apply, TheElasticExampleScalesAsTheReadmeSays) {
  std::ifstream in(source_path("examples/elastic.yaml"));
  std::stringstream text;
  text << in.rdbuf();
  const std::string two = text.str();
  ASSERT_NE(two.find("replicas: 2"), std::string::npos);
  std::string four = two;
  four.replace(four.find("replicas: 2"), 11, "replicas: 4");
  EXPECT_EQ(node.cli({"apply", "-f", source_path("examples/elastic.yaml")}).out,
            "job.batch.volcano.sh/elastic created\n");
  ASSERT_TRUE(eventually([&] { return running_pods("elastic").size() == 2; }));
  EXPECT_EQ(apply(four).out, "job.batch.volcano.sh/elastic configured\n");
  ASSERT_TRUE(eventually([&] { return running_pods("elastic").size() == 4; }));
  std::string log;
  ASSERT_TRUE(eventually([&] {
    log = node.cli({"logs", "elastic-worker-3"}).out;
    return !log.empty();
  }));
  EXPECT_EQ(log, "worker 3 of 4\n");
  auto deleted = node.cli({"delete", "-f", source_path("examples/elastic.yaml")});
  EXPECT_EQ(deleted.out, "job.batch.volcano.sh \"elastic\" deleted\n") << deleted.err;
}

TEST_F(Apply, AScaledJobSurvivesAKillNineAndNoPodStartsTwice) {
  // Each pod notes its start in a file of its own: a pod started twice would note it twice.
  const std::string marks = dir.path() + "/starts";
  std::filesystem::create_directories(marks);
  auto job = [&](int replicas) {
    return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: kept}\nspec:\n"
           "  minAvailable: 2\n  tasks:\n    - name: w\n      replicas: " +
           std::to_string(replicas) +
           "\n      template:\n        spec:\n          containers:\n            - name: main\n"
           "              command: [sh, -c, 'echo start >> " +
           marks + "/$VC_POD_NAME; exec sleep 60']\n";
  };
  ASSERT_EQ(apply(job(2)).exit_code, 0);
  ASSERT_TRUE(eventually([&] { return running_pods("kept").size() == 2; }));
  ASSERT_EQ(apply(job(3)).out, "job.batch.volcano.sh/kept configured\n");
  ASSERT_TRUE(eventually([&] { return running_pods("kept").size() == 3; }));
  node.kill9();
  node.start();
  // The update was durable: the job is still the scaled one, and its three pods were adopted,
  // not started again.
  auto kept = get_json({"get", "job", "kept"});
  EXPECT_EQ(kept["spec"]["tasks"][0]["replicas"], 3);
  EXPECT_EQ(kept["metadata"]["generation"], 2);
  ASSERT_TRUE(eventually([&] { return running_pods("kept").size() == 3; }))
      << node.cli({"get", "pods"}).out;
  EXPECT_EQ(apply(job(3)).out, "job.batch.volcano.sh/kept unchanged\n");
  for (const char* pod : {"kept-w-0", "kept-w-1", "kept-w-2"}) {
    std::ifstream in(marks + "/" + pod);
    std::string all((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(all, "start\n") << pod << " started " << all;
  }
}

TEST_F(Apply, ARefusedChangeNamesTheFieldAndTheOtherDocumentsAreStillApplied) {
  ASSERT_EQ(apply(queue("research", 1)).exit_code, 0);
  ASSERT_EQ(apply(gang("fixed", 2)).exit_code, 0);
  // Moving a job to another queue is not a change Volcano allows; the queue's weight is.
  auto r = apply(queue("research", 4) + "---\n" + gang("fixed", 2, "research"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.out, "queue.scheduling.volcano.sh/research configured\n");
  EXPECT_NE(r.err.find("documents[1].spec.queue: job updates may not change fields other than"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(get_json({"get", "queue", "research"})["spec"]["weight"], 4);
  EXPECT_EQ(get_json({"get", "job", "fixed"})["spec"]["queue"], "default");
  // maxRetry and ttlSecondsAfterFinished are caldera's to let change as well.
  auto ttl = apply(gang("fixed", 2, "", "  maxRetry: 7\n  ttlSecondsAfterFinished: 600\n"));
  ASSERT_EQ(ttl.exit_code, 0) << ttl.err;
  auto job = get_json({"get", "job", "fixed"});
  EXPECT_EQ(job["spec"]["maxRetry"], 7);
  EXPECT_EQ(job["spec"]["ttlSecondsAfterFinished"], 600);
  // A job that does not admit is refused whole: nothing changes.
  auto bad = apply(gang("fixed", 1));
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("minAvailable"), std::string::npos) << bad.err;
}

TEST_F(Apply, AFlowsLaterJobsRunTheTemplateAsChanged) {
  auto tmpl = [](const std::string& word) {
    return "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate\nmetadata: {name: step}\n"
           "spec:\n  tasks:\n    - name: t\n      replicas: 1\n      template: {spec: "
           "{containers: [{name: main, command: [echo, " +
           word + "]}]}}\n";
  };
  ASSERT_EQ(apply(tmpl("before")).exit_code, 0);
  auto changed = apply(tmpl("after"));
  ASSERT_EQ(changed.exit_code, 0) << changed.err;
  EXPECT_EQ(changed.out, "jobtemplate.flow.volcano.sh/step configured\n");
  const std::string flow =
      "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: f}\n"
      "spec:\n  jobRetainPolicy: retain\n  flows:\n    - name: step\n";
  ASSERT_EQ(apply(flow).exit_code, 0);
  auto wait = node.cli({"wait", "job", "f-step", "--for=phase=Completed", "--timeout=30s"});
  ASSERT_EQ(wait.exit_code, 0) << wait.err;
  EXPECT_EQ(node.cli({"logs", "f-step-t-0"}).out, "after\n");
  // A flow's DAG does not change once it runs.
  auto dag = apply(flow + "    - name: step2\n      dependsOn: {targets: [step]}\n");
  EXPECT_NE(dag.exit_code, 0);
  EXPECT_NE(dag.err.find("a JobFlow's spec cannot change once created"), std::string::npos)
      << dag.err;
  EXPECT_EQ(apply(flow).out, "jobflow.flow.volcano.sh/f unchanged\n");
}

TEST_F(Apply, KubernetesJobsAndPriorityClassesChangeAsKubernetesLetsThem) {
  auto job = [](int parallelism, int completions) {
    return "apiVersion: batch/v1\nkind: Job\nmetadata: {name: k}\nspec:\n  parallelism: " +
           std::to_string(parallelism) + "\n  completions: " + std::to_string(completions) +
           "\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: c, "
           "command: [sleep, '30']}]\n";
  };
  ASSERT_EQ(apply(job(1, 4)).exit_code, 0);
  auto wider = apply(job(2, 4));
  ASSERT_EQ(wider.exit_code, 0) << wider.err;
  EXPECT_EQ(wider.out, "job.batch/k configured\n");
  EXPECT_TRUE(eventually([&] {
    return get_json({"get", "pods", "--job", "k"})["items"].size() == 2;
  })) << "parallelism 2: a second pod";
  auto k = get_json({"get", "jobs.batch", "k"});
  EXPECT_EQ(k["spec"]["parallelism"], 2);
  EXPECT_EQ(k["metadata"]["generation"], 2);
  auto more = apply(job(2, 5));
  EXPECT_NE(more.exit_code, 0);
  EXPECT_NE(more.err.find("may change only spec.suspend"), std::string::npos) << more.err;

  auto klass = [](int value, const std::string& description) {
    return "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\n"
           "value: " +
           std::to_string(value) + "\ndescription: " + description + "\n";
  };
  ASSERT_EQ(apply(klass(100, "a")).exit_code, 0);
  EXPECT_EQ(apply(klass(100, "b")).out, "priorityclass.scheduling.k8s.io/high configured\n");
  EXPECT_EQ(get_json({"get", "priorityclass", "high"})["description"], "b");
  auto value = apply(klass(200, "b"));
  EXPECT_NE(value.exit_code, 0);
  EXPECT_NE(value.err.find("value: a PriorityClass's value cannot change (100 -> 200)"),
            std::string::npos)
      << value.err;
}

TEST_F(Apply, DeleteWithAFileDeletesEveryObjectItNames) {
  const std::string file_path = dir.path() + "/objects.yaml";
  const std::string objects = queue("research", 2) + "---\n" + gang("gone", 2, "research");
  {
    std::ofstream out(file_path);
    out << objects;
  }
  ASSERT_EQ(node.cli({"apply", "-f", file_path}).exit_code, 0);
  auto deleted = node.cli({"delete", "-f", file_path});
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  // Users before what they use: the job, then its queue.
  EXPECT_EQ(deleted.out,
            "job.batch.volcano.sh \"gone\" deleted\n"
            "queue.scheduling.volcano.sh \"research\" deleted\n");
  EXPECT_NE(node.cli({"get", "job", "gone"}).exit_code, 0);
  EXPECT_NE(node.cli({"get", "queue", "research"}).exit_code, 0);
  auto both = node.cli({"delete", "job", "x", "-f", file_path});
  EXPECT_NE(both.exit_code, 0);
  EXPECT_NE(both.err.find("not both"), std::string::npos) << both.err;
}

}  // namespace
}  // namespace caldera::testing
