#include "attnprof/journal.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <zlib.h>

#include "attnprof/sink.hpp"

namespace attnprof {

namespace {

// The file's bytes; a name ending in .gz is read through zlib (a committed journal may be kept
// compressed: `gzip -k rows.jsonl`).
std::string read_text(const std::filesystem::path& path) {
  if (path.extension() == ".gz") {
    gzFile gz = gzopen(path.c_str(), "rb");
    if (!gz) {
      throw std::runtime_error(
          fmt::format("cannot open journal {}: {}", path.string(), std::strerror(errno)));
    }
    std::string text;
    std::vector<char> chunk(1 << 16);
    int n = 0;
    while ((n = gzread(gz, chunk.data(), static_cast<unsigned>(chunk.size()))) > 0)
      text.append(chunk.data(), static_cast<std::size_t>(n));
    // A stream cut short reads as far as it goes and then sets Z_BUF_ERROR: refused, not a
    // journal silently shorter than the file.
    int code = Z_OK;
    const std::string why = gzerror(gz, &code);
    gzclose(gz);
    if (n < 0 || (code != Z_OK && code != Z_STREAM_END)) {
      throw std::runtime_error(
          fmt::format("cannot read journal {}: not a readable gzip file ({})", path.string(), why));
    }
    return text;
  }
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
  return buffer.str();
}

}  // namespace

JournalRows read_journal(const std::filesystem::path& path) {
  JournalRows journal;
  const std::string text = read_text(path);

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
