// The run history database (SQLite). One row per run in `runs`, one per result in `rows`, the
// result stored as its journal line so that reading it back gives exactly the Result written.
#include "attnprof/history.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <cstdlib>
#include <ctime>
#include <iostream>

#include "attnprof/env.hpp"

namespace attnprof {

namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  started_at TEXT NOT NULL,
  finished_at TEXT NOT NULL DEFAULT '',
  command TEXT NOT NULL,
  journal TEXT NOT NULL,
  device TEXT NOT NULL,
  fingerprint TEXT NOT NULL DEFAULT '',
  stopped_by TEXT NOT NULL DEFAULT '');
CREATE TABLE rows (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  provider TEXT NOT NULL,
  spec_key TEXT NOT NULL,
  status TEXT NOT NULL,
  median_us REAL NOT NULL,
  json TEXT NOT NULL,
  PRIMARY KEY (run_id, seq));
)sql";

// A prepared statement; steps and reads columns, throwing HistoryError with the database's words.
class Statement {
 public:
  Statement(sqlite3* db, const std::filesystem::path& path, const char* sql)
      : db_(db), path_(path) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) fail();
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement() { sqlite3_finalize(stmt_); }

  Statement& bind(int i, int64_t v) {
    check(sqlite3_bind_int64(stmt_, i, v));
    return *this;
  }
  Statement& bind(int i, double v) {
    check(sqlite3_bind_double(stmt_, i, v));
    return *this;
  }
  Statement& bind(int i, const std::string& v) {
    check(sqlite3_bind_text(stmt_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
    return *this;
  }
  // True while there is a row to read.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) fail();
    return false;
  }
  int64_t integer(int col) const { return sqlite3_column_int64(stmt_, col); }
  std::string text(int col) const {
    const auto* p = sqlite3_column_text(stmt_, col);
    return p ? std::string(reinterpret_cast<const char*>(p),
                           static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)))
             : std::string();
  }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK) fail();
  }
  [[noreturn]] void fail() const {
    throw HistoryError(fmt::format("history {}: {}", path_.string(), sqlite3_errmsg(db_)));
  }
  sqlite3* db_;
  const std::filesystem::path& path_;
  sqlite3_stmt* stmt_ = nullptr;
};

RunRecord read_run(const Statement& s) {
  RunRecord r;
  r.id = s.integer(0);
  r.started_at = s.text(1);
  r.finished_at = s.text(2);
  r.meta.command = s.text(3);
  r.meta.journal = s.text(4);
  r.meta.device = s.text(5);
  r.fingerprint = s.text(6);
  r.points = s.integer(7);
  r.passed = s.integer(8);
  r.stopped_by = s.text(9);
  return r;
}

constexpr const char* kRunColumns =
    "SELECT id, started_at, finished_at, command, journal, device, fingerprint, "
    "(SELECT COUNT(*) FROM rows WHERE run_id = runs.id), "
    "(SELECT COUNT(*) FROM rows WHERE run_id = runs.id AND status = 'passed'), stopped_by "
    "FROM runs ";

}  // namespace

struct History::Impl {
  std::filesystem::path path;
  sqlite3* db = nullptr;
  ~Impl() { sqlite3_close(db); }

  void exec(const char* sql) const {
    char* err = nullptr;
    if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      const std::string what = err ? err : sqlite3_errmsg(db);
      sqlite3_free(err);
      throw HistoryError(fmt::format("history {}: {}", path.string(), what));
    }
  }
  bool has_table(const char* name) const {
    Statement s(db, path, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
    s.bind(1, std::string(name));
    return s.step();
  }
  // Checks the schema version, or lays down the schema in an empty database.
  void check_schema() {
    if (!has_table("schema_version")) {
      Statement any(db, path, "SELECT COUNT(*) FROM sqlite_master");
      any.step();
      if (any.integer(0) > 0) {
        throw HistoryError(fmt::format(
            "{} is an SQLite database but not an attnprof history (no schema_version table)",
            path.string()));
      }
      exec("BEGIN IMMEDIATE");
      if (!has_table("schema_version")) {  // another process may have won the race
        exec(kSchema);
        exec(fmt::format("INSERT INTO schema_version VALUES ({})", kHistorySchemaVersion).c_str());
      }
      exec("COMMIT");
    }
    Statement s(db, path, "SELECT MAX(version) FROM schema_version");
    s.step();
    const int64_t version = s.integer(0);
    if (version > kHistorySchemaVersion) {
      throw HistoryError(fmt::format(
          "history {} has schema version {}, newer than this attnprof reads ({}); use a newer "
          "attnprof, or --history PATH for another database",
          path.string(), version, kHistorySchemaVersion));
    }
    if (version == 1) {  // before runs.stopped_by: added, every older run complete or killed
      exec("BEGIN IMMEDIATE");
      Statement again(db, path, "SELECT MAX(version) FROM schema_version");
      again.step();
      if (again.integer(0) == 1) {  // another process may have migrated it meanwhile
        exec("ALTER TABLE runs ADD COLUMN stopped_by TEXT NOT NULL DEFAULT ''");
        exec("UPDATE schema_version SET version = 2");
      }
      exec("COMMIT");
      return;
    }
    if (version < kHistorySchemaVersion) {
      throw HistoryError(
          fmt::format("history {} has schema version {}, which this attnprof "
                      "cannot read (it reads version {})",
                      path.string(), version, kHistorySchemaVersion));
    }
  }
};

