// Which parts of a Result hold measurements. A row that was not timed (not supported, failed
// before measuring) keeps zeros in its struct; the human and CSV reporters show those fields as
// blank / "-" instead of a misleading 0. The JSONL journal keeps the struct as it is.
#pragma once

#include "attnprof/result.hpp"

namespace attnprof {

inline bool has_timing(const Result& r) {
  return r.timing.samples > 0;
}
inline bool has_memory(const Result& r) {
  return r.memory.peak_bytes > 0;
}
inline bool has_verify(const Result& r) {
  return r.verify.checked;
}

}  // namespace attnprof
