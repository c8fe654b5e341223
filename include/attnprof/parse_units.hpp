// Command-line quantities with units: sizes ("512MiB", "16GiB", "1.5GB", "4096B") and durations
// ("250us", "50ms", "2s", "1.5min"). A bare number is refused: `--p95 20` could mean 20 ms or
// 20 s, `--max-memory 40` 40 bytes or 40 GiB. Throw std::invalid_argument with what is allowed.
#pragma once

#include <cstdint>
#include <string_view>

namespace attnprof {

int64_t parse_bytes(std::string_view text);   // bytes
double parse_seconds(std::string_view text);  // seconds

}  // namespace attnprof
