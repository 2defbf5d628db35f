// Kubernetes' own table tests of its Job controller (pkg/controller/job/job_controller_test.go),
// ported as data (tests/unit/data/k8s_job_controller_cases.yaml) and run against our pure core:
// each case is a Job and its pods before one sync, and what that sync must do.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "actors/job/core/batch_job_controller.hpp"
#include "actors/job/core/pod_failure_policy.hpp"
#include "messages/model/batch_job.hpp"
#include "messages/model/completion_indexes.hpp"
#include "messages/yaml/yaml_batch_job.hpp"
#include "messages/yaml/yaml_tree.hpp"
#include "tests/unit/job_test_support.hpp"

namespace caldera {
namespace {

using testing::test_clock;

// Cases whose facts we do not follow, and why (the README lists them). A case listed here that
// passes fails the test: the list stays true.
const std::map<std::string, std::string>& differences() {
  static const std::map<std::string, std::string> kDifferences = {
      {"fail job based on OnExitCodes for InitContainer", "caldera's pods have no init containers"},
      {"count pod failure based on OnPodConditions; both rules are matching, the first is "
       "executed only",
       "caldera's pods have one condition, DisruptionTarget; no ResourceLimitExceeded"},
      {"single failed pod, not counted as the replacement pod creation is delayed",
       "a failed pod is counted in the write that records its end; with backoffLimitPerIndex "
       "Kubernetes counts it a sync later, once its replacement exists"},
  };
  return kDifferences;
}

std::optional<YamlNode> field(const YamlNode& map, std::string_view key) {
  if (!map.defined() || !map.is_map()) return std::nullopt;
  for (const auto& [k, v] : map.entries())
    if (k.is_scalar() && k.scalar() == key) return v;
  return std::nullopt;
}

std::string text(const YamlNode& map, std::string_view key, std::string fallback = {}) {
  auto v = field(map, key);
  return v && v->is_scalar() ? v->scalar() : fallback;
}

std::optional<int64_t> number(const YamlNode& map, std::string_view key) {
  auto v = field(map, key);
  if (!v || !v->is_scalar()) return std::nullopt;
  return std::stoll(v->scalar());
}

bool flag(const YamlNode& map, std::string_view key) {
  return text(map, key) == "true";
}

// Pods whose restartPolicy is OnFailure restart their containers in place and count restarts
// against backoffLimit: caldera runs pods as restartPolicy Never does (not ported).
bool on_failure(const YamlNode& job) {
  return text(job, "restartPolicy") == "OnFailure";
}

std::set<int32_t> index_set(const std::string& intervals, int32_t completions) {
  std::set<int32_t> out;
  if (intervals.empty()) return out;
  auto parsed = parse_index_intervals(intervals, completions);
  if (!parsed) return out;
  for (const auto& [lo, hi] : *parsed)
    for (int32_t i = lo; i <= hi; ++i) out.insert(i);
  return out;
}

// The index a pod's completion-index annotation gives: -1 when absent or not a number >= 0.
int32_t index_of(const std::string& annotation) {
  if (annotation.empty()) return -1;
  for (char c : annotation)
    if (c < '0' || c > '9') return -1;
  return static_cast<int32_t>(std::stol(annotation));
}

struct Outcome {
  std::string name;
  std::vector<std::string> mismatches;
  bool ran = false;
};

struct Case {
  std::string name, from;
  YamlNode node;
};

std::vector<Case> load_cases() {
  std::ifstream in(std::string(CALDERA_SOURCE_DIR) +
                   "/tests/unit/data/k8s_job_controller_cases.yaml");
  std::stringstream buf;
  buf << in.rdbuf();
  auto docs = load_yaml(buf.str(), 100);
  std::vector<Case> out;
  if (!std::holds_alternative<std::vector<YamlNode>>(docs)) {
    ADD_FAILURE() << "the cases do not load: " << std::get<YamlLoadError>(docs).message;
    return out;
  }
  const auto& root = std::get<std::vector<YamlNode>>(docs).at(0);
  for (const auto& c : field(root, "cases")->items())
    out.push_back({text(c, "name"), text(c, "from"), c});
  return out;
}

// One case: the Job and its pods as Kubernetes' test builds them, one sync, then its checks.
Outcome run_case(const Case& c) {
  Outcome out{c.name, {}, true};
  auto miss = [&](std::string what) { out.mismatches.push_back(std::move(what)); };
  const YamlNode job_node = *field(c.node, "job");
  const int64_t now = 1'000'000'000;
  auto clock = test_clock(now);

  Diagnostics diags;
  YamlContext ctx(diags);
  BatchJobSpec spec;
  read_batch_job_spec(ctx, job_node, spec);
  spec.name = "foobar";
  spec.namespace_ = "default";
  spec.template_.restart_policy = "Never";
  spec.template_.containers.push_back(Container{"main", "", {"true"}, {}, {}, {}, {}, {}});
  auto m = new_batch_job(to_job_spec(spec), "job-uid", clock);
  const int32_t completions = spec.completions.value_or(0);

  auto& status = *m.job.status.batch;
  YamlNode st = field(c.node, "status").value_or(YamlNode());
  status.succeeded = static_cast<int32_t>(number(st, "succeeded").value_or(0));
  status.failed = static_cast<int32_t>(number(st, "failed").value_or(0));
  status.completed_indexes = text(st, "completedIndexes");
  status.failed_indexes = text(st, "failedIndexes");
  m.batch.succeeded_indexes = index_set(status.completed_indexes, completions);
  m.batch.failed_indexes = index_set(status.failed_indexes, completions);
  if (auto conditions = field(st, "conditions"))
    for (const auto& k : conditions->items())
      status.conditions.push_back({text(k, "type"), text(k, "status", "True"), text(k, "reason"),
                                   text(k, "message"), now - 1000, now - 1000});
  if (auto ago = number(c.node, "startedSecondsAgo")) status.start_ms = now - *ago * 1000;
  if (auto record = field(c.node, "backoffRecord")) {
    auto& b = m.batch.backoff[kJobWideBackoff];
    b.failures_since_success =
        static_cast<int32_t>(number(*record, "failuresAfterLastSuccess").value_or(0));
    b.last_failure_ms = now - number(*record, "lastFailureSecondsAgo").value_or(0) * 1000;
  }

  // The pods. Ended ones ended long ago; those that keep their tracking finalizer end now.
  std::vector<std::string> ended;
  std::set<std::string> before;
  std::map<int32_t, int32_t> max_failure_count;  // by index: the highest the pods carry
  std::map<int32_t, int32_t> reflected;          // failed pods a later pod's count includes
  std::vector<std::pair<int32_t, int32_t>> uncounted_failures;  // (index, its pod's count)
  int n = 0;
  bool not_ready_running = false;
  for (const auto& p : field(c.node, "pods")->items()) {
    const int64_t count = number(p, "count").value_or(1);
    for (int64_t i = 0; i < count; ++i) {
      Pod pod;
      pod.name = text(p, "name", fmt::format("pod-{}", n));
      pod.uid = fmt::format("pod-uid-{}", n++);
      pod.namespace_ = "default";
      pod.job_name = "foobar";
      pod.task_name = kBatchJobTask;
      pod.index = spec.indexed() ? index_of(text(p, "index")) : -1;
      pod.phase = *parse_pod_phase(text(p, "phase"));
      pod.node = "n1";
      pod.created_ms = 1;
      pod.status_seq = 1;
      if (pod.phase == PodPhase::Running && !flag(p, "ready")) not_ready_running = true;
      if (flag(p, "terminating")) pod.out_of_sync = true;
      if (auto codes = field(p, "exitCodes"))
        for (const auto& [k, v] : codes->entries())
          pod.containers.push_back({k.scalar(), ContainerState::Terminated,
                                    static_cast<int32_t>(std::stol(v.scalar())), 0, "", 1, 1});
      if (auto conditions = field(p, "conditions"))
        for (const auto& k : conditions->items())
          if (k.scalar() == kDisruptionTarget) pod.reason = std::string(kPreempted);
      // Kubernetes dates an ended pod's failure by its deletion when it has one (now).
      if (is_terminal(pod.phase)) pod.finished_ms = pod.out_of_sync ? now : 1;
      const bool counted = flag(p, "deletedFinalizer");
      if (is_terminal(pod.phase) && !counted) ended.push_back(pod.name);
      if (auto fc = number(p, "indexFailureCount")) {
        auto& most = max_failure_count[pod.index];
        const int32_t has =
            static_cast<int32_t>(*fc) + (pod.phase == PodPhase::Failed && counted ? 1 : 0);
        most = std::max(most, has);
        if (pod.phase == PodPhase::Failed && !counted)
          uncounted_failures.emplace_back(pod.index, static_cast<int32_t>(*fc));
      }
      before.insert(pod.name);
      std::string name = pod.name;
      m.pods.emplace(std::move(name), std::move(pod));
    }
  }
  // Kubernetes keeps an index's failures on its pods (each carries those before it, a failed
  // one not counted yet adds its own): here it is the index's count, less the failures still to
  // be counted that a later pod's count includes already.
  for (const auto& [index, fc] : uncounted_failures)
    if (fc < max_failure_count[index]) ++reflected[index];
  for (const auto& [index, most] : max_failure_count) {
    auto& b = m.batch.backoff[spec.backoff_limit_per_index ? index : kJobWideBackoff];
    b.failures_since_success = std::max(0, most - reflected[index]);
    b.last_failure_ms = 1;
  }
  m.pods.take_changes();

  sync_batch_job(m, ended, clock);

  const YamlNode expect = *field(c.node, "expect");
  auto check = [&](const char* key, int64_t actual) {
    if (auto want = number(expect, key); want && *want != actual)
      miss(fmt::format("{}: {} (Kubernetes {})", key, actual, *want));
  };
  int32_t created = 0, deleted = 0;
  std::vector<int32_t> created_indexes;
  for (const auto& [name, p] : m.pods.map()) {
    if (!before.count(name)) {
      ++created;
      created_indexes.push_back(p.index);
    }
  }
  // Deleted: pods this sync marked out of sync (live ones, and never-launched ones it ended).
  int32_t terminating_before = 0;
  for (const auto& p : field(c.node, "pods")->items())
    if (flag(p, "terminating"))
      terminating_before += static_cast<int32_t>(number(p, "count").value_or(1));
  int32_t out_of_sync = 0;
  for (const auto& name : before) out_of_sync += m.pods.at(name).out_of_sync;
  deleted = out_of_sync - terminating_before;
  check("creations", created);
  check("deletions", deleted);
  const auto& s = *m.job.status.batch;
  check("active", s.active);
  if (!not_ready_running) check("ready", s.ready);
  check("succeeded", s.succeeded);
  check("failed", s.failed);
  check("terminating", s.terminating);
  if (auto want = field(expect, "completedIndexes"); want && want->scalar() != s.completed_indexes)
    miss(fmt::format("completedIndexes: '{}' (Kubernetes '{}')", s.completed_indexes,
                     want->scalar()));
  if (auto want = field(expect, "failedIndexes"); want && want->scalar() != s.failed_indexes)
    miss(fmt::format("failedIndexes: '{}' (Kubernetes '{}')", s.failed_indexes, want->scalar()));
  if (auto want = field(expect, "createdIndexes")) {
    std::vector<int32_t> indexes;
    for (const auto& i : want->items())
      indexes.push_back(static_cast<int32_t>(std::stol(i.scalar())));
    std::sort(created_indexes.begin(), created_indexes.end());
    if (indexes != created_indexes)
      miss(fmt::format("createdIndexes: [{}] (Kubernetes [{}])", fmt::join(created_indexes, ","),
                       fmt::join(indexes, ",")));
  }
  // Conditions, in order, without times. At this commit Kubernetes left the reason of an end by
  // completions empty; it names it CompletionsReached since, as we do.
  std::vector<std::string> want_conditions, have_conditions;
  if (auto conditions = field(expect, "conditions"))
    for (const auto& k : conditions->items()) {
      std::string reason = text(k, "reason"), message = text(k, "message");
      if (reason.empty() && text(k, "status") == "True" &&
          (text(k, "type") == kJobComplete || text(k, "type") == kJobSuccessCriteriaMet)) {
        reason = "CompletionsReached";
        message = "Reached expected number of succeeded pods";
      }
      want_conditions.push_back(
          fmt::format("{}={} {} '{}'", text(k, "type"), text(k, "status"), reason, message));
    }
  for (const auto& k : s.conditions)
    have_conditions.push_back(fmt::format("{}={} {} '{}'", k.type, k.status, k.reason, k.message));
  if (want_conditions != have_conditions)
    miss(fmt::format("conditions: [{}] (Kubernetes [{}])", fmt::join(have_conditions, "; "),
                     fmt::join(want_conditions, "; ")));
  return out;
}

void run_table(const std::string& table) {
  int ported = 0, passed = 0, skipped = 0, different = 0;
  for (const auto& c : load_cases()) {
    if (c.from != table) continue;
    if (field(c.node, "skip") || on_failure(*field(c.node, "job"))) {
      ++skipped;
      continue;
    }
    ++ported;
    auto outcome = run_case(c);
    auto known = differences().find(c.name);
    if (known != differences().end()) {
      ++different;
      EXPECT_FALSE(outcome.mismatches.empty())
          << "'" << c.name << "' is listed as a difference (" << known->second
          << ") but passes: take it off the list";
      continue;
    }
    if (outcome.mismatches.empty()) ++passed;
    for (const auto& m : outcome.mismatches) ADD_FAILURE() << table << " '" << c.name << "': " << m;
  }
  std::cout << table << ": " << passed << " of " << ported << " ported cases pass, " << different
            << " differ as listed, " << skipped << " not ported\n";
  EXPECT_GT(ported, 0);
}

TEST(KubernetesJobConformance, TestControllerSyncJob) {
  run_table("TestControllerSyncJob");
}
TEST(KubernetesJobConformance, TestSyncJobPastDeadline) {
  run_table("TestSyncJobPastDeadline");
}
TEST(KubernetesJobConformance, TestSyncJobWithJobPodFailurePolicy) {
  run_table("TestSyncJobWithJobPodFailurePolicy");
}
TEST(KubernetesJobConformance, TestSyncJobWithJobSuccessPolicy) {
  run_table("TestSyncJobWithJobSuccessPolicy");
}
TEST(KubernetesJobConformance, TestSyncJobWithJobBackoffLimitPerIndex) {
  run_table("TestSyncJobWithJobBackoffLimitPerIndex");
}
TEST(KubernetesJobConformance, TestJobBackoffOnRestartPolicyNever) {
  run_table("TestJobBackoffOnRestartPolicyNever");
}

}  // namespace
}  // namespace caldera
