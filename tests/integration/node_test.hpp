// The fixture most integration tests share: one real calderad per test, and its CLI's JSON.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness.hpp"

namespace caldera::testing {

class NodeTest : public ::testing::Test {
 protected:
  TempDir dir;
  std::string data = dir.path() + "/node";
  Calderad node{data};
  void SetUp() override { node.start(); }

  // `caldera ARGS -o json`, parsed; an empty object (and a test failure) when the CLI fails.
  nlohmann::json get_json(std::vector<std::string> args) {
    args.insert(args.end(), {"-o", "json"});
    auto r = node.cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
  }
};

}  // namespace caldera::testing
