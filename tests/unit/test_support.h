// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the unit tests: a per-test temporary directory, the message of an Error and
// a check on it.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tpuemu/base/error.h"

namespace tpuemu::test {

// The message of the tpuemu::Error that f throws, or "(no error)".
std::string error_of(auto&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// A gtest failure unless msg contains fragment.
inline void expect_contains(const std::string& msg, const std::string& fragment) {
  EXPECT_NE(msg.find(fragment), std::string::npos) << "message: " << msg << "\nexpected: " << fragment;
}

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            fmt::format("tpuemu_{}_{}_{}", info->test_suite_name(), info->name(), ::getpid());
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::filesystem::path write(const std::string& name, const std::string& text) const {
    const auto p = path_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace tpuemu::test
