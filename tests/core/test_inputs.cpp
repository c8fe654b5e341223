// Input generation (include/attnprof/inputs.hpp): the fp16 rounding against GCC's _Float16
// (IEEE round to nearest even in libgcc/F16C), the bf16 rounding against an independent
// nearest-neighbour rounding in double, the distribution of random_normal, and determinism.
#include "attnprof/inputs.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace attnprof {
namespace {

uint16_t gcc_fp16_bits(float f) {
  const _Float16 h = static_cast<_Float16>(f);
  uint16_t b;
  std::memcpy(&b, &h, sizeof b);
  return b;
}

float gcc_fp16_to_float(uint16_t b) {
  _Float16 h;
  std::memcpy(&h, &b, sizeof h);
  return static_cast<float>(h);
}

bool is_nan_fp16(uint16_t b) {
  return (b & 0x7C00u) == 0x7C00u && (b & 0x3FFu) != 0;
}

void expect_fp16_matches(float f) {
  const uint16_t got = float_to_fp16_bits(f);
  const uint16_t want = gcc_fp16_bits(f);
  if (std::isnan(f)) {
    EXPECT_TRUE(is_nan_fp16(got)) << std::hex << float_to_bits(f);
    return;
  }
  EXPECT_EQ(got, want) << "float bits 0x" << std::hex << float_to_bits(f) << " (" << f << ")";
}

TEST(Inputs, Fp16DecodeMatchesGccForEveryHalf) {
  for (uint32_t b = 0; b < 0x10000u; ++b) {
    const uint16_t h = static_cast<uint16_t>(b);
    const float got = fp16_bits_to_float(h);
    const float want = gcc_fp16_to_float(h);
    if (is_nan_fp16(h)) {
      EXPECT_TRUE(std::isnan(got)) << std::hex << b;
    } else {
      EXPECT_EQ(float_to_bits(got), float_to_bits(want)) << std::hex << b;
    }
  }
}

TEST(Inputs, Fp16RoundingMatchesGccAtEveryHalfAndEveryTie) {
  // Every half value, every midpoint between neighbouring halves (the ties, subnormal ones
  // included) and the floats one ulp either side of each midpoint, both signs; the top
  // midpoint 65520 is the tie that must overflow to infinity.
  for (uint32_t b = 0; b < 0x7C00u; ++b) {
    const float lo = fp16_bits_to_float(static_cast<uint16_t>(b));
    const float hi = b + 1 < 0x7C00u ? fp16_bits_to_float(static_cast<uint16_t>(b + 1)) : 65536.0f;
    const float mid = static_cast<float>((double(lo) + double(hi)) / 2);  // exact in float
    for (float f : {lo, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f)}) {
      expect_fp16_matches(f);
      expect_fp16_matches(-f);
    }
  }
  EXPECT_EQ(float_to_fp16_bits(65520.0f), 0x7C00u);
  EXPECT_EQ(float_to_fp16_bits(std::nextafter(65520.0f, 0.0f)), 0x7BFFu);
  EXPECT_EQ(float_to_fp16_bits(5.9604644775390625e-8f / 2), 0x0000u);     // tie to even: zero
  EXPECT_EQ(float_to_fp16_bits(5.9604644775390625e-8f * 1.5f), 0x0002u);  // tie to even: 2
}

TEST(Inputs, Fp16RoundingMatchesGccOnAStrideOfAllFloats) {
  // A stride coprime with 2^32 visits every exponent and many mantissas: tiny values that
  // flush to zero, subnormals, normals, overflow, infinities and NaNs.
  uint32_t b = 0;
  for (int n = 0; n < 2000000; ++n) {
    b += 2147;
    expect_fp16_matches(bits_to_float(b));
  }
  expect_fp16_matches(std::numeric_limits<float>::infinity());
  expect_fp16_matches(-std::numeric_limits<float>::infinity());
  expect_fp16_matches(std::numeric_limits<float>::max());
  expect_fp16_matches(std::numeric_limits<float>::denorm_min());
}

