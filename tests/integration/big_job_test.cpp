// A job at the replica limit on a real node: accepted at once, kept across kill -9 and a clean
// restart, deletable, and never in the way of other clients. Lists come in pages.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <thread>

#include "client/client.hpp"
#include "messages/admission/admission.hpp"
#include "node_test.hpp"

namespace caldera::testing {
namespace {

using json = nlohmann::json;
using namespace std::chrono;
using namespace std::chrono_literals;

std::string sim_job(const std::string& name, int64_t replicas, int sim_ms) {
  return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: " + name +
         "}\nspec:\n  minAvailable: 1\n  tasks:\n    - name: w\n      replicas: " +
         std::to_string(replicas) +
         "\n      template:\n        metadata: {annotations: {caldera.io/sim-duration-ms: '" +
         std::to_string(sim_ms) + "'}}\n        spec: {containers: [{name: c, command: [true]}]}\n";
}

// Another client, asking the node all along; `worst` is its slowest answer.
class Prober {
 public:
  explicit Prober(std::string server) : server_(std::move(server)) {
    thread_ = std::thread([this] { run(); });
  }
  ~Prober() { stop(); }
  void stop() {
    done_ = true;
    if (thread_.joinable()) thread_.join();
  }
  milliseconds worst() const { return milliseconds(worst_ms_.load()); }
  int answered() const { return answered_.load(); }
  // The slowest answer since the last reset; probing goes on across node restarts, which are
  // not counted (reset after each).
  void reset() { worst_ms_ = 0; }

 private:
  void run() {
    while (!done_) {
      auto c = Client::connect(server_, 1s);
      if (!c) {
        std::this_thread::sleep_for(20ms);
        continue;
      }
      while (!done_) {
        auto start = steady_clock::now();
        bool nodes = (answered_ % 2) == 0;  // listNodes passes the scheduler actor too
        auto r = (*c)->call(
            [&](api::Request::Builder req) {
              if (nodes)
                req.setListNodes();
              else
                req.setPing();
            },
            5s);
        if (!r) break;  // the node went away: reconnect
        auto took = duration_cast<milliseconds>(steady_clock::now() - start).count();
        worst_ms_ = std::max<int64_t>(worst_ms_.load(), took);
        ++answered_;
        std::this_thread::sleep_for(10ms);
      }
    }
  }
  std::string server_;
  std::atomic<bool> done_{false};
  std::atomic<int64_t> worst_ms_{0};
  std::atomic<int> answered_{0};
  std::thread thread_;
};

class BigJob : public NodeTest {
 protected:
  int64_t pods_of(const std::string& job) {
    auto j = get_json({"get", "job", job});
    if (!j.contains("status")) return -1;
    const auto& s = j["status"];
    int64_t n = 0;
    for (auto f : {"pending", "running", "succeeded", "failed", "terminating", "unknown"})
      n += s.value(f, 0);
    return n;
  }
};

TEST_F(BigJob, AJobAtTheReplicaLimitIsAcceptedSurvivesRestartsAndIsDeleted) {
  Prober probe(node.server());
  auto start = steady_clock::now();
  auto submit = node.cli({"submit", "-f", "-"}, sim_job("big", kMaxJobReplicas, 300));
  auto took = steady_clock::now() - start;
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  EXPECT_LT(took, 1s) << "submit took " << duration_cast<milliseconds>(took).count() << " ms";

  // It runs: pods come and go while the others wait for room.
  ASSERT_TRUE(eventually(
      [&] {
        return get_json({"get", "job", "big"})["status"].value("succeeded", 0) >= 50;
      },
      60s))
      << node.log();
  EXPECT_EQ(pods_of("big"), kMaxJobReplicas);
  std::printf("[ BigJob ] slowest answer while submitted and running: %lld ms\n",
              static_cast<long long>(probe.worst().count()));
  EXPECT_LT(probe.worst(), 100ms) << "while submitted and running";

  node.kill9();
  node.start();
  EXPECT_EQ(pods_of("big"), kMaxJobReplicas) << node.log();
  node.stop();
  node.start();
  EXPECT_EQ(pods_of("big"), kMaxJobReplicas) << node.log();
  probe.reset();
  ASSERT_TRUE(eventually([&] { return probe.answered() > 10; }, 10s));

  start = steady_clock::now();
  auto del = node.cli({"delete", "job", "big"});
  EXPECT_EQ(del.exit_code, 0) << del.err;
  EXPECT_LT(steady_clock::now() - start, 5s);
  auto get = node.cli({"get", "job", "big"});
  EXPECT_NE(get.exit_code, 0);
  EXPECT_NE(get.err.find("not found"), std::string::npos) << get.err;
  EXPECT_TRUE(get_json({"get", "pods"})["items"].empty());
  std::this_thread::sleep_for(300ms);  // a few more probes after the delete
  std::printf("[ BigJob ] slowest answer while restarted and deleted: %lld ms\n",
              static_cast<long long>(probe.worst().count()));
  EXPECT_LT(probe.worst(), 100ms) << "while restarted and deleted";
  probe.stop();
  EXPECT_GT(probe.answered(), 20);

  // The node still works.
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, sim_job("after", 2, 10)).exit_code, 0);
  EXPECT_EQ(node.cli({"wait", "job", "after", "--for=phase=Completed", "--timeout=30s"}).exit_code,
            0)
      << node.cli({"describe", "job", "after"}).out << node.cli({"get", "nodes", "-o", "json"}).out
      << node.log().substr(node.log().size() > 4000 ? node.log().size() - 4000 : 0);
}

