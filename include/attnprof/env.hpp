// The environment fingerprint: part of every row and of the resume and compare keys.
#pragma once

#include <map>
#include <string>

#include "attnprof/device.hpp"

namespace attnprof {

using Fingerprint = std::map<std::string, std::string>;

// Host, compiler, build type, git commit, and whatever the built engines add (GPU name, SM
// count, driver, CUDA runtime, cuBLAS, cuDNN versions, power limit, ECC).
Fingerprint environment_fingerprint(const Device& device);

// The current time as ISO-8601 UTC, "2026-11-29T15:22:43Z" (rows, runs, peaks record it).
std::string utc_now_iso8601();

// The subset of the fingerprint that identifies "the same build on the same device", used in
// resume and compare keys (no timestamps, no host load).
std::string fingerprint_key(const Fingerprint& env);
// The first field of that subset where `a` and `b` differ, as "git_commit 1a2b -> 3c4d"; empty
// when their keys are equal.
std::string fingerprint_difference(const Fingerprint& a, const Fingerprint& b);

}  // namespace attnprof
