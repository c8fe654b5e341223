// Command-line quantities with units: sizes ("512MiB", "16GiB", "1.5GB", "4096") and durations
// ("250us", "50ms", "2s", "1.5min"). Throw std::invalid_argument with what is allowed.
#pragma once

#include <cstdint>
#include <string_view>

namespace attnprof {

int64_t parse_bytes(std::string_view text);   // bytes; plain numbers are bytes
double parse_seconds(std::string_view text);  // seconds; plain numbers are seconds

}  // namespace attnprof
