// The run history: rows written through the sink read back equal; a newer schema, a foreign or
// broken file and an unknown run id are each one clear line.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>

#include "attnprof/history.hpp"
#include "report/fixtures.hpp"

namespace attnprof {
namespace {

class HistoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("attnprof_history_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Records `rows` as one run through the sink; returns the database path.
  std::filesystem::path record(const std::vector<Result>& rows, RunMeta meta = {}) {
    const auto db = dir_ / "history.sqlite";
    auto sink = make_history_sink(db, std::move(meta));
    sink->begin(static_cast<int64_t>(rows.size()));
    for (const Result& r : rows) sink->write(r);
    sink->end();
    return db;
  }

  void set_version(const std::filesystem::path& db, int version) {
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
    const std::string sql = "UPDATE schema_version SET version = " + std::to_string(version);
    EXPECT_EQ(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(h);
  }

  std::filesystem::path dir_;
};

std::vector<Result> rows_with_env() {
  std::vector<Result> rows = test::sample_results();
  for (Result& r : rows) r.env = {{"git_commit", "abc123"}, {"device", r.device}};
  return rows;
}

TEST_F(HistoryTest, RowsReadBackExactlyAsWritten) {
  const std::vector<Result> rows = rows_with_env();  // every status, NaN errors, odd text
  const auto db = record(rows, {"attnprof run --seq 1k", "/tmp/r.jsonl", "NVIDIA H200"});
  const History h = History::open(db, /*create=*/false);
  const std::vector<Result> back = h.rows(1);
  ASSERT_EQ(back.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(to_json_line(back[i]), to_json_line(rows[i])) << "row " << i;
  }
}

TEST_F(HistoryTest, RunsAreListedNewestFirstWithCounts) {
  const std::vector<Result> rows = rows_with_env();
  record(rows, {"attnprof run one", "/tmp/one.jsonl", "NVIDIA H200"});
  const auto db = record({rows[0]}, {"attnprof run two", "", ""});
  const History h = History::open(db, false);
  const std::vector<RunRecord> runs = h.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].id, 2);
  EXPECT_EQ(runs[0].points, 1);
  EXPECT_EQ(runs[0].passed, 1);
  EXPECT_EQ(runs[0].meta.device, rows[0].device);  // taken from the first row when not given
  EXPECT_EQ(runs[1].meta.command, "attnprof run one");
  EXPECT_EQ(runs[1].meta.journal, "/tmp/one.jsonl");
  EXPECT_EQ(runs[1].points, static_cast<int64_t>(rows.size()));
  EXPECT_EQ(runs[1].passed, 2);
  EXPECT_FALSE(runs[1].finished_at.empty());
  EXPECT_NE(runs[1].fingerprint.find("git_commit=abc123;"), std::string::npos);
  EXPECT_EQ(h.runs(1).size(), 1u);
  EXPECT_EQ(h.latest_run(), 2);
}

// A run a signal stopped before its last point is marked so; a complete one is not.
TEST_F(HistoryTest, ARunStoppedByASignalIsMarked) {
  const auto db = dir_ / "history.sqlite";
  auto sink = make_history_sink(db, {"attnprof run stopped", "", "cpu"});
  sink->begin(3);
  sink->write(rows_with_env()[0]);
  sink->stopped(SIGINT);
  sink->end();
  record({rows_with_env()[0]}, {"attnprof run whole", "", "cpu"});
  const std::vector<RunRecord> runs = History::open(db, false).runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1].stopped_by, "SIGINT");
  EXPECT_FALSE(runs[1].finished_at.empty());
  EXPECT_EQ(runs[0].stopped_by, "");
}

// A database of schema 1 (before runs.stopped_by) is migrated when opened: its runs keep
// reading, unmarked, and new runs can be marked.
TEST_F(HistoryTest, SchemaOneIsMigrated) {
  const auto db = dir_ / "history.sqlite";
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  const char* v1 = R"sql(
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, started_at TEXT NOT NULL,
  finished_at TEXT NOT NULL DEFAULT '', command TEXT NOT NULL, journal TEXT NOT NULL,
  device TEXT NOT NULL, fingerprint TEXT NOT NULL DEFAULT '');
CREATE TABLE rows (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL, provider TEXT NOT NULL, spec_key TEXT NOT NULL, status TEXT NOT NULL,
  median_us REAL NOT NULL, json TEXT NOT NULL, PRIMARY KEY (run_id, seq));
