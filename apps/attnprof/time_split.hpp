// Where a sweep's time went, summed from the rows it wrote: the providers' setup (prepare_s),
// verification (verify.seconds), measurement (measure_s: warm-up and timed sampling) and the rest
// of the wall time (workers starting, allocation and fills, the ceilings, reporting).
#pragma once

#include <string>

#include "attnprof/sink.hpp"

namespace attnprof::cli {

class TimeSplit final : public Sink {
 public:
  void write(const Result& r) override;
  // "time: 79.2 s: setup 11.0 s, verification 21.3 s, measurement 33.0 s, the rest 13.9 s
  // (workers, allocation and fills, ceilings, reporting)".
  std::string line(double wall_s) const;

 private:
  double setup_ = 0, verification_ = 0, measurement_ = 0;
};

}  // namespace attnprof::cli
