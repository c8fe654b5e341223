#include <cmath>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "attnprof/sink.hpp"
#include "report/console.hpp"
#include "report/fixtures.hpp"
#include "report/units.hpp"

namespace attnprof {
namespace {

// A clock the test moves by hand.
struct FakeClock {
  double now = 1000;
  SecondsClock fn() {
    return [this] { return now; };
  }
};

TEST(Console, PassedRowShowsEveryColumnInHumanUnits) {
  const auto rows = test::sample_results();
  EXPECT_EQ(console_row(rows[0]),
            "cpu.flash         B1 H12 N2048 D64 fp32 causal fwd               passed          "
            "48.2 ms   49.9 ms    0.134   0.522   2.00 MiB  3.1e-07");
  // Noisy medians carry a '~'.
  EXPECT_EQ(console_row(rows[1]),
            "cuda.flash2       B2 H32/8 Nq512 Nk4096 D128 bf16 causal-br fwd  passed         "
            "~85.2 µs   91.5 µs      756     590   1.00 MiB  2.1e-03");
}

TEST(Console, HeaderColumnsLineUpWithRows) {
  const std::string header = console_header();
  const std::string row = console_row(test::sample_results()[0]);
  // Right-aligned columns end where their header ends.
  for (const char* title : {"median", "p95", "TFLOP/s", "GB/s", "extra mem", "rel err"}) {
    const std::size_t end = header.find(title) + std::string(title).size();
    EXPECT_NE(row[end - 1], ' ') << title;
    EXPECT_TRUE(end == row.size() || row[end] == ' ') << title;
  }
  EXPECT_EQ(display_width(header), display_width(row));
}

TEST(Console, NonPassedRowShowsItsReasonTruncatedToFit) {
  Result r = test::sample_results()[2];
  EXPECT_EQ(console_row(r),
            "cudnn.sdpa        B4 H16 N1024 D96 fp16 none fwd                 not_supported  "
            "head_dim 96 not supported, needs \"64\" or \"128\"");
  r.reason = std::string(300, 'x');
  const std::string row = console_row(r);
  EXPECT_EQ(display_width(row), display_width(console_header()));
  EXPECT_EQ(row.substr(row.size() - std::string("x…").size()), "x…");
  // A reason with line breaks stays on its row.
  EXPECT_EQ(console_row(test::sample_results()[5]).find('\n'), std::string::npos);
}

TEST(Console, PlainOutputMatchesGoldenFile) {
  FakeClock clock;
  std::ostringstream os;
  auto sink = make_console_sink(os, false, clock.fn());
  const auto rows = test::sample_results();
  sink->begin(static_cast<int64_t>(rows.size()));
  for (const Result& r : rows) {
    sink->begin_point(r.provider, r.spec);  // draws nothing without a tty
    clock.now += 7.5;
    sink->write(r);
  }
  sink->end();
  EXPECT_EQ(os.str().find('\r'), std::string::npos);
  test::expect_golden("console_plain.txt", os.str());
}

TEST(Console, TtyRedrawsAProgressLineWithEta) {
  FakeClock clock;
  std::ostringstream os;
  auto sink = make_console_sink(os, true, clock.fn());
  const auto rows = test::sample_results();
  sink->begin(3);
  const std::string header = console_header() + "\n";
  EXPECT_EQ(os.str(), header);

  sink->begin_point(rows[0].provider, rows[0].spec);
  const std::string first = "[1/3] ETA --:--  cpu.flash B1 H12 N2048 D64 fp32 causal fwd";
  EXPECT_EQ(os.str(), header + "\r" + first);

  clock.now += 20;  // 20 s per point: two left -> 00:40
  sink->write(rows[0]);
  const std::string row0 = console_row(rows[0]) + "\n";
  const std::string after = "[1/3] ETA 00:40";
  EXPECT_EQ(os.str(), header + "\r" + first + "\r" + row0 + "\r" + after);

  sink->begin_point(rows[1].provider, rows[1].spec);
  const std::string second =
      "[2/3] ETA 00:40  cuda.flash2 B2 H32/8 Nq512 Nk4096 D128 bf16 "
      "causal-br fwd";
  EXPECT_EQ(os.str(), header + "\r" + first + "\r" + row0 + "\r" + after + "\r" + second);

  clock.now += 40;  // 30 s per point: one left -> 00:30
  os.str("");
  sink->write(rows[1]);
  EXPECT_EQ(os.str(), "\r" + console_row(rows[1]) + "\n\r[2/3] ETA 00:30");

  // A shorter progress line is padded over the longer one it replaces.
  os.str("");
  sink->begin_point("p", rows[2].spec);
  const std::string third = "[3/3] ETA 00:30  p B4 H16 N1024 D96 fp16 none fwd";
  EXPECT_EQ(os.str(), "\r" + third);

  clock.now += 30;
  os.str("");
  sink->write(rows[2]);
  sink->end();
  const std::string row2 = console_row(rows[2]);
  EXPECT_EQ(os.str(),
            "\r" + row2 + "\n" +
                "3 points in 01:30: 2 passed, 1 not_supported\n"
                "~ noisy: sampling stopped at its limit with too few samples or the noise "
                "above the bound (the row's stop_reason says which)\n");
}

TEST(Console, ProgressLineShorterThanThePreviousIsPadded) {
  FakeClock clock;
  std::ostringstream os;
  auto sink = make_console_sink(os, true, clock.fn());
  Spec spec = test::sample_results()[0].spec;
  sink->begin(5);
  os.str("");
  sink->begin_point("a.long.provider.name", spec);
  const std::size_t long_width = os.str().size() - 1;  // without the '\r'
  os.str("");
  sink->begin_point("p", spec);
  EXPECT_EQ(os.str().size() - 1, long_width);
  EXPECT_EQ(os.str().back(), ' ');
}

TEST(Console, ClockFormat) {
  EXPECT_EQ(format_clock(0), "00:00");
  EXPECT_EQ(format_clock(59.6), "01:00");
  EXPECT_EQ(format_clock(754), "12:34");
  EXPECT_EQ(format_clock(3599), "59:59");
  EXPECT_EQ(format_clock(3600), "1:00:00");
  EXPECT_EQ(format_clock(36000 + 61), "10:01:01");
  EXPECT_EQ(format_clock(-1), "--:--");
  EXPECT_EQ(format_clock(std::nan("")), "--:--");
}

}  // namespace
}  // namespace attnprof