TEST_F(BigJob, ListsComeInPagesWithAContinueToken) {
  for (auto name : {"a", "b", "c"})
    ASSERT_EQ(node.cli({"submit", "-f", "-"}, sim_job(name, 3, 60000)).exit_code, 0);
  auto client = Client::connect(node.server(), 2s);
  ASSERT_TRUE(client) << client.error();
  auto page = [&](bool pods, const std::string& token, uint32_t limit) {
    std::vector<std::string> names;
    std::string next;
    auto r = (*client)->call([&](api::Request::Builder req) {
      auto f = pods ? req.initListPods() : req.initListJobs();
      f.setLimit(limit);
      f.setContinue(token);
    });
    EXPECT_TRUE(r) << r.error();
    if (!r) return std::pair{names, next};
    auto resp = (*r)->root<api::Response>();
    if (pods)
      for (auto p : resp.getPods()) names.emplace_back(p.getName().cStr());
    else
      for (auto j : resp.getJobs()) names.emplace_back(j.getSpec().getName().cStr());
    next = resp.getContinue();
    return std::pair{names, next};
  };
  auto [jobs1, t1] = page(false, "", 2);
  EXPECT_EQ(jobs1, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(t1, "default/b");
  auto [jobs2, t2] = page(false, t1, 2);
  EXPECT_EQ(jobs2, std::vector<std::string>{"c"});
  EXPECT_EQ(t2, "");

  // Pods: 9 over three jobs, in pages of 4 that cross from one job to the next.
  std::vector<std::string> all;
  std::string token;
  int pages = 0;
  do {
    auto [names, next] = page(true, token, 4);
    EXPECT_LE(names.size(), 4u);
    all.insert(all.end(), names.begin(), names.end());
    token = next;
    ASSERT_LT(++pages, 10);
  } while (!token.empty());
  EXPECT_EQ(all, (std::vector<std::string>{"a-w-0", "a-w-1", "a-w-2", "b-w-0", "b-w-1", "b-w-2",
                                           "c-w-0", "c-w-1", "c-w-2"}));
  EXPECT_EQ(pages, 3);

  // The CLI reads every page for the user.
  EXPECT_EQ(get_json({"get", "pods"})["items"].size(), 9u);
}

// A summary list (what `get jobs` asks for a table) has each job's identity and status, but not
// the spec's tasks nor the events, which a full list still has.
TEST_F(BigJob, ASummaryListCarriesWhatATableShowsAndNoSpecBody) {
  ASSERT_EQ(node.cli({"submit", "-f", "-"},
                     "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: "
                     "research}\n---\n"
                     "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: s, "
                     "labels: {team: ml}}\nspec:\n  minAvailable: 2\n  queue: research\n  "
                     "tasks:\n    - name: w\n      replicas: 2\n      template:\n        "
                     "metadata: {annotations: {caldera.io/sim-duration-ms: '60000'}}\n        "
                     "spec: {containers: [{name: c, command: [true]}]}\n")
                .exit_code,
            0);
  ASSERT_TRUE(eventually([&] {
    return get_json({"get", "job", "s", "-o", "json"})["status"]["state"]["phase"] == "Running";
  }));
  auto client = Client::connect(node.server(), 2s);
  ASSERT_TRUE(client) << client.error();
  for (bool summary : {true, false}) {
    auto r = (*client)->call([&](api::Request::Builder req) {
      auto f = req.initListJobs();
      f.setSummary(summary);
    });
    ASSERT_TRUE(r) << r.error();
    auto jobs = (*r)->root<api::Response>().getJobs();
    ASSERT_EQ(jobs.size(), 1u);
    auto job = jobs[0];
    auto spec = job.getSpec();
    EXPECT_STREQ(spec.getName().cStr(), "s");
    EXPECT_STREQ(spec.getNamespace().cStr(), "default");
    EXPECT_STREQ(spec.getQueue().cStr(), "research");
    EXPECT_EQ(spec.getMinAvailable(), 2);
    ASSERT_EQ(spec.getLabels().size(), 1u);
    EXPECT_STREQ(spec.getLabels()[0].getKey().cStr(), "team");
    EXPECT_STREQ(job.getStatus().getState().getPhase().cStr(), "Running");
    EXPECT_EQ(job.getStatus().getRunning(), 2);
    EXPECT_FALSE(std::string(job.getUid().cStr()).empty());
    EXPECT_GT(job.getCreatedMs(), 0);
    EXPECT_EQ(spec.getTasks().size(), summary ? 0u : 1u) << summary;
    EXPECT_EQ(job.getEvents().size() == 0, summary) << summary;
  }
  // The table still shows everything it did.
  auto table = node.cli({"get", "jobs"}).out;
  EXPECT_NE(table.find("Running"), std::string::npos) << table;
  EXPECT_NE(table.find(" 2 "), std::string::npos) << table;
}

TEST_F(BigJob, LogsFindThePodWhenOneJobsNameStartsAnothers) {
  // "x-a-main-0" could be job x's pod (task "a-main") or job x-a's: only x-a has it.
  auto echo_job = [](const std::string& name, const std::string& word) {
    return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: " + name +
           "}\nspec:\n  tasks:\n    - name: main\n      replicas: 1\n      template:\n"
           "        spec: {containers: [{name: c, command: [echo, " +
           word + "]}]}\n";
  };
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, echo_job("x", "from-x")).exit_code, 0);
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, echo_job("x-a", "from-x-a")).exit_code, 0);
  for (auto job : {"x", "x-a"})
    ASSERT_EQ(node.cli({"wait", "job", job, "--for=phase=Completed", "--timeout=30s"}).exit_code,
              0);
  EXPECT_EQ(node.cli({"logs", "x-a-main-0"}).out, "from-x-a\n");
  EXPECT_EQ(node.cli({"logs", "x-main-0"}).out, "from-x\n");
  auto missing = node.cli({"logs", "x-b-main-0"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("not found"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace caldera::testing
