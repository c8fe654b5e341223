// Seeded, counter-based input values shared bit-for-bit by host and device code.
//
// Every element of Q, K, V and dO is a pure function of (seed, tensor, flat index), so a GPU
// provider fills its buffers in a kernel, the verifier regenerates exactly the slices it needs
// on the host, and no multi-gigabyte host copy is ever made. Values are approximately standard
// normal (Irwin-Hall sum of four 21-bit uniforms, so bounded by +-3.46 sigma), never zeros (in
// fp8, about 1 in 80,000 e4m3 values rounds to zero), and
// already rounded to the point's dtype, so what the reference sees is what the provider saw (for
// fp8, the real value the scaled fp8 element holds).
// Bit-exactness across host and device: only integer arithmetic, one int->float conversion of an
// exactly representable integer and one correctly rounded multiply, then integer rounding to
// fp16/bf16 (round to nearest even).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__CUDACC__)
#define ATTNPROF_HD __host__ __device__ __forceinline__
#else
#define ATTNPROF_HD inline
#endif

namespace attnprof {

// sink: the per-query-head sink logits (Spec::sinks), fp32 whatever the dtype.
enum class TensorId : uint32_t { q = 0, k = 1, v = 2, d_o = 3, sink = 4 };

// Input patterns: random for measurement and verification; mask_coverage for the mask test
// (Q = 0 so every visible key gets equal weight; V encodes the key index, so each output is
// the mean of the visible key indices).
enum class InputPattern : uint32_t { random = 0, mask_coverage = 1 };

// How a point's inputs are generated: the seed and the pattern (every value a pure function of
// them, the tensor and the element's index).
struct InputFill {
  uint64_t seed = 0;
  InputPattern pattern = InputPattern::random;
};

ATTNPROF_HD uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// FNV-1a (64 bits) of `bytes`: a stable name for text or plain data (a cache key, the seed of a
// draw; not a security property).
inline uint64_t fnv1a(std::string_view bytes) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (const unsigned char c : bytes) h = (h ^ c) * 0x100000001B3ull;
  return h;
}

ATTNPROF_HD float bits_to_float(uint32_t u) {
  float f;
#if defined(__CUDA_ARCH__)
  f = __uint_as_float(u);
#else
  std::memcpy(&f, &u, sizeof f);
#endif
  return f;
}

ATTNPROF_HD uint32_t float_to_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

// Round-to-nearest-even float -> bf16 bits (NaN stays NaN).
ATTNPROF_HD uint16_t float_to_bf16_bits(float f) {
  uint32_t u = float_to_bits(f);
  if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x007FFFFFu)) return uint16_t((u >> 16) | 0x40u);
  uint32_t lsb = (u >> 16) & 1u;
  u += 0x7FFFu + lsb;
  return uint16_t(u >> 16);
}
ATTNPROF_HD float bf16_bits_to_float(uint16_t h) {
  return bits_to_float(uint32_t(h) << 16);
}

// Round-to-nearest-even float -> IEEE half bits, with subnormals, overflow to inf, NaN kept.
ATTNPROF_HD uint16_t float_to_fp16_bits(float f) {
  uint32_t u = float_to_bits(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t abs = u & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) return uint16_t(sign | 0x7C00u | (abs > 0x7F800000u ? 0x200u : 0u));
  if (abs >= 0x477FF000u) return uint16_t(sign | 0x7C00u);  // rounds past 65504: inf
  if (abs < 0x38800000u) {                                  // below 2^-14: subnormal or zero
    if (abs < 0x33000000u) return uint16_t(sign);           // below half the smallest subnormal
    uint32_t mant = (abs & 0x007FFFFFu) | 0x00800000u;
    // value = mant * 2^(exp - 150) and a half subnormal counts units of 2^-24, so the half's
    // bits are mant >> (126 - exp), rounded to nearest even.
    uint32_t drop = 126u - (abs >> 23);
    uint32_t half_bits = mant >> drop;
    uint32_t rem = mant & ((1u << drop) - 1u);
    uint32_t halfway = 1u << (drop - 1u);
    if (rem > halfway || (rem == halfway && (half_bits & 1u))) ++half_bits;
    return uint16_t(sign | half_bits);
  }
  uint32_t h = ((abs - 0x38000000u) >> 13);  // rebias exponent 127 -> 15
  uint32_t rem = abs & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return uint16_t(sign | h);
}