// bf16 rounding written differently: take the two bf16 neighbours of f (truncation and the
// next one up in magnitude) and pick the nearer in double, the even one on a tie.
uint16_t nearest_bf16(float f) {
  const uint32_t u = float_to_bits(f);
  const uint16_t down = static_cast<uint16_t>(u >> 16);
  const uint16_t up = static_cast<uint16_t>(down + 1);
  const double x = std::fabs(double(f));
  const double a = std::fabs(double(bf16_bits_to_float(down)));
  // Above the largest finite bf16 the next "neighbour" is 2^128 as if the exponent were
  // unbounded: IEEE rounds to infinity exactly when that is nearer (or the even tie).
  const bool up_is_inf = (up & 0x7FFFu) == 0x7F80u;
  const double bv = up_is_inf ? std::ldexp(1.0, 128) : std::fabs(double(bf16_bits_to_float(up)));
  const double da = x - a, db = bv - x;
  if (da < db) return down;
  if (db < da) return up;
  return (down & 1u) ? up : down;
}

TEST(Inputs, Bf16RoundsToNearestEven) {
  // Ties: 1 + 2^-8 lies halfway between 1 (even) and 1 + 2^-7 (odd): down to 1.
  EXPECT_EQ(float_to_bf16_bits(1.0f + 0x1p-8f), 0x3F80u);
  // 1 + 3*2^-8 lies halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even): up.
  EXPECT_EQ(float_to_bf16_bits(1.0f + 3 * 0x1p-8f), 0x3F82u);
  EXPECT_EQ(float_to_bf16_bits(-(1.0f + 3 * 0x1p-8f)), 0xBF82u);
  // Just above a tie rounds up, just below rounds down.
  EXPECT_EQ(float_to_bf16_bits(std::nextafter(1.0f + 0x1p-8f, 2.0f)), 0x3F81u);
  EXPECT_EQ(float_to_bf16_bits(std::nextafter(1.0f + 3 * 0x1p-8f, 0.0f)), 0x3F81u);
  // The largest float rounds to infinity; infinity stays; a NaN with only low payload bits
  // stays a NaN (plain rounding would turn it into infinity).
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::max()), 0x7F80u);
  EXPECT_EQ(float_to_bf16_bits(-std::numeric_limits<float>::infinity()), 0xFF80u);
  const uint16_t nan = float_to_bf16_bits(bits_to_float(0x7F800001u));
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(nan)));
  uint32_t b = 0;
  for (int n = 0; n < 2000000; ++n) {
    b += 2147;
    const float f = bits_to_float(b);
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_bf16_bits(f), nearest_bf16(f)) << std::hex << b;
  }
}

TEST(Inputs, RoundToDtypeIsIdempotentAndExactForFp32) {
  uint32_t b = 0x3F000000u;
  for (int n = 0; n < 10000; ++n, b += 7919) {
    const float f = bits_to_float(b);
    EXPECT_EQ(float_to_bits(round_to_dtype(f, 0)), float_to_bits(f));
    for (int code : {1, 2}) {
      const float r = round_to_dtype(f, code);
      EXPECT_EQ(float_to_bits(round_to_dtype(r, code)), float_to_bits(r));
    }
  }
}

TEST(Inputs, RandomNormalHasUnitMomentsAndBoundedSupport) {
  const int n = 1000000;
  double sum = 0, sum2 = 0, max_abs = 0;
  for (int i = 0; i < n; ++i) {
    const double x = random_normal(1234, 0, uint64_t(i));
    sum += x;
    sum2 += x * x;
    max_abs = std::max(max_abs, std::fabs(x));
  }
  const double mean = sum / n;
  const double sd = std::sqrt(sum2 / n - mean * mean);
  // Standard errors over 1e6 samples: mean 1e-3, sd ~7e-4; 5e-3 is 5-7 standard errors.
  EXPECT_NEAR(mean, 0.0, 5e-3);
  EXPECT_NEAR(sd, 1.0, 5e-3);
  EXPECT_LE(max_abs, 2 * std::sqrt(3.0) + 1e-6);  // Irwin-Hall of four: at most sqrt(12) sd
  EXPECT_GT(max_abs, 3.0);                        // but the tails are there
}

