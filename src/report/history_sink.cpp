// Recording a run into the history as it goes, and reading rows back by journal or run id.
#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <cstdio>

#include "attnprof/history.hpp"
#include "attnprof/journal.hpp"

namespace attnprof {

namespace {

class HistorySink final : public Sink {
 public:
  HistorySink(History db, RunMeta meta) : db_(std::move(db)), meta_(std::move(meta)) {}

  void begin(int64_t) override {
    guarded([&] { run_id_ = db_.begin_run(meta_); });
  }
  void write(const Result& r) override {
    if (run_id_ > 0) guarded([&] { db_.add_row(run_id_, r); });
  }
  void stopped(int signal) override {
    stopped_by_ = signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "a signal";
  }
  void end() override {
    if (run_id_ > 0) guarded([&] { db_.finish_run(run_id_, stopped_by_); });
  }

 private:
  // A history that fails mid-run loses the history, never the sweep: one warning, then silence.
  template <class F>
  void guarded(F&& f) {
    if (failed_) return;
    try {
      f();
    } catch (const std::exception& e) {
      failed_ = true;
      std::fprintf(stderr, "attnprof: warning: run history not recorded from here on: %s\n",
                   e.what());
    }
  }

  History db_;
  RunMeta meta_;
  int64_t run_id_ = 0;
  std::string stopped_by_;
  bool failed_ = false;
};

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::unique_ptr<Sink> make_history_sink(const std::filesystem::path& db_path, RunMeta meta) {
  return std::make_unique<HistorySink>(History::open(db_path, /*create=*/true), std::move(meta));
}

std::unique_ptr<Sink> open_run_history(const std::string& explicit_path, RunMeta meta) {
  if (!meta.journal.empty()) {
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(meta.journal, ec);
    if (!ec) meta.journal = absolute.string();
  }
  if (!explicit_path.empty()) return make_history_sink(explicit_path, std::move(meta));
  try {
    return make_history_sink(default_history_path(), std::move(meta));
  } catch (const HistoryError& e) {
    std::fprintf(stderr, "attnprof: warning: this run is not recorded in the history: %s\n",
                 e.what());
    return nullptr;
  }
}

LoadedRows load_rows(std::string_view source, const std::filesystem::path& history_path) {
  const std::filesystem::path as_path(source);
  std::error_code ec;
  if (std::filesystem::is_regular_file(as_path, ec)) {
    JournalRows journal = read_journal(as_path);
    return {std::move(journal.rows), as_path.filename().string(), std::move(journal.warning)};
  }
  if (!all_digits(source) && source != "last") {
    throw std::invalid_argument(fmt::format(
        "'{}' is neither a journal file nor a run id (a number, or 'last'; see `attnprof history`)",
        source));
  }
  const History db = History::open(history_path, /*create=*/false);
  int64_t id = 0;
  if (source == "last") {
    const auto latest = db.latest_run();
    if (!latest) {
      throw std::invalid_argument(
          fmt::format("no run recorded in {}, so 'last' names nothing", history_path.string()));
    }
    id = *latest;
  } else {
    try {
      id = std::stoll(std::string(source));
    } catch (const std::out_of_range&) {
      throw std::invalid_argument(fmt::format("run id '{}' is out of range", source));
    }
  }
  const RunRecord rec = db.run(id);
  LoadedRows out;
  out.rows = db.rows(id);
  out.label = fmt::format("run {} ({}{})", id, rec.started_at,
                          rec.meta.device.empty() ? "" : ", " + rec.meta.device);
  return out;
}

}  // namespace attnprof
