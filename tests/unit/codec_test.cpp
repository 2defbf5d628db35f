#include <gtest/gtest.h>

#include <capnp/message.h>

#include "messages/codec/codec.hpp"
#include "messages/codec/flat.hpp"

namespace caldera {
namespace {

// Encodes `value` as root T, sends it through bytes and decodes it back.
template <class T, class V, class Decode>
V through_bytes(const V& value, Decode decode_fn) {
  capnp::MallocMessageBuilder message;
  encode(value, message.initRoot<T>());
  std::string bytes = to_bytes(message);
  FlatReader reader(bytes);
  return decode_fn(reader.template root<T>());
}

Container make_container(const std::string& name) {
  Container c;
  c.name = name;
  c.image = "busybox:1.36";
  c.command = {"/bin/sh", "-c"};
  c.args = {"echo hello; exit 3"};
  c.env = {{"MODE", "fast"}, {"EMPTY", ""}};
  c.working_dir = "/tmp";
  c.requests.values = {{"cpu", 500}, {"memory", 268435456000LL}};
  c.limits.values = {{"cpu", 2000}, {"nvidia.com/gpu", 1000}};
  return c;
}

JobSpec rich_spec() {
  JobSpec s;
  s.name = "train";
  s.namespace_ = "ml";
  s.labels = {{"team", "vision"}, {"tier", "batch"}};
  s.annotations = {{"note", "first run"}};
  s.min_available = 3;
  s.min_success = 2;
  s.max_retry = 5;
  s.queue = "gpu";
  s.priority_class_name = "high";
  s.scheduler_name = "volcano";
  s.policies = {
      {{Event::PodFailed, Event::PodEvicted}, std::nullopt, Action::RestartJob, std::nullopt},
      {{}, 137, Action::AbortJob, 300000},
      {{Event::Any}, std::nullopt, Action::TerminateJob, 5000},
  };
  s.plugins = {{"ssh", {}}, {"env", {"--foo", "bar"}}, {"svc", {"--publish-not-ready-addresses"}}};
  s.ttl_seconds_after_finished = 600;
  s.active_deadline_seconds = 3600;

  TaskSpec master;
  master.name = "master";
  master.replicas = 1;
  master.min_available = 1;
  master.max_retry = 2;
  master.policies = {{{Event::TaskCompleted}, std::nullopt, Action::CompleteJob, std::nullopt}};
  master.template_.labels = {{"role", "master"}};
  master.template_.annotations = {{kSimDurationAnnotation, "100"}};
  master.template_.containers = {make_container("main"), make_container("sidecar")};
  master.template_.restart_policy = "Never";

  TaskSpec worker;
  worker.name = "worker";
  worker.replicas = 4;
  worker.policies = {{{Event::PodFailed}, 1, Action::RestartTask, 1000},
                     {{Event::PodEvicted}, std::nullopt, Action::RestartPartition, std::nullopt}};
  worker.depends_on = DependsOn{{"master", "ps"}, "any"};
  worker.partition_policy = PartitionPolicy{2, 1};
  worker.template_.priority_class_name = "task-high";
  worker.template_.containers = {make_container("w")};
  worker.template_.restart_policy = "OnFailure";

  TaskSpec ps;
  ps.name = "ps";
  ps.replicas = 0;
  ps.depends_on = DependsOn{{}, "all"};

  s.tasks = {master, worker, ps};
  return s;
}

JobStatus rich_status() {
  JobStatus st;
  st.state = {JobPhase::Restarting, "PodFailed", "pod worker-1 failed", 1700000000123};
  st.min_available = 3;
  st.pending = 1;
  st.running = 2;
  st.succeeded = 3;
  st.failed = 4;
  st.terminating = 5;
  st.unknown = 6;
  st.version = 7;
  st.retry_count = 2;
  st.task_status_count = {{"master", {0, 1, 0, 0, 0}}, {"worker", {1, 1, 3, 4, 6}}};
  st.conditions = {{JobPhase::Pending, 1700000000000},
                   {JobPhase::Running, 1700000000050},
                   {JobPhase::Restarting, 1700000000123}};
  st.running_duration_ms = 12500;
  st.pod_group_phase = "Inqueue";
  return st;
}

TEST(Codec, JobSpecRoundTripsThroughBytes) {
  JobSpec spec = rich_spec();
  Diagnostics diags;
  JobSpec back =
      through_bytes<api::JobSpec>(spec, [&](api::JobSpec::Reader r) { return decode(r, diags); });
  EXPECT_TRUE(diags.ok());
  EXPECT_EQ(back, spec);
  EXPECT_TRUE(back.tasks[1].depends_on.has_value());
  EXPECT_FALSE(back.tasks[0].depends_on.has_value());
  EXPECT_FALSE(back.tasks[0].partition_policy.has_value());
  EXPECT_EQ(back.policies[1].timeout_ms, 300000);
}

// to_bytes writes Cap'n Proto's own stream framing, for messages of 3, 4, 5 and 42 segments (odd
// and even counts, whose segment tables differ by their padding).
TEST(FlatReader, ToBytesIsTheStandardFramingOfOneSegmentOrMany) {
  for (unsigned texts : {1u, 2u, 3u, 40u}) {
    capnp::MallocMessageBuilder b(8, capnp::AllocationStrategy::FIXED_SIZE);  // tiny segments
    auto list = b.initRoot<api::Response>().initPods(texts);
    for (unsigned i = 0; i < texts; ++i) list[i].setName(std::string(100 + i, 'a' + i % 26));
    auto flat = capnp::messageToFlatArray(b);
    auto expected = flat.asBytes();
    const std::string bytes = to_bytes(b);
    ASSERT_EQ(bytes, std::string(reinterpret_cast<const char*>(expected.begin()), expected.size()))
        << texts << " pods, " << b.getSegmentsForOutput().size() << " segments";
    FlatReader reader(bytes);
    EXPECT_EQ(reader.root<api::Response>().getPods().size(), texts);
  }
}

// A borrowing reader reads aligned whole words in place and copies anything else, with the same
// result either way.
TEST(FlatReader, BorrowReadsAlignedBytesInPlaceAndCopiesOthers) {
  capnp::MallocMessageBuilder b;
  b.initRoot<api::ObjectRef>().setName("a-name-longer-than-any-small-string-buffer");
  const std::string bytes = to_bytes(b);
  ASSERT_EQ(bytes.size() % sizeof(capnp::word), 0u);

  FlatReader borrowed(FlatReader::Borrow{}, bytes);
  auto name = borrowed.root<api::ObjectRef>().getName();
  EXPECT_STREQ(name.cStr(), "a-name-longer-than-any-small-string-buffer");
  EXPECT_GE(name.cStr(), bytes.data());
  EXPECT_LT(name.cStr(), bytes.data() + bytes.size());

  std::string shifted = " " + bytes;  // the message starts one byte off a word
  FlatReader copied(FlatReader::Borrow{}, std::string_view(shifted).substr(1));
  auto copy = copied.root<api::ObjectRef>().getName();
  EXPECT_STREQ(copy.cStr(), "a-name-longer-than-any-small-string-buffer");
  EXPECT_TRUE(copy.cStr() < shifted.data() || copy.cStr() >= shifted.data() + shifted.size());

  // A cut message is copied (it is not whole words) and still refused.
  EXPECT_THROW(
      {
        FlatReader cut(FlatReader::Borrow{}, std::string_view(bytes).substr(0, bytes.size() - 11));
        cut.root<api::ObjectRef>().getName();
      },
      kj::Exception);
}

TEST(Codec, UnsetOptionalsStayUnset) {
  JobSpec spec;
  spec.name = "bare";
  spec.tasks.push_back({});
  spec.policies.push_back({{Event::PodFailed}, 0, Action::RestartJob, std::nullopt});
  capnp::MallocMessageBuilder message;
  encode(spec, message.initRoot<api::JobSpec>());
  auto root = message.getRoot<api::JobSpec>().asReader();
  EXPECT_EQ(root.getMinAvailable(), -1);
  EXPECT_EQ(root.getMaxRetry(), -1);
  EXPECT_EQ(root.getTtlSecondsAfterFinished(), -1);
  EXPECT_FALSE(root.getTasks()[0].hasDependsOn());
  EXPECT_TRUE(root.getPolicies()[0].getHasExitCode());  // exit code 0 is a value, not "unset"
  EXPECT_EQ(root.getPolicies()[0].getTimeoutMs(), 0);
  Diagnostics diags;
  EXPECT_EQ(decode(root, diags), spec);
}

TEST(Codec, JobStatusRoundTripsThroughBytes) {
  JobStatus st = rich_status();
  EXPECT_EQ(through_bytes<api::JobStatus>(st, [](api::JobStatus::Reader r) { return decode(r); }),
            st);
}

TEST(Codec, JobRoundTripsThroughBytes) {
  Job job{"0f1e2d3c-uid",
          1700000000000,
          rich_spec(),
          rich_status(),
          {{1700000000500, "Warning", "PodFailed", "pod x failed with exit code 3"}}};
  EXPECT_EQ(through_bytes<api::Job>(job, [](api::Job::Reader r) { return decode(r); }), job);
}

TEST(Codec, PodRoundTripsThroughBytes) {
  Pod pod;
  pod.name = "train-worker-3";
  pod.uid = "pod-uid";
  pod.namespace_ = "ml";
  pod.job_name = "train";
  pod.task_name = "worker";
  pod.index = 3;
  pod.job_version = 2;
  pod.node = "node-b";
  pod.phase = PodPhase::Failed;
  pod.reason = "Error";
  pod.message = "container w exited 3";
  pod.containers = {{"w", ContainerState::Terminated, 3, 0, "Error", 1000, 2000},
                    {"side", ContainerState::Terminated, 0, 9, "Killed", 1000, 2500},
                    {"late", ContainerState::Running, 0, 0, "", 1500, 0},
                    {"init", ContainerState::Waiting, 0, 0, "spawn failed", 0, 0}};
  pod.created_ms = 900;
  pod.started_ms = 1000;
  pod.finished_ms = 2500;
  pod.out_of_sync = true;
  pod.partition = 1;
  EXPECT_EQ(through_bytes<api::Pod>(pod, [](api::Pod::Reader r) { return decode(r); }), pod);
  Pod plain;
  plain.name = "p";
  EXPECT_EQ(through_bytes<api::Pod>(plain, [](api::Pod::Reader r) { return decode(r); }), plain);
}

TEST(Codec, NodeInfoRoundTripsThroughBytes) {
  NodeInfo n;
  n.name = "node-a";
  n.address = "127.0.0.1:7071";
  n.ready = true;
  n.capacity.values = {{"cpu", 8000}, {"memory", 17179869184000LL}, {"pods", 110000}};
  // Negative when capacity shrank under placed pods: our own data must survive that too.
  n.allocatable.values = {{"cpu", -500}, {"memory", 1073741824000LL}, {"pods", 108000}};
  n.pods = 2;
  n.coordinator = true;
  EXPECT_EQ(through_bytes<api::NodeInfo>(n, [](api::NodeInfo::Reader r) { return decode(r); }), n);
}

TEST(Codec, QuantitiesTravelAsKubernetesText) {
  capnp::MallocMessageBuilder message;
  encode(rich_spec(), message.initRoot<api::JobSpec>());
  auto requests = message.getRoot<api::JobSpec>()
                      .asReader()
                      .getTasks()[0]
                      .getTemplate()
                      .getContainers()[0]
                      .getRequests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(std::string(requests[0].getKey().cStr()), "cpu");
  EXPECT_EQ(std::string(requests[0].getValue().cStr()), "500m");
  EXPECT_EQ(std::string(requests[1].getValue().cStr()), "256Mi");
}

TEST(Codec, UnknownEventAndActionAreErrorsAtTheirPaths) {
  capnp::MallocMessageBuilder message;
  auto spec = message.initRoot<api::JobSpec>();
  auto policies = spec.initPolicies(1);
  auto events = policies[0].initEvents(2);
  events.set(0, "PodFailed");
  events.set(1, "PodExploded");
  policies[0].setAction("RestartJob");
  auto tasks = spec.initTasks(3);
  auto tp = tasks[2].initPolicies(1);
  tp[0].initEvents(1).set(0, "*");
  tp[0].setAction("Explode");
  Diagnostics diags;
  JobSpec out = decode(spec.asReader(), diags);
  ASSERT_EQ(diags.errors.size(), 2u);
  EXPECT_EQ(diags.errors[0].path, "spec.policies[0].events[1]");
  EXPECT_NE(diags.errors[0].message.find("PodExploded"), std::string::npos);
  EXPECT_EQ(diags.errors[1].path, "spec.tasks[2].policies[0].action");
  EXPECT_NE(diags.errors[1].message.find("Explode"), std::string::npos);
  EXPECT_EQ(out.policies[0].events, std::vector<Event>{Event::PodFailed});
}

TEST(Codec, MalformedQuantityIsAnErrorAtItsPath) {
  capnp::MallocMessageBuilder message;
  auto spec = message.initRoot<api::JobSpec>();
  auto containers = spec.initTasks(1)[0].initTemplate().initContainers(2);
  auto requests = containers[1].initRequests(2);
  requests[0].setKey("cpu");
  requests[0].setValue("lots");
  requests[1].setKey("memory");
  requests[1].setValue("1Gi");
  auto limits = containers[0].initLimits(1);
  limits[0].setKey("memory");
  limits[0].setValue("-1");
  Diagnostics diags;
  JobSpec out = decode(spec.asReader(), diags, "documents[1].spec");
  ASSERT_EQ(diags.errors.size(), 2u);
  EXPECT_EQ(diags.errors[0].path,
            "documents[1].spec.tasks[0].template.spec.containers[0]"
            ".resources.limits.memory");
  EXPECT_EQ(diags.errors[1].path,
            "documents[1].spec.tasks[0].template.spec.containers[1]"
            ".resources.requests.cpu");
  EXPECT_NE(diags.errors[1].message.find("lots"), std::string::npos);
  EXPECT_EQ(out.tasks[0].template_.containers[1].requests.get("memory"), 1073741824000LL);
}

TEST(Codec, UnknownPhaseWordsInOwnDataFallBackSilently) {
  capnp::MallocMessageBuilder message;
  auto job = message.initRoot<api::Job>();
  job.initStatus().initState().setPhase("Exploding");
  job.getStatus().initConditions(1)[0].setStatus("Nope");
  EXPECT_EQ(decode(job.asReader()).status.state.phase, JobPhase::Pending);
  EXPECT_EQ(decode(job.asReader()).status.conditions[0].status, JobPhase::Pending);
  capnp::MallocMessageBuilder pod_message;
  auto pod = pod_message.initRoot<api::Pod>();
  pod.setPhase("Sideways");
  EXPECT_EQ(decode(pod.asReader()).phase, PodPhase::Unknown);
}

}  // namespace
}  // namespace caldera
