// Accounting of the bytes a point holds. One tracker per engine, passed explicitly to prepare()
// through PrepareContext; providers report every buffer they allocate to it.
#pragma once

#include <algorithm>
#include <cstdint>

namespace attnprof {

class MemoryTracker {
 public:
  void on_alloc(int64_t bytes) {
    current_ += bytes;
    peak_ = std::max(peak_, current_);
  }
  void on_free(int64_t bytes) { current_ -= bytes; }
  int64_t current() const { return current_; }
  int64_t peak() const { return peak_; }
  // Start a new peak window at the current level (called before each point's prepare).
  void reset_peak() { peak_ = current_; }

 private:
  int64_t current_ = 0;  // bytes held now
  int64_t peak_ = 0;     // most bytes held since the last reset_peak()
};

}  // namespace attnprof
