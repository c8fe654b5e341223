// Digests of memory, for the harness's audits (docs/method.md, "What a provider cannot fake"):
// whether a provider changed an input, or wrote into the guard bytes past a tensor's end. A
// digest is a sum over the 8-byte words of a range (the last one zero-padded) of a mix of the word
// and its position, so the order words are visited in does not matter (a device kernel sums them
// in any order) and a word that changes or moves changes the sum. It detects the changes a
// provider makes by mistake or on purpose; it is not a cryptographic hash (a provider that forged
// a colliding change would have to compute it).
#pragma once

#include <cstdint>

#include "attnprof/inputs.hpp"  // ATTNPROF_HD, splitmix64

namespace attnprof {

// The term word `index` of a range salted `salt` adds to its digest.
ATTNPROF_HD uint64_t digest_term(uint64_t word, uint64_t index, uint64_t salt) {
  return splitmix64(word ^ splitmix64(index + salt));
}

// The digest of host memory [data, data + bytes).
uint64_t digest_host(const void* data, int64_t bytes, uint64_t salt = 0);

// The byte every guard byte past a tensor's end holds (an output's poison is 0xFF: a provider
// that writes poison past the end still changes the guard).
inline constexpr unsigned char kGuardByte = 0xA5;
// Guard bytes after every tensor of a point: larger than the tile a kernel overruns by when it
// writes a whole last tile (128 rows x 256 bytes).
inline constexpr int64_t kGuardBytes = int64_t{64} << 10;

}  // namespace attnprof
