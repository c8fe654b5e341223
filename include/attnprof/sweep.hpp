// A sweep: every (Spec, Provider) of a grid, in order, each Result handed to the sinks as it
// finishes. One failing point never ends the sweep.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "attnprof/engine.hpp"
#include "attnprof/provider.hpp"
#include "attnprof/result.hpp"
#include "attnprof/runner.hpp"
#include "attnprof/sink.hpp"
#include "attnprof/spec.hpp"

namespace attnprof {

// The engines a sweep may use, by device kind (null where not built).
struct Engines {
  Engine* cpu = nullptr;
  Engine* cuda = nullptr;
  Engine* for_kind(DeviceKind k) const { return k == DeviceKind::cpu ? cpu : cuda; }
};

struct SweepSummary {
  int64_t total = 0;
  std::map<Status, int64_t> by_status;
  int64_t count(Status s) const {
    auto it = by_status.find(s);
    return it == by_status.end() ? 0 : it->second;
  }
};

// The points of a sweep in run order: spec-major (every provider at one shape, then the next).
struct Point {
  Spec spec;
  Provider* provider = nullptr;
};
std::vector<Point> plan_points(const std::vector<Spec>& specs,
                               const std::vector<Provider*>& providers);

// The series a spec belongs to for the OOM skip rule: the spec with its size axes (batch,
// q_len, kv_len) cleared. After an oom, points of the same provider and series whose
// batch * q_len * kv_len is at least the failed one's are skipped.
std::string series_key(const Spec& spec);
int64_t series_size(const Spec& spec);

SweepSummary run_sweep(const std::vector<Point>& points, const Engines& engines,
                       const RunOptions& options, const std::vector<Sink*>& sinks);

}  // namespace attnprof
