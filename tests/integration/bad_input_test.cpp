// Bad input of every kind gets a clear error, and the node keeps serving everyone else.
#include <gtest/gtest.h>

#include <random>

#include "client/client.hpp"
#include "harness.hpp"

namespace caldera::testing {
namespace {

using namespace std::chrono_literals;

class BadInput : public ::testing::Test {
 protected:
  TempDir dir;
  Calderad node{dir.path() + "/node"};
  void SetUp() override { node.start(); }

  // Submits YAML through the CLI and expects a non-zero exit with every fragment in stderr.
  void expect_rejected(const std::string& yaml, const std::vector<std::string>& fragments) {
    auto r = node.cli({"submit", "-f", "-"}, yaml);
    EXPECT_NE(r.exit_code, 0) << r.out;
    for (const auto& f : fragments) EXPECT_NE(r.err.find(f), std::string::npos) << r.err;
  }

  void expect_still_serving() {
    auto r = node.cli({"get", "nodes"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
};

const char* kGood = R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: good}
spec:
  tasks:
    - name: main
      replicas: 1
      template: {spec: {containers: [{name: main, command: ["true"]}]}}
)";

TEST_F(BadInput, InvalidYamlNamesTheLine) {
  expect_rejected("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: x\n",
                  {"line"});
  expect_still_serving();
}

TEST_F(BadInput, AdmissionReportsEveryViolationWithItsField) {
  auto yaml = R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: Bad_Name}
spec:
  minAvailable: 9
  policies:
    - {event: PodFailed, action: RestartJob}
    - {event: PodFailed, action: AbortJob}
    - {event: PodPending, action: AbortJob}
  tasks:
    - name: a
      replicas: -1
      dependsOn: {name: [b]}
      template: {spec: {containers: [{name: main, image: busybox}]}}
    - name: b
      replicas: 1
      dependsOn: {name: [a]}
      template:
        spec:
          containers:
            - name: main
              command: ["true"]
              resources: {requests: {cpu: "lots", memory: 1Ti}}
)";
  expect_rejected(yaml,
                  {"metadata.name", "spec.minAvailable", "spec.policies[1]", "spec.policies[2]",
                   "spec.tasks[0].replicas", "spec.tasks[0].template.spec.containers[0].command",
                   "spec.tasks[1].template.spec.containers[0].resources.requests.cpu",
                   "spec.tasks[0].dependsOn"});
  expect_still_serving();
}

TEST_F(BadInput, RequestsLargerThanAnyNodeAreRejected) {
  auto yaml = R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: huge}
spec:
  tasks:
    - name: main
      replicas: 1
      template:
        spec:
          containers:
            - {name: main, command: ["true"], resources: {requests: {memory: 100Ti}}}
)";
  expect_rejected(yaml, {"memory", "spec.tasks[0]"});
}

TEST_F(BadInput, DuplicateJobIsAlreadyExists) {
  ASSERT_EQ(node.cli({"submit", "-f", "-"}, kGood).exit_code, 0);
  expect_rejected(kGood, {"already exists"});
}

TEST_F(BadInput, UnknownFieldsAreWarningsNotErrors) {
  auto yaml = std::string(kGood) + "  volumes: []\n";
  auto r = node.cli({"submit", "-f", "-"}, yaml);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("Warning"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("spec.volumes"), std::string::npos) << r.err;
}

