// Reading a journal (run --resume, report, compare): rows back as written, a partial last row
// from a killed writer dropped with a warning, everything else refused with one line naming the
// line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "attnprof/journal.hpp"
#include "attnprof/sink.hpp"

namespace attnprof {
namespace {

namespace fs = std::filesystem;

Result row(int64_t q_len) {
  Result r;
  r.provider = "cpu.naive";
  r.spec.q_len = r.spec.kv_len = q_len;
  r.status = Status::passed;
  r.env = {{"git_commit", "abc"}};
  return r;
}

class JournalFile : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() /
            ("attnprof_journal_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".jsonl");
  }
  void TearDown() override { fs::remove(path_); }
  void write(const std::string& text) { std::ofstream(path_, std::ios::binary) << text; }
  std::string line(int64_t q_len) { return to_json_line(row(q_len)) + "\n"; }
  std::string refusal() {
    try {
      read_journal(path_);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  }
  fs::path path_;
};

TEST_F(JournalFile, RowsComeBackInOrder) {
  write(line(16) + "\n" + line(32));
  const JournalRows j = read_journal(path_);
  ASSERT_EQ(j.rows.size(), 2u);
  EXPECT_EQ(j.rows[0].spec.q_len, 16);
  EXPECT_EQ(j.rows[1].spec.q_len, 32);
  EXPECT_TRUE(j.warning.empty());
}

TEST_F(JournalFile, AMissingJournalIsAnError) {
  EXPECT_EQ(refusal().rfind("cannot open journal " + path_.string() + ": ", 0), 0u) << refusal();
}

TEST_F(JournalFile, APartialLastRowIsDroppedWithAWarning) {
  const std::string cut = line(64).substr(0, 57);  // a write(2) cut short by kill -9
  write(line(16) + line(32) + cut);
  const JournalRows j = read_journal(path_);
  ASSERT_EQ(j.rows.size(), 2u);
  EXPECT_NE(j.warning.find("line 3"), std::string::npos) << j.warning;
  EXPECT_NE(j.warning.find("partial last row (57 bytes"), std::string::npos) << j.warning;
}

TEST_F(JournalFile, ACompleteLastRowWithoutItsNewlineIsKept) {
  const std::string last = line(64);
  write(line(16) + last.substr(0, last.size() - 1));
  const JournalRows j = read_journal(path_);
  ASSERT_EQ(j.rows.size(), 2u);
  EXPECT_TRUE(j.warning.empty());
}

TEST_F(JournalFile, AnotherSchemaVersionIsRefused) {
  std::string other = line(32);
  other.replace(other.find("\"schema_version\":3"), 18, "\"schema_version\":4");
  write(line(16) + other);
  const std::string why = refusal();
  EXPECT_NE(why.find("line 2"), std::string::npos) << why;
  EXPECT_NE(why.find("schema_version 4, this build reads 1 to 3"), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos);
}

TEST_F(JournalFile, ACorruptRowBeforeTheEndIsRefused) {
  write(line(16) + line(32).substr(0, 40) + "\n" + line(64));
  const std::string why = refusal();
  EXPECT_NE(why.find("line 2: malformed journal line"), std::string::npos) << why;
}

TEST_F(JournalFile, AForeignFileIsRefusedEvenOnItsLastLine) {
  // Not a beginning of one of our rows: not ours to drop, even without a newline.
  write("provider,status\ncpu.naive,passed");
  EXPECT_NE(refusal().find("line 1"), std::string::npos);
  write("hello");
  EXPECT_NE(refusal().find("line 1"), std::string::npos);
  write(line(16) + "{\"schema_version\":4,\"provider\":\"x");
  EXPECT_NE(refusal().find("line 2"), std::string::npos);
}

}  // namespace
}  // namespace attnprof
