// The public wire: requests written by hand with the stock `capnp encode` tool get valid answers.
#include <gtest/gtest.h>

#include "client/client.hpp"
#include "harness.hpp"

namespace caldera::testing {
namespace {

using namespace std::chrono_literals;

std::string capnp_encode(const std::string& text) {
  auto r = run({"capnp", "encode", "-I", source_path("messages"), source_path("messages/api.capnp"),
                "Request"},
               text);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

TEST(Wire, HandEncodedRequestsGetResponses) {
  TempDir dir;
  Calderad node(dir.path() + "/node");
  node.start();
  auto c = Client::connect(node.server(), 2s);
  ASSERT_TRUE(c) << c.error();

  ASSERT_TRUE((*c)->send_raw(capnp_encode("(id = 7, ping = void)")));
  auto frame = (*c)->read_frame(5s);
  ASSERT_TRUE(frame) << frame.error();
  {
    FlatReader reader(*frame);
    auto resp = reader.root<api::Response>();
    EXPECT_EQ(resp.getId(), 7u);
    ASSERT_EQ(resp.which(), api::Response::PONG);
  }

  auto yaml = std::string("apiVersion: batch.volcano.sh/v1alpha1\\nkind: Job\\n") +
              "metadata: {name: byhand}\\nspec:\\n  tasks:\\n  - name: main\\n    replicas: 1\\n" +
              "    template: {spec: {containers: [{name: main, command: [\\\"true\\\"]}]}}\\n";
  ASSERT_TRUE((*c)->send_raw(capnp_encode("(id = 8, submitYaml = \"" + yaml + "\")")));
  frame = (*c)->read_frame(5s);
  ASSERT_TRUE(frame) << frame.error();
  {
    FlatReader reader(*frame);
    auto resp = reader.root<api::Response>();
    EXPECT_EQ(resp.getId(), 8u);
    ASSERT_EQ(resp.which(), api::Response::SUBMITTED) << node.log();
    EXPECT_EQ(std::string(resp.getSubmitted()[0].getName().cStr()), "byhand");
  }
  // Structured fields work as well as YAML text.
  ASSERT_TRUE((*c)->send_raw(capnp_encode(
      "(id = 9, submitJob = (name = \"structured\", tasks = [(name = \"main\", replicas = 2, "
      "template = (containers = [(name = \"main\", command = [\"true\"])]))]))")));
  frame = (*c)->read_frame(5s);
  ASSERT_TRUE(frame) << frame.error();
  FlatReader reader(*frame);
  auto resp = reader.root<api::Response>();
  EXPECT_EQ(resp.getId(), 9u);
  ASSERT_EQ(resp.which(), api::Response::SUBMITTED);
  auto wait = node.cli({"wait", "job", "structured", "--for=phase=Completed", "--timeout=30s"});
  EXPECT_EQ(wait.exit_code, 0) << wait.err;
}

}  // namespace
}  // namespace caldera::testing