TEST_F(BadInput, RandomBytesOnTheSocketGetAnErrorAndOthersAreServed) {
  auto other = Client::connect(node.server(), 2s);
  ASSERT_TRUE(other) << other.error();
  std::mt19937 rng(42);
  for (int round = 0; round < 20; ++round) {
    auto c = Client::connect(node.server(), 2s);
    ASSERT_TRUE(c) << c.error();
    std::string junk(static_cast<size_t>(8 + rng() % 4096), '\0');
    for (auto& ch : junk) ch = static_cast<char>(rng());
    ASSERT_TRUE((*c)->send_raw(junk));
    // Either an error response or a closed connection; never a crash.
    auto frame = (*c)->read_frame(500ms);
    if (frame) {
      FlatReader reader(*frame);
      auto resp = reader.root<api::Response>();
      EXPECT_EQ(resp.which(), api::Response::ERRORS);
    }
  }
  auto pong = (*other)->call([](api::Request::Builder r) { r.setPing(); });
  ASSERT_TRUE(pong) << pong.error();
  EXPECT_EQ(pong.value()->root<api::Response>().which(), api::Response::PONG);
  expect_still_serving();
}

TEST_F(BadInput, OversizedFrameIsRefusedAsTooLarge) {
  auto c = Client::connect(node.server(), 2s);
  ASSERT_TRUE(c);
  // One segment of 2^28 words (2 GiB) announced.
  std::string header("\0\0\0\0\0\0\0\x10", 8);
  ASSERT_TRUE((*c)->send_raw(header));
  auto frame = (*c)->read_frame(2s);
  ASSERT_TRUE(frame) << frame.error();
  FlatReader reader(*frame);
  auto resp = reader.root<api::Response>();
  ASSERT_EQ(resp.which(), api::Response::ERRORS);
  EXPECT_EQ(resp.getErrors()[0].getCode(), api::Error::Code::TOO_LARGE);
  expect_still_serving();
}

TEST_F(BadInput, ARequestOverTheTraversalLimitIsTooLargeAndSaysTheLimit) {
  auto c = Client::connect(node.server(), 2s);
  ASSERT_TRUE(c);
  // Fits a frame (16 MiB) but holds more than a request may (8 MiB).
  auto r = (*c)->call([](api::Request::Builder req) {
    auto cmd = req.initCommand();
    cmd.setAction(std::string(10u << 20, 'x'));
    cmd.getJob().setName("j");
  });
  ASSERT_TRUE(r) << r.error();
  auto resp = r.value()->root<api::Response>();
  ASSERT_EQ(resp.which(), api::Response::ERRORS);
  EXPECT_EQ(resp.getErrors()[0].getCode(), api::Error::Code::TOO_LARGE);
  EXPECT_NE(std::string(resp.getErrors()[0].getMessage()).find("at most 8 MiB"), std::string::npos)
      << resp.getErrors()[0].getMessage().cStr();
  expect_still_serving();
}

TEST_F(BadInput, WellFramedGarbageIsMalformedAndTheConnectionStaysUsable) {
  auto c = Client::connect(node.server(), 2s);
  ASSERT_TRUE(c);
  // A valid segment table (1 segment, 2 words) whose root pointer points far outside.
  std::string frame("\0\0\0\0\x02\0\0\0", 8);
  frame += std::string("\xfc\xff\xff\x7f\x01\x00\x01\x00", 8);
  frame += std::string(8, '\xff');
  ASSERT_TRUE((*c)->send_raw(frame));
  auto reply = (*c)->read_frame(2s);
  ASSERT_TRUE(reply) << reply.error();
  FlatReader reader(*reply);
  auto resp = reader.root<api::Response>();
  ASSERT_EQ(resp.which(), api::Response::ERRORS);
  EXPECT_EQ(resp.getErrors()[0].getCode(), api::Error::Code::MALFORMED);
  auto pong = (*c)->call([](api::Request::Builder r) { r.setPing(); });
  ASSERT_TRUE(pong) << pong.error();
}

TEST_F(BadInput, UnknownJobAndPodAreNotFound) {
  auto r = node.cli({"get", "job", "nope"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("not found"), std::string::npos);
  auto l = node.cli({"logs", "nope-main-0"});
  EXPECT_NE(l.exit_code, 0);
  EXPECT_NE(l.err.find("not found"), std::string::npos);
}

}  // namespace
}  // namespace caldera::testing