TEST(Inputs, ValuesAreDeterministicAndDependOnSeedTensorAndIndex) {
  int same_seed_diff = 0, other_seed_same = 0, other_tensor_same = 0, zeros = 0;
  for (uint64_t i = 0; i < 10000; ++i) {
    const float a = input_value(InputPattern::random, 99, TensorId::k, i, 1, 0, 0);
    const float b = input_value(InputPattern::random, 99, TensorId::k, i, 1, 0, 0);
    same_seed_diff += float_to_bits(a) != float_to_bits(b);
    other_seed_same += a == input_value(InputPattern::random, 100, TensorId::k, i, 1, 0, 0);
    other_tensor_same += a == input_value(InputPattern::random, 99, TensorId::v, i, 1, 0, 0);
    zeros += a == 0.0f;
    // The fp16 value is the fp16 rounding of the fp32 value.
    EXPECT_EQ(a, round_to_dtype(random_normal(99, uint32_t(TensorId::k), i), 1));
  }
  EXPECT_EQ(same_seed_diff, 0);
  // Coincidences happen only by fp16 rounding collisions: rare, not systematic.
  EXPECT_LT(other_seed_same, 100);
  EXPECT_LT(other_tensor_same, 100);
  EXPECT_LT(zeros, 10);
}

TEST(Inputs, MaskCoverageEncodesTheKeyIndex) {
  EXPECT_EQ(input_value(InputPattern::mask_coverage, 5, TensorId::q, 17, 1, 3, 0), 0.0f);
  EXPECT_EQ(input_value(InputPattern::mask_coverage, 5, TensorId::v, 17, 2, 200, 0), 200 % 64);
  EXPECT_EQ(input_value(InputPattern::mask_coverage, 5, TensorId::v, 17, 2, 200, 1), 200 / 64);
  EXPECT_EQ(input_value(InputPattern::mask_coverage, 5, TensorId::v, 17, 2, 200, 5), 200 % 7);
  // K and dO stay random under the coverage pattern.
  EXPECT_EQ(input_value(InputPattern::mask_coverage, 5, TensorId::k, 17, 0, 3, 0),
            random_normal(5, uint32_t(TensorId::k), 17));
}

// --- fp8 ---------------------------------------------------------------------------------

// The value of an fp8 code from its definition (OCP 8-bit floating point): sign, a biased exponent
// and a mantissa with an implicit one, or a subnormal; written independently of inputs.hpp.
double fp8_value(int code, int format) {
  const int m = format == 0 ? 3 : 2, bias = format == 0 ? 7 : 15;
  const int e = (code & 0x7F) >> m, f = code & ((1 << m) - 1);
  const double sign = (code & 0x80) ? -1.0 : 1.0;
  if (e == 0) return sign * std::ldexp(double(f), 1 - bias - m);
  return sign * std::ldexp(double((1 << m) + f), e - bias - m);
}
bool fp8_is_special(int code, int format) {
  return format == 0 ? (code & 0x7F) == 0x7F : ((code & 0x7F) >> 2) == 31;
}

TEST(Inputs, Fp8CodesDecodeToTheirDefinition) {
  for (int format : {0, 1}) {
    for (int code = 0; code < 256; ++code) {
      const float got = fp8_bits_to_float(uint8_t(code), format);
      if (fp8_is_special(code, format)) {
        if (format == 0 || (code & 3) != 0) {
          EXPECT_TRUE(std::isnan(got)) << format << " " << code;
        } else {
          EXPECT_TRUE(std::isinf(got)) << format << " " << code;
        }
        continue;
      }
      EXPECT_EQ(double(got), fp8_value(code, format)) << format << " code " << code;
      // Every finite code is its own rounding (negative zero included).
      EXPECT_EQ(float_to_fp8_bits(got, format), code) << format << " code " << code;
    }
  }
  EXPECT_EQ(fp8_bits_to_float(0x7E, 0), 448.0f);
  EXPECT_EQ(fp8_bits_to_float(0x38, 0), 1.0f);
  EXPECT_EQ(fp8_bits_to_float(0x01, 0), std::ldexp(1.0f, -9));
  EXPECT_EQ(fp8_bits_to_float(0x7B, 1), 57344.0f);
  EXPECT_EQ(fp8_bits_to_float(0x3C, 1), 1.0f);
  EXPECT_EQ(fp8_bits_to_float(0x01, 1), std::ldexp(1.0f, -16));
}

