#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "report/units.hpp"

namespace attnprof {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(Units, ThreeSignificantDigits) {
  EXPECT_EQ(format_sig3(0), "0");
  EXPECT_EQ(format_sig3(1.234), "1.23");
  EXPECT_EQ(format_sig3(12.34), "12.3");
  EXPECT_EQ(format_sig3(123.4), "123");
  EXPECT_EQ(format_sig3(4812.4), "4812");
  EXPECT_EQ(format_sig3(0.001234), "0.00123");
  EXPECT_EQ(format_sig3(-5.678), "-5.68");
  EXPECT_EQ(format_sig3(9.996), "10.0");  // rounding carries into the next decade
  EXPECT_EQ(format_sig3(99.96), "100");
  EXPECT_EQ(format_sig3(1.5e-9), "1.50e-09");
  EXPECT_EQ(format_sig3(std::nan("")), "nan");
  EXPECT_EQ(format_sig3(-kInf), "-inf");
}

TEST(Units, Durations) {
  EXPECT_EQ(format_duration_us(0.85), "850 ns");
  EXPECT_EQ(format_duration_us(12.34), "12.3 µs");
  EXPECT_EQ(format_duration_us(999.4), "999 µs");
  EXPECT_EQ(format_duration_us(999.6), "1.00 ms");  // never "1000 µs"
  EXPECT_EQ(format_duration_us(0.9996), "1.00 µs");
  EXPECT_EQ(format_duration_us(1234.5), "1.23 ms");
  EXPECT_EQ(format_duration_us(2.45e6), "2.45 s");
  EXPECT_EQ(format_duration_us(125e6), "125 s");
  EXPECT_EQ(format_duration_us(0), "0 µs");
  EXPECT_EQ(format_duration_us(kInf), "inf");
}

TEST(Units, PowersNeverShowANegativeZero) {
  EXPECT_EQ(format_power(2.0), "N^2.00");
  EXPECT_EQ(format_power(0.524), "N^0.52");
  EXPECT_EQ(format_power(-1e-6), "N^0.00");
  EXPECT_EQ(format_power(-0.5), "N^-0.50");
}

TEST(Units, Bytes) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1024), "1.00 KiB");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(12.0 * 1024 * 1024), "12.0 MiB");
  EXPECT_EQ(format_bytes(1024.0 * 1024 * 1024 - 1), "1.00 GiB");
  EXPECT_EQ(format_bytes(140.0 * 1024 * 1024 * 1024), "140 GiB");
  EXPECT_EQ(format_bytes(3.0 * 1024 * 1024 * 1024 * 1024), "3.00 TiB");
  EXPECT_EQ(format_bytes(-1048576), "-1.00 MiB");
}

TEST(Units, Errors) {
  EXPECT_EQ(format_error(3.14159e-4), "3.1e-04");
  EXPECT_EQ(format_error(0), "0");
  EXPECT_EQ(format_error(std::nan("")), "nan");
}

TEST(Units, WidthCountsCodePointsAndTruncationKeepsThemWhole) {
  EXPECT_EQ(display_width("12.3 µs"), 7u);
  EXPECT_EQ(truncate_to_width("abcdef", 6), "abcdef");
  EXPECT_EQ(truncate_to_width("abcdefg", 6), "abcde…");
  EXPECT_EQ(truncate_to_width("µµµµµµµ", 4), "µµµ…");
  EXPECT_EQ(display_width(truncate_to_width("µµµµµµµ", 4)), 4u);
  EXPECT_EQ(truncate_to_width("abc", 0), "");
  EXPECT_EQ(one_line("a\nb\r\nc\td"), "a b  c d");
}

}  // namespace
}  // namespace attnprof
