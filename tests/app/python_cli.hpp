// What the Python providers' CLI tests share: whether a provider is listed available (through
// `attnprof list --json`, never the table's spacing), and REQUIRE_PYTHON(), which skips only where
// this build or machine cannot run Python providers and fails where it should.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <cstdlib>
#include <filesystem>

#include <map>
#include <string>

#include "attnprof/journal.hpp"

#include "cli_runner.hpp"

namespace attnprof::testing_python {

// The `attnprof list --json` line of `provider` ("" when it is not listed).
inline std::string list_line(const std::string& provider) {
  static const std::string listing = testing_cli::run_cli("list --json").out + "\n";
  std::string line;
  for (const char c : listing) {
    if (c != '\n') {
      line += c;
      continue;
    }
    if (line.find("\"provider\":\"" + provider + "\"") != std::string::npos) return line;
    line.clear();
  }
  return "";
}

// Whether `provider` is listed available, else why not ("" when it is).
inline std::string provider_unavailable(const std::string& provider) {
  const std::string line = list_line(provider);
  if (line.empty()) return provider + " is not listed";
  return line.find("\"available\":true") != std::string::npos ? std::string() : line;
}

// Why the Python providers cannot run here ("" when they can): no numpy, or no
// libattnprof_py.so (the sanitizer build has none), or the line that says why there are none.
inline std::string python_unavailable() {
  const std::string why = provider_unavailable("py.numpy.naive");
  if (why.empty()) return why;
  const std::string none = list_line("py.*");
  return none.empty() ? why : none;
}

// Whether this build and machine should run the Python providers: libattnprof_py.so was built
// next to attnprof (the sanitizer build has none) and python3 imports numpy. Where they should,
// a provider that is not available is a failure (a broken catalog or loader), never a skip.
inline bool python_expected() {
  const std::filesystem::path lib =
      std::filesystem::path(ATTNPROF_TEST_BINARY).parent_path() / "libattnprof_py.so";
  return std::filesystem::exists(lib) &&
         std::system("python3 -c 'import numpy' >/dev/null 2>&1") == 0;
}

#define REQUIRE_PYTHON()                                                              \
  if (const std::string why = python_unavailable(); !why.empty()) {                   \
    if (python_expected()) FAIL() << "the Python providers should run here: " << why; \
    GTEST_SKIP() << why;                                                              \
  }

// Where python3 imports `modules` (a Python statement's list: "onnxruntime, onnx"), `provider`
// must be available (a skip would hide a broken provider); elsewhere why it is not ("" when it is).
inline std::string library_missing(const std::string& provider, const std::string& modules) {
  const std::string why = provider_unavailable(provider);
  if (why.empty()) return why;
  const std::string probe = "python3 -c 'import " + modules + "' >/dev/null 2>&1";
  if (std::system(probe.c_str()) == 0) {
    ADD_FAILURE() << modules << " import, yet " << provider << " is unavailable: " << why;
  }
  return why;
}

// A test with a folder of its own; run_rows runs `attnprof run ARGS --out` there and reads back
// the rows by provider.
class PythonCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           fmt::format("attnprof_cli_python_{}_{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::map<std::string, Result> run_rows(const std::string& args,
                                         testing_cli::Outcome* outcome = nullptr,
                                         const std::string& env = "") {
    const std::filesystem::path out = dir_ / "rows.jsonl";
    std::filesystem::remove(out);
    const testing_cli::Outcome o =
        testing_cli::run_cli("run " + args + " --out " + out.string(), env);
    if (outcome) *outcome = o;
    std::map<std::string, Result> rows;
    if (!std::filesystem::exists(out)) {
      ADD_FAILURE() << "no journal; exit " << o.code << ": " << o.err;
      return rows;
    }
    for (Result& r : read_journal(out).rows) rows[r.provider] = r;
    return rows;
  }

  std::filesystem::path dir_;
};

}  // namespace attnprof::testing_python