// Between two neighbouring codes every float rounds to the nearer, ties to the even code; beyond
// the largest finite value it saturates; NaN stays NaN.
TEST(Inputs, Fp8RoundsToNearestEvenAndSaturates) {
  for (int format : {0, 1}) {
    const int top = format == 0 ? 0x7E : 0x7B;
    for (int code = 0; code < top; ++code) {
      const double lo = fp8_value(code, format), hi = fp8_value(code + 1, format);
      const double mid = (lo + hi) / 2;
      const int even = (code & 1) == 0 ? code : code + 1;
      EXPECT_EQ(float_to_fp8_bits(float(mid), format), even) << format << " tie above " << code;
      EXPECT_EQ(float_to_fp8_bits(std::nextafter(float(mid), 0.0f), format), code);
      EXPECT_EQ(float_to_fp8_bits(std::nextafter(float(mid), 1e9f), format), code + 1);
      EXPECT_EQ(float_to_fp8_bits(float(-mid), format), 0x80 | even);
    }
    const float max = fp8_bits_to_float(uint8_t(top), format);
    EXPECT_EQ(float_to_fp8_bits(max * 1.06f, format), top);
    EXPECT_EQ(float_to_fp8_bits(1e30f, format), top);
    EXPECT_EQ(float_to_fp8_bits(-std::numeric_limits<float>::infinity(), format), 0x80 | top);
    EXPECT_TRUE(std::isnan(fp8_bits_to_float(
        float_to_fp8_bits(std::numeric_limits<float>::quiet_NaN(), format), format)));
    // Far below the least subnormal: zero, signed.
    EXPECT_EQ(float_to_fp8_bits(1e-30f, format), 0);
    EXPECT_EQ(float_to_fp8_bits(-1e-30f, format), 0x80);
  }
}

// An fp8 input's value is the real value its scaled code holds: idempotent, within half an fp8
// unit of the fp32 value (relative 2^-4 for e4m3, 2^-3 for e5m2, inputs being normal after
// scaling), and zero only where the value is below half the least subnormal (|x| < 1.5e-5 in
// e4m3: about 1 in 80,000 inputs).
TEST(Inputs, Fp8InputsAreTheScaledCodesValues) {
  for (int code : {3, 4}) {
    const int format = code - 3;
    const double u = format == 0 ? 1.0 / 16 : 1.0 / 8;
    double worst = 0;
    int zeros = 0;
    for (uint64_t i = 0; i < 100000; ++i) {
      const float x = random_normal(5, uint32_t(TensorId::q), i);
      const float v = input_value(InputPattern::random, 5, TensorId::q, i, code, 0, 0);
      EXPECT_EQ(float_to_bits(round_to_dtype(v, code)), float_to_bits(v));
      if (v == 0.0f) {  // below half the least subnormal's real value: 1.2e-4 in e4m3
        ++zeros;
        EXPECT_LE(std::fabs(x), 0.5f * fp8_bits_to_float(1, format) / fp8_tensor_scale(format))
            << i;
        continue;
      }
      const float scaled = v * fp8_tensor_scale(format);
      EXPECT_EQ(double(scaled),
                double(fp8_bits_to_float(float_to_fp8_bits(scaled, format), format)));
      if (std::fabs(x) > 0.01) worst = std::max(worst, std::fabs(double(v) - x) / std::fabs(x));
    }
    // P(|x| < 1.2e-4) ~ 1e-4 for a standard normal: ~10 zeros in e4m3, none in e5m2.
    EXPECT_LE(zeros, 30) << "format " << format;
    EXPECT_LE(worst, u) << "format " << format;
    EXPECT_GT(worst, u / 4) << "format " << format;  // the rounding is there
  }
}

}  // namespace
}  // namespace attnprof
