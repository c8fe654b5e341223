// Run history: every `attnprof run` recorded in an embedded SQLite database (its command line,
// environment, journal and rows), so `report` and `compare` can take a run id instead of a file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/command_line.hpp"  // process_command_line(), for RunMeta::command
#include "attnprof/result.hpp"
#include "attnprof/sink.hpp"

namespace attnprof {

// The schema this build writes and reads. A database with a newer version is refused whole.
inline constexpr int kHistorySchemaVersion = 2;  // 2: runs.stopped_by

// A history database that cannot be used (newer schema, not a database, unwritable): what()
// is one line naming the file.
class HistoryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// $ATTNPROF_HISTORY, else $XDG_DATA_HOME/attnprof/history.sqlite, else
// ~/.local/share/attnprof/history.sqlite.
std::filesystem::path default_history_path();
// `option` (a --history value) when given, else default_history_path().
std::filesystem::path history_path(const std::string& option);

// What a run says about itself when it starts; the rows and environment come later.
struct RunMeta {
  std::string command;  // the command line, as a shell would take it
  std::string journal;  // the JSONL journal path, empty when none was written
  std::string device;   // the device the points run on
};

// One run as `attnprof history` lists it.
struct RunRecord {
  int64_t id = 0;
  std::string started_at;   // ISO-8601 UTC
  std::string finished_at;  // empty while running, or when the run was killed
  std::string stopped_by;   // "SIGINT" or "SIGTERM": a signal ended it before its last point
  RunMeta meta;
  std::string fingerprint;  // fingerprint_key() of the first row's environment
  int64_t points = 0;       // rows recorded
  int64_t passed = 0;
};

class History {
 public:
  // Opens (creating when `create`) the database. Throws HistoryError: a file that is not a
  // history database, one from a newer schema, or a missing file when !create.
  static History open(const std::filesystem::path& path, bool create);
  History(History&&) noexcept;
  History& operator=(History&&) noexcept;
  ~History();

  const std::filesystem::path& path() const;

  // A new run; returns its id. started_at is now.
  int64_t begin_run(const RunMeta& meta);
  // Appends one row to a run (its order is kept). The first row sets the run's fingerprint.
  void add_row(int64_t run_id, const Result& row);
  // `stopped_by`: the signal that ended the sweep before its last point ("SIGINT"), else empty.
  void finish_run(int64_t run_id, const std::string& stopped_by = "");

  // Newest first; at most `limit` runs (0: all).
  std::vector<RunRecord> runs(int64_t limit = 0) const;
  // Throws std::invalid_argument "no run N in <path> (runs: a..b)" for an unknown id.
  RunRecord run(int64_t id) const;
  std::vector<Result> rows(int64_t run_id) const;
  // The newest run's id, nullopt when there is none.
  std::optional<int64_t> latest_run() const;

 private:
  struct Impl;
  explicit History(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A sink that records the run: begin() opens the run, write() adds each row, end() finishes it.
// The database is opened here (so a bad one is reported before the sweep starts); a write that
// fails later prints one warning on stderr and stops recording, never the sweep.
std::unique_ptr<Sink> make_history_sink(const std::filesystem::path& db_path, RunMeta meta);

// The history sink `attnprof run` adds. `explicit_path` is --history (empty: the default path).
// An explicit database that cannot be used throws HistoryError; the default one prints one
// warning on stderr and returns null, so that an unwritable home never stops a run.
std::unique_ptr<Sink> open_run_history(const std::string& explicit_path, RunMeta meta);

// Rows from a JSONL journal (an existing file) or a run of the history: a run id ("12") or
// "last". Throws std::invalid_argument for something that is neither, naming both readings.
struct LoadedRows {
  std::vector<Result> rows;
  std::string label;    // "results.jsonl" or "run 12 (2026-01-12T09:30:00Z, NVIDIA H200)"
  std::string warning;  // read_journal()'s warning (a torn last row dropped), else empty
};
LoadedRows load_rows(std::string_view source, const std::filesystem::path& history_path);

}  // namespace attnprof
