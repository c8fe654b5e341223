#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <zlib.h>

#include "attnprof/journal.hpp"
#include "attnprof/sink.hpp"
#include "report/fixtures.hpp"

namespace attnprof {
namespace {

class JsonlSink : public ::testing::Test {
 protected:
  std::filesystem::path path_ =
      std::filesystem::path(::testing::TempDir()) /
      (std::string("attnprof_sink_") +
       ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".jsonl");
  void TearDown() override { std::filesystem::remove(path_); }

  void write_rows(bool append, std::size_t first, std::size_t count) {
    const auto rows = test::sample_results();
    auto sink = make_jsonl_sink(path_, append);
    sink->begin(static_cast<int64_t>(count));
    for (std::size_t i = first; i < first + count; ++i) sink->write(rows[i]);
    sink->end();
  }
  std::vector<std::string> providers() {
    std::vector<std::string> out;
    for (const Result& r : read_journal(path_).rows) out.push_back(r.provider);
    return out;
  }
};

TEST_F(JsonlSink, EachRowIsOnDiskOnceWritten) {
  const auto rows = test::sample_results();
  auto sink = make_jsonl_sink(path_, false);
  sink->begin(2);
  sink->write(rows[0]);
  // No end(), no destructor: a killed sweep must still leave the finished row readable.
  EXPECT_EQ(test::read_text(path_), to_json_line(rows[0]) + "\n");
  sink->write(rows[1]);
  EXPECT_EQ(test::read_text(path_), to_json_line(rows[0]) + "\n" + to_json_line(rows[1]) + "\n");
}

// A journal kept compressed (`gzip rows.jsonl`, as bench/results keeps the large ones) reads back
// as the same rows; a damaged one is refused naming the file.
TEST_F(JsonlSink, AGzippedJournalReadsAsTheSameRows) {
  write_rows(false, 0, 3);
  const std::filesystem::path gz = path_.string() + ".gz";
  gzFile out = gzopen(gz.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  const std::string text = test::read_text(path_);
  ASSERT_EQ(gzwrite(out, text.data(), static_cast<unsigned>(text.size())), int(text.size()));
  gzclose(out);
  const JournalRows plain = read_journal(path_), packed = read_journal(gz);
  ASSERT_EQ(packed.rows.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_EQ(to_json_line(packed.rows[i]), to_json_line(plain.rows[i]));
  // A gzip stream cut short is refused.
  std::filesystem::resize_file(gz, std::filesystem::file_size(gz) / 2);
  EXPECT_THROW(read_journal(gz), std::runtime_error);
  std::filesystem::remove(gz);
}

TEST_F(JsonlSink, TruncateStartsOverAndAppendKeeps) {
  write_rows(false, 0, 2);
  write_rows(true, 2, 1);
  EXPECT_EQ(providers(), (std::vector<std::string>{"cpu.flash", "cuda.flash2", "cudnn.sdpa"}));
  write_rows(false, 3, 1);
  EXPECT_EQ(providers(), (std::vector<std::string>{"cuda.naive"}));
}

TEST_F(JsonlSink, AppendCutsOffARowTruncatedByAKill) {
  write_rows(false, 0, 1);
  const std::string partial = to_json_line(test::sample_results()[1]);
  test::write_text(path_, test::read_text(path_) + partial.substr(0, 40));
  write_rows(true, 2, 1);
  EXPECT_EQ(providers(), (std::vector<std::string>{"cpu.flash", "cudnn.sdpa"}));
}

TEST_F(JsonlSink, AppendTerminatesACompleteRowMissingItsNewline) {
  const auto rows = test::sample_results();
  test::write_text(path_, to_json_line(rows[0]));
  write_rows(true, 1, 1);
  EXPECT_EQ(providers(), (std::vector<std::string>{"cpu.flash", "cuda.flash2"}));
}

TEST_F(JsonlSink, AppendCreatesAMissingFile) {
  write_rows(true, 0, 1);
  EXPECT_EQ(providers(), (std::vector<std::string>{"cpu.flash"}));
}

TEST_F(JsonlSink, UnwritablePathThrowsNamingIt) {
  const auto bad = path_ / "no" / "such" / "dir.jsonl";
  try {
    (void)make_jsonl_sink(bad, false);
    FAIL() << "opening " << bad << " must throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(bad.string()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace attnprof
