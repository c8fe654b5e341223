#include "time_split.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace attnprof::cli {

void TimeSplit::write(const Result& r) {
  setup_ += r.prepare_s.value_or(0);
  verification_ += r.verify.seconds;
  measurement_ += r.measure_s.value_or(0);
}

std::string TimeSplit::line(double wall_s) const {
  const double rest = std::max(0.0, wall_s - setup_ - verification_ - measurement_);
  return fmt::format(
      "time: {:.1f} s: setup {:.1f} s, verification {:.1f} s, measurement {:.1f} s, the rest "
      "{:.1f} s (workers, allocation and fills, ceilings, reporting)",
      wall_s, setup_, verification_, measurement_, rest);
}

}  // namespace attnprof::cli
