#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "attnprof/parse_units.hpp"

namespace attnprof {
namespace {

TEST(ParseUnits, Sizes) {
  EXPECT_EQ(parse_bytes("512MiB"), 512ll << 20);
  EXPECT_EQ(parse_bytes("16GiB"), 16ll << 30);
  EXPECT_EQ(parse_bytes("1.5GB"), 1500000000ll);
  EXPECT_EQ(parse_bytes("4096B"), 4096);
  // A bare number is refused, naming the units (`--max-memory 40` was once read as 40 bytes).
  try {
    (void)parse_bytes("40");
    ADD_FAILURE() << "a bare size was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("has no unit (allowed: a number with B, KB"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(parse_bytes("12XB"), std::invalid_argument);
  EXPECT_THROW(parse_bytes("GiB"), std::invalid_argument);
  EXPECT_THROW(parse_bytes("-1GiB"), std::invalid_argument);
}

TEST(ParseUnits, Times) {
  EXPECT_DOUBLE_EQ(parse_seconds("250us"), 250e-6);
  EXPECT_DOUBLE_EQ(parse_seconds("50ms"), 0.05);
  EXPECT_DOUBLE_EQ(parse_seconds("2s"), 2);
  // A bare number is refused (`--p95 20` was once read as 20 s).
  EXPECT_THROW(parse_seconds("2"), std::invalid_argument);
  EXPECT_THROW(parse_seconds("0.1"), std::invalid_argument);
  EXPECT_DOUBLE_EQ(parse_seconds("1.5min"), 90);
  EXPECT_THROW(parse_seconds("2h"), std::invalid_argument);
  EXPECT_THROW(parse_seconds("fast"), std::invalid_argument);
}

}  // namespace
}  // namespace attnprof
