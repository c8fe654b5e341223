// A fresh temporary folder per test for the CLI tests that write journals, and the points a
// journal holds (provider and spec of each row).
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>

#include "attnprof/journal.hpp"

namespace attnprof::testing_cli {

class JournalDirTest : public ::testing::Test {
 protected:
  // `prefix` names the folder: <tmp>/<prefix>_<pid>_<test>.
  explicit JournalDirTest(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           fmt::format("{}_{}_{}", prefix_, ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // The (provider, spec) of every row of a journal.
  static std::multiset<std::string> points(const std::string& journal) {
    std::multiset<std::string> out;
    for (const Result& r : read_journal(journal).rows) out.insert(r.provider + " " + r.spec.key());
    return out;
  }

  std::string prefix_;
  std::filesystem::path dir_;
};

}  // namespace attnprof::testing_cli
