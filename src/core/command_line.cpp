#include "attnprof/command_line.hpp"

#include <unistd.h>

#include <fstream>

namespace attnprof {

std::vector<std::string> command_line_args(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string arg;
  while (std::getline(in, arg, '\0')) args.push_back(arg);
  return args;
}

std::string shell_join(const std::vector<std::string>& args) {
  std::string line;
  for (const std::string& arg : args) {
    const bool plain = !arg.empty() && arg.find_first_not_of(
                                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                           "0123456789-_=./,:%+@") == std::string::npos;
    if (!line.empty()) line += ' ';
    if (plain) {
      line += arg;
      continue;
    }
    line += '\'';
    for (char c : arg) {
      if (c == '\'') {
        line.append("'\\''");
      } else {
        line += c;
      }
    }
    line += '\'';
  }
  return line;
}

std::string process_command_line() {
  return shell_join(command_line_args(static_cast<int>(::getpid())));
}

std::filesystem::path this_executable() {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : exe;
}

}  // namespace attnprof
