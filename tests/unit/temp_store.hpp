// A test fixture with a real store in a temporary directory of its own, removed afterwards.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "storage/store.hpp"

namespace caldera::testing {

class TempStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = "/tmp/caldera-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    auto opened = Store::open((dir_ / "db").string());
    ASSERT_TRUE(opened.ok()) << opened.error();
    store_ = std::move(opened.value());
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::filesystem::path dir_;
  std::shared_ptr<Store> store_;
};

}  // namespace caldera::testing