ATTNPROF_HD float fp16_bits_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  if (exp == 0) {
    if (mant == 0) return bits_to_float(sign);
    // subnormal: value = mant * 2^-24, exact in float
    float v = float(mant) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  if (exp == 31) return bits_to_float(sign | 0x7F800000u | (mant << 13));
  return bits_to_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

// The two OCP fp8 formats: e4m3 (4 exponent bits, bias 7, 3 mantissa bits, no infinity, NaN
// S.1111.111, largest finite 448) and e5m2 (5, bias 15, 2; IEEE-like infinities and NaNs, largest
// finite 57344). Format 0 is e4m3, 1 is e5m2.
ATTNPROF_HD int fp8_mant_bits(int format) {
  return format == 0 ? 3 : 2;
}
ATTNPROF_HD int fp8_bias(int format) {
  return format == 0 ? 7 : 15;
}
// The largest finite value's bits (sign clear).
ATTNPROF_HD uint8_t fp8_max_bits(int format) {
  return format == 0 ? 0x7Eu : 0x7Bu;
}

// Round-to-nearest-even float -> fp8 bits, saturating to the largest finite value (what
// "satfinite" conversions do); NaN stays NaN, infinities saturate. Integer arithmetic only.
ATTNPROF_HD uint8_t float_to_fp8_bits(float f, int format) {
  const uint32_t u = float_to_bits(f);
  const uint8_t sign = uint8_t((u >> 24) & 0x80u);
  const uint32_t abs = u & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return uint8_t(sign | 0x7Fu);  // NaN in both formats
  const int m = fp8_mant_bits(format), bias = fp8_bias(format);
  if ((abs >> 23) == 0) return sign;  // zero or an fp32 subnormal: far below half the least fp8
  const int exp = int(abs >> 23) - 127;
  if (exp > 16) return uint8_t(sign | fp8_max_bits(format));  // beyond both formats' range
  const int emin = 1 - bias;                                  // the least normal exponent
  const int qexp = (exp < emin ? emin : exp) - m;             // exponent of the last kept bit
  const int shift = 23 + qexp - exp;                          // >= 23 - m
  if (shift > 25) return sign;                                // below half the least subnormal
  const uint32_t mant = (abs & 0x007FFFFFu) | 0x00800000u;
  uint32_t n = mant >> shift;
  const uint32_t rem = mant & ((1u << shift) - 1u), halfway = 1u << (shift - 1);
  if (rem > halfway || (rem == halfway && (n & 1u))) ++n;
  // value = n * 2^qexp. Subnormals encode n itself (n == 2^m is the least normal); normals the
  // biased exponent and n's fraction, a carry into the next binade adding itself.
  uint32_t bits = exp < emin ? n : (uint32_t(exp + bias) << m) + (n - (1u << m));
  if (bits > fp8_max_bits(format)) bits = fp8_max_bits(format);
  return uint8_t(sign | bits);
}

ATTNPROF_HD float fp8_bits_to_float(uint8_t b, int format) {
  const int m = fp8_mant_bits(format), bias = fp8_bias(format);
  const uint32_t sign = uint32_t(b & 0x80u) << 24;
  const uint32_t e = (b & 0x7Fu) >> m, mant = b & ((1u << m) - 1u);
  if (format == 0 && (b & 0x7Fu) == 0x7Fu) return bits_to_float(0x7FC00000u);
  if (format == 1 && e == 31u) return bits_to_float(mant ? 0x7FC00000u : (sign | 0x7F800000u));
  if (e == 0) {  // subnormal: mant * 2^(1 - bias - m), exact in float
    const float v = float(mant) * bits_to_float(uint32_t(127 + 1 - bias - m) << 23);
    return sign ? -v : v;
  }
  return bits_to_float(sign | ((e - uint32_t(bias) + 127u) << 23) | (mant << (23 - m)));
}

// fp8 tensors carry a per-tensor scale: the stored value is the real value times the tensor's
// scale. The harness fixes it per format, a power of two (so scaling is exact), the same for
// every fp8 tensor of a point: Q, K, V and dO (the generator's largest |x| < 3.47), O (|O| <=
// max |V|) and, in backward modes, dQ, dK and dV. The gradients set it: dV sums P^T dO over a GQA
// group's query heads and reached 15.6 at 64/8 heads, N 16k causal on the H200 (cuDNN's amax,
// bench/results/h200/2026-12-02-fp8-backward), past the 7.0 a scale of 2^6 leaves e4m3. 2^3 for
// e4m3 and 2^10 for e5m2 put 56 at the format's largest value (448; 57,344) and the inputs at
// 27.8 and 3,553. Providers get 1 / scale as the "descale" of each input and the scale of each
// output.
ATTNPROF_HD float fp8_tensor_scale(int format) {
  return format == 0 ? 8.0f : 1024.0f;
}

// An fp8 tensor's code for the real value x (x times the tensor's scale, rounded), and the real
// value a code holds (the code's value over the scale; both scalings exact).
ATTNPROF_HD uint8_t scaled_fp8_code(float x, int format) {
  return float_to_fp8_bits(x * fp8_tensor_scale(format), format);
}
ATTNPROF_HD float scaled_fp8_value(uint8_t code, int format) {
  return fp8_bits_to_float(code, format) * (1.0f / fp8_tensor_scale(format));
}

// dtype code: 0 = fp32, 1 = fp16, 2 = bf16, 3 = fp8 e4m3, 4 = fp8 e5m2 (matches DType's order).
// For fp8 the result is the real value an fp8 tensor holds: x scaled, rounded to the format,
// scaled back (both scalings exact).
ATTNPROF_HD float round_to_dtype(float x, int dtype_code) {
  if (dtype_code == 1) return fp16_bits_to_float(float_to_fp16_bits(x));
  if (dtype_code == 2) return bf16_bits_to_float(float_to_bf16_bits(x));
  if (dtype_code == 3 || dtype_code == 4) {
    const int format = dtype_code - 3;
    return scaled_fp8_value(scaled_fp8_code(x, format), format);
  }
  return x;
}

// Approximately N(0, 1): (sum of four 21-bit uniforms - mean) / sd. The integer sum is exact,
// its conversion to float is exact (|x| < 2^23), and one multiply rounds once.
ATTNPROF_HD float random_normal(uint64_t seed, uint32_t tensor, uint64_t index) {
  uint64_t a = splitmix64(seed ^ (uint64_t(tensor) << 56) ^ (index * 2u));
  uint64_t b = splitmix64(a ^ 0xD1B54A32D192ED03ull ^ (index * 2u + 1u));
  const uint64_t m = (1u << 21) - 1u;
  int64_t sum = int64_t(a & m) + int64_t((a >> 21) & m) + int64_t(b & m) + int64_t((b >> 21) & m);
  int64_t centered = sum - 2 * int64_t(m);  // mean of the sum is 4 * m / 2
  // sd of one uniform on [0, m] is m / sqrt(12); of four: m / sqrt(3). 1/sd = sqrt(3)/m.
  const float inv_sd = 1.7320508075688772f / float(m);
  return float(centered) * inv_sd;
}

// The value of element `index` (flat, in the tensor's own layout order) of input `tensor`.
// For mask_coverage, `kv_pos` must be the key position of that element (V rows only).
ATTNPROF_HD float input_value(InputPattern pattern, uint64_t seed, TensorId tensor, uint64_t index,
                              int dtype_code, int64_t kv_pos, int64_t dim) {
  if (pattern == InputPattern::mask_coverage) {
    if (tensor == TensorId::q) return 0.0f;
    if (tensor == TensorId::v) {
      // Dim 0 carries the key index modulo 64 and dim 1 the index / 64, both small integers that
      // fp16 and bf16 hold exactly; other dims carry the index modulo 7 as a checksum.
      if (dim == 0) return float(kv_pos % 64);
      if (dim == 1) return float(kv_pos / 64 % 256);
      return float(kv_pos % 7);
    }
  }
  return round_to_dtype(random_normal(seed, uint32_t(tensor), index), dtype_code);
}

// The value of element `index` of input `tensor`, for a spec whose K holds V (`latent_dv` > 0:
// Spec::shared_latent, absorbed MLA's latent cache): K's first `latent_dv` columns are V's values
// (V's element of the same row and column), its other columns its own; every other tensor is
// input_value(). `dim` is the element's column, `head_dim` the length of K's rows.
ATTNPROF_HD float input_value_of(InputPattern pattern, uint64_t seed, TensorId tensor,
                                 uint64_t index, int dtype_code, int64_t kv_pos, int64_t dim,
                                 int64_t head_dim, int64_t latent_dv) {
  if (tensor == TensorId::k && dim < latent_dv) {
    const uint64_t v_index = index / uint64_t(head_dim) * uint64_t(latent_dv) + uint64_t(dim);
    return input_value(pattern, seed, TensorId::v, v_index, dtype_code, kv_pos, dim);
  }
  return input_value(pattern, seed, tensor, index, dtype_code, kv_pos, dim);
}

// The sink logit of query head h (Spec::sinks): approximately N(0, 1), fp32.
ATTNPROF_HD float sink_logit(InputPattern pattern, uint64_t seed, int64_t h) {
  return input_value(pattern, seed, TensorId::sink, uint64_t(h), 0, 0, 0);
}

}  // namespace attnprof
