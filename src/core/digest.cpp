#include "attnprof/digest.hpp"

#include <cstring>

namespace attnprof {

uint64_t digest_host(const void* data, int64_t bytes, uint64_t salt) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0;
  const int64_t whole = bytes / 8;
  for (int64_t w = 0; w < whole; ++w) {
    uint64_t x = 0;
    std::memcpy(&x, p + w * 8, 8);
    h += digest_term(x, static_cast<uint64_t>(w), salt);
  }
  if (const int64_t tail = bytes - whole * 8; tail > 0) {
    uint64_t x = 0;  // little-endian, zero-padded, as the device kernel reads it
    for (int64_t b = 0; b < tail; ++b) x |= uint64_t(p[whole * 8 + b]) << (8 * b);
    h += digest_term(x, static_cast<uint64_t>(whole), salt);
  }
  return h;
}

}  // namespace attnprof