INSERT INTO schema_version VALUES (1);
INSERT INTO runs (started_at, finished_at, command, journal, device)
  VALUES ('2026-11-01T00:00:00Z', '2026-11-01T00:01:00Z', 'attnprof run old', '', 'cpu');
)sql";
  ASSERT_EQ(sqlite3_exec(h, v1, nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(h);
  auto sink = make_history_sink(db, {"attnprof run new", "", "cpu"});
  sink->begin(1);
  sink->stopped(SIGTERM);
  sink->end();
  const std::vector<RunRecord> runs = History::open(db, false).runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1].meta.command, "attnprof run old");
  EXPECT_EQ(runs[1].stopped_by, "");
  EXPECT_EQ(runs[0].stopped_by, "SIGTERM");
}

TEST_F(HistoryTest, NewerSchemaIsRefusedInOneLine) {
  const auto db = record(test::sample_results());
  set_version(db, kHistorySchemaVersion + 1);
  try {
    History::open(db, false);
    FAIL() << "opened a database of a newer schema";
  } catch (const HistoryError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("schema version 3, newer than this attnprof reads (2)"), std::string::npos)
        << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
  // The run command warns and goes on without history; an explicit --history is an error.
  EXPECT_THROW(open_run_history(db.string(), {}), HistoryError);
  const char* before = std::getenv("ATTNPROF_HISTORY");
  const std::string saved = before ? before : "";
  setenv("ATTNPROF_HISTORY", db.c_str(), 1);
  EXPECT_EQ(open_run_history("", {}), nullptr);
  if (before) {
    setenv("ATTNPROF_HISTORY", saved.c_str(), 1);
  } else {
    unsetenv("ATTNPROF_HISTORY");
  }
}

// Tests keep their state in the build tree (tests/test_state.cpp): a run a test starts is never
// recorded in the user's own database, nor are the user's measured ceilings read.
TEST(TestState, HistoryAndCeilingsAreTheBuildTreesNotTheUsers) {
  const std::string home = std::getenv("HOME") ? std::getenv("HOME") : "/nonexistent";
  const std::string db = default_history_path().string();
  EXPECT_EQ(db.rfind(home + "/.local", 0), std::string::npos) << db;
  EXPECT_NE(db.find("/tests/history.sqlite"), std::string::npos) << db;
  const char* cache = std::getenv("XDG_CACHE_HOME");
  ASSERT_NE(cache, nullptr);
  EXPECT_NE(std::string(cache).find("/tests/cache"), std::string::npos) << cache;
}

TEST_F(HistoryTest, UnknownRunIdIsAClearError) {
  const auto db = record(test::sample_results());
  const History h = History::open(db, false);
  try {
    h.rows(42);
    FAIL() << "read an unknown run";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no run 42 in "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(runs 1..1;"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_rows("42", db), std::invalid_argument);
}

TEST_F(HistoryTest, FilesThatAreNotHistoriesAreRefused) {
  const auto text = dir_ / "text.sqlite";
  test::write_text(text, "this is not a database, just text long enough to have a header...");
  try {
    History::open(text, false);
    FAIL();
  } catch (const HistoryError& e) {
    EXPECT_NE(std::string(e.what()).find("is not an SQLite database"), std::string::npos)
        << e.what();
  }
  const auto foreign = dir_ / "foreign.sqlite";
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(foreign.c_str(), &h), SQLITE_OK);
  sqlite3_exec(h, "CREATE TABLE t (x)", nullptr, nullptr, nullptr);
  sqlite3_close(h);
  EXPECT_THROW(History::open(foreign, false), HistoryError);
  EXPECT_THROW(History::open(dir_ / "missing.sqlite", false), HistoryError);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "missing.sqlite"));
}

TEST_F(HistoryTest, LoadRowsTakesAJournalARunIdOrLast) {
  const std::vector<Result> rows = test::sample_results();
  const auto db = record(rows);
  record({rows[0], rows[1]});
  EXPECT_EQ(load_rows("1", db).rows.size(), rows.size());
  const LoadedRows last = load_rows("last", db);
  EXPECT_EQ(last.rows.size(), 2u);
  EXPECT_EQ(last.label.rfind("run 2 (", 0), 0u) << last.label;
  const LoadedRows file = load_rows(test::golden_path("results.jsonl").string(), db);
  EXPECT_EQ(file.rows.size(), rows.size());
  EXPECT_EQ(file.label, "results.jsonl");
  try {
    load_rows("no-such-file.jsonl", db);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("neither a journal file nor a run id"), std::string::npos);
  }
}

}  // namespace
}  // namespace attnprof
