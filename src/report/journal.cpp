#include "attnprof/journal.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "attnprof/sink.hpp"

namespace attnprof {

JournalRows read_journal(const std::filesystem::path& path) {
  JournalRows journal;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error(
        fmt::format("cannot open journal {}: {}", path.string(), std::strerror(errno)));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    throw std::runtime_error(
        fmt::format("cannot read journal {}: {}", path.string(), std::strerror(errno)));
  }
  const std::string text = buffer.str();

  int64_t line_number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    ++line_number;
    const std::size_t newline = text.find('\n', start);
    const bool complete = newline != std::string::npos;
    const std::string line = text.substr(start, complete ? newline - start : std::string::npos);
    start = complete ? newline + 1 : text.size();
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank line
    try {
      journal.rows.push_back(from_json_line(line));
    } catch (const std::exception& e) {
      // Only the last line, without its newline, and only a beginning of a row as this build
      // writes it: the row a killed writer did not finish. Anything else is not ours to cut.
      const std::string row_start = fmt::format("{{\"schema_version\":{},", kSchemaVersion);
      const bool partial_row = line.starts_with(row_start) || row_start.starts_with(line);
      if (complete || !partial_row) {
        throw std::runtime_error(
            fmt::format("{}, line {}: {}", path.string(), line_number, e.what()));
      }
      journal.warning = fmt::format(
          "{}, line {}: dropping a partial last row ({} bytes, no newline: a run killed while "
          "writing it); its point runs again",
          path.string(), line_number, line.size());
    }
  }
  return journal;
}

}  // namespace attnprof
