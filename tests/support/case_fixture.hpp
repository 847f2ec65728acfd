// SPDX-License-Identifier: MIT
#pragma once
// A fixture for case-file tests: a folder of the test's own for the files a
// case names, and the case parsed from text against it, or its error.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "shallows/io/case.hpp"

namespace shallows::test_support {

class CaseFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("shallows_" + std::string(info->test_suite_name()) + "_" + std::string(info->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path write(const std::string& name, const std::string& text) const {
    const std::filesystem::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

  io::Case parse(const std::string& text, const std::vector<std::string>& overrides = {}) const {
    return io::parse_case(text, "case.toml", dir_, overrides);
  }

  // The InputError message of parse(text), or "" when it parses.
  std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) const {
    try {
      parse(text, overrides);
    } catch (const io::InputError& e) {
      return e.what();
    }
    return "";
  }

  std::filesystem::path dir_;
};

}  // namespace shallows::test_support
