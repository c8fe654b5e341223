// Runs the attnprof binary built with the tests (ATTNPROF_TEST_BINARY) as a user would: through
// the shell, with extra environment assignments, capturing stdout, stderr and the exit code.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace attnprof::testing_cli {

struct Outcome {
  int code = -1;
  std::string out, err;
};

// `env`: assignments for the command's environment, e.g. "ATTNPROF_TEST_PROVIDERS=1".
// Ten quick CPU points (two providers x five lengths): the grid the shard, merge and --gpus
// tests split and join.
inline const std::string kTenPointGrid =
    " --device cpu --providers cpu.naive,cpu.flash --seq 16,32,48,64,80 --heads 1 --head-dim 8 "
    "--dtype fp32 --min-time 1ms --point-timeout 20ms --min-samples 3 --no-trace --no-history ";

inline Outcome run_cli(const std::string& args, const std::string& env = "") {
  static int serial = 0;
  const auto err_path =
      std::filesystem::temp_directory_path() /
      ("attnprof_cli_err_" + std::to_string(::getpid()) + "_" + std::to_string(serial++));
  const std::string cmd =
      env + " " + std::string(ATTNPROF_TEST_BINARY) + " " + args + " 2>" + err_path.string();
  Outcome o;
  FILE* p = ::popen(cmd.c_str(), "r");
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) o.out.append(buf, n);
  const int status = ::pclose(p);
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream e(err_path);
  std::stringstream ss;
  ss << e.rdbuf();
  o.err = ss.str();
  std::filesystem::remove(err_path);
  return o;
}

}  // namespace attnprof::testing_cli