History::History(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
History::History(History&&) noexcept = default;
History& History::operator=(History&&) noexcept = default;
History::~History() = default;

History History::open(const std::filesystem::path& path, bool create) {
  std::error_code ec;
  if (!create && !std::filesystem::exists(path, ec)) {
    throw HistoryError(
        fmt::format("no history database at {} (nothing recorded there yet; --history PATH or "
                    "$ATTNPROF_HISTORY chooses another)",
                    path.string()));
  }
  if (create && path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2(path.c_str(), &impl->db, flags, nullptr) != SQLITE_OK) {
    throw HistoryError(fmt::format("cannot open history {}: {}", path.string(),
                                   impl->db ? sqlite3_errmsg(impl->db) : "out of memory"));
  }
  // Several runs may record at once: wait for the writer lock rather than fail.
  sqlite3_busy_timeout(impl->db, 10000);
  try {
    impl->exec("PRAGMA foreign_keys = ON");
    impl->check_schema();
  } catch (const HistoryError& e) {
    const std::string what = e.what();
    if (what.find("file is not a database") != std::string::npos) {
      throw HistoryError(fmt::format("{} is not an SQLite database", path.string()));
    }
    throw;
  }
  return History(std::move(impl));
}

const std::filesystem::path& History::path() const {
  return impl_->path;
}

int64_t History::begin_run(const RunMeta& meta) {
  Statement s(impl_->db, impl_->path,
              "INSERT INTO runs (started_at, command, journal, device) VALUES (?, ?, ?, ?)");
  s.bind(1, utc_now_iso8601()).bind(2, meta.command).bind(3, meta.journal).bind(4, meta.device);
  s.step();
  return sqlite3_last_insert_rowid(impl_->db);
}

void History::add_row(int64_t run_id, const Result& row) {
  Statement s(impl_->db, impl_->path,
              "INSERT INTO rows (run_id, seq, provider, spec_key, status, median_us, json) "
              "VALUES (?1, (SELECT COUNT(*) FROM rows WHERE run_id = ?1), ?2, ?3, ?4, ?5, ?6)");
  s.bind(1, run_id)
      .bind(2, row.provider)
      .bind(3, row.spec.key())
      .bind(4, std::string(to_string(row.status)))
      .bind(5, row.timing.median_us)
      .bind(6, to_json_line(row));
  s.step();
  if (!row.env.empty()) {
    Statement f(impl_->db, impl_->path,
                "UPDATE runs SET fingerprint = ?2, device = CASE WHEN device = '' THEN ?3 ELSE "
                "device END WHERE id = ?1 AND fingerprint = ''");
    f.bind(1, run_id).bind(2, fingerprint_key(row.env)).bind(3, row.device);
    f.step();
  }
}

void History::finish_run(int64_t run_id, const std::string& stopped_by) {
  Statement s(impl_->db, impl_->path,
              "UPDATE runs SET finished_at = ?, stopped_by = ? WHERE id = ?");
  s.bind(1, utc_now_iso8601()).bind(2, stopped_by).bind(3, run_id);
  s.step();
}

std::vector<RunRecord> History::runs(int64_t limit) const {
  const std::string sql = std::string(kRunColumns) + "ORDER BY id DESC LIMIT ?";
  Statement s(impl_->db, impl_->path, sql.c_str());
  s.bind(1, limit > 0 ? limit : int64_t{-1});
  std::vector<RunRecord> out;
  while (s.step()) out.push_back(read_run(s));
  return out;
}

std::optional<int64_t> History::latest_run() const {
  Statement s(impl_->db, impl_->path, "SELECT MAX(id) FROM runs");
  s.step();
  const int64_t id = s.integer(0);
  return id > 0 ? std::optional<int64_t>(id) : std::nullopt;
}

RunRecord History::run(int64_t id) const {
  const std::string sql = std::string(kRunColumns) + "WHERE id = ?";
  Statement s(impl_->db, impl_->path, sql.c_str());
  s.bind(1, id);
  if (s.step()) return read_run(s);
  Statement range(impl_->db, impl_->path, "SELECT MIN(id), MAX(id), COUNT(*) FROM runs");
  range.step();
  throw std::invalid_argument(
      range.integer(2) == 0
          ? fmt::format("no run {} in {} (it holds no runs)", id, impl_->path.string())
          : fmt::format("no run {} in {} (runs {}..{}; see `attnprof history`)", id,
                        impl_->path.string(), range.integer(0), range.integer(1)));
}

std::vector<Result> History::rows(int64_t run_id) const {
  (void)run(run_id);  // an unknown id is an error, not an empty run
  Statement s(impl_->db, impl_->path, "SELECT seq, json FROM rows WHERE run_id = ? ORDER BY seq");
  s.bind(1, run_id);
  std::vector<Result> out;
  while (s.step()) {
    try {
      out.push_back(from_json_line(s.text(1)));
    } catch (const std::exception& e) {
      throw HistoryError(fmt::format("history {}, run {} row {}: {}", impl_->path.string(), run_id,
                                     s.integer(0), e.what()));
    }
  }
  return out;
}

std::filesystem::path default_history_path() {
  if (const char* p = std::getenv("ATTNPROF_HISTORY"); p && *p) return p;
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x) {
    return std::filesystem::path(x) / "attnprof" / "history.sqlite";
  }
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : ".") / ".local" / "share" / "attnprof" /
         "history.sqlite";
}

std::filesystem::path history_path(const std::string& option) {
  return option.empty() ? default_history_path() : std::filesystem::path(option);
}

}  // namespace attnprof
