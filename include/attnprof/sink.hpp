// Where results go. Sinks only read Results; they never feed back into running.
#pragma once

#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "attnprof/result.hpp"

namespace attnprof {

class Sink {
 public:
  virtual ~Sink() = default;
  virtual void begin(int64_t total_points) { (void)total_points; }
  // Called when a point starts running (the console shows it on its progress line).
  virtual void begin_point(const std::string& provider, const Spec& spec) {
    (void)provider;
    (void)spec;
  }
  // Called once per finished point, in order. JSONL sinks flush here.
  virtual void write(const Result& result) = 0;
  // Called before end() when a stop signal (SIGINT, SIGTERM) ended the sweep early.
  virtual void stopped(int signal) { (void)signal; }
  virtual void end() {}
};

// Lines and rows below are returned without a trailing newline.
// One JSON object per line, the schema of docs/results.md.
std::string to_json_line(const Result& r);
// Parses a line written by to_json_line; throws std::runtime_error with a one-line message on a
// malformed line or a different schema_version.
Result from_json_line(const std::string& line);
// Reading a whole journal: read_journal() in journal.hpp.

// CSV header and row (flat columns; docs/results.md lists them).
std::string csv_header();
std::string to_csv_row(const Result& r);
// A Markdown table of the results plus a short legend.
std::string to_markdown(const std::vector<Result>& results);
// Console table: one line per point, fixed columns; the provider column `provider_width` wide
// (at least 16: the run's longest provider name, so no name shifts its row).
std::string console_header(std::size_t provider_width = 0);
std::string console_row(const Result& r, std::size_t provider_width = 0);

std::unique_ptr<Sink> make_jsonl_sink(const std::filesystem::path& path, bool append);
std::unique_ptr<Sink> make_csv_sink(const std::filesystem::path& path);
std::unique_ptr<Sink> make_markdown_sink(const std::filesystem::path& path);
// Progress and rows on a stream; a progress bar with ETA when `tty`, plain lines otherwise.
std::unique_ptr<Sink> make_console_sink(std::ostream& os, bool tty, std::size_t provider_width = 0);

}  // namespace attnprof
