// The search of `attnprof tune`: geometric growth until a limit fails, then binary search between
// the last value that fitted and the first that did not. Each value is one measured point.
#include <fmt/format.h>

#include <algorithm>

#include "attnprof/tune.hpp"
#include "report/units.hpp"

namespace attnprof {

namespace {

Spec with_value(const Spec& base, TuneAxis axis, int64_t value) {
  Spec s = base;
  if (axis == TuneAxis::batch) {
    s.batch = value;
  } else if (base.q_len == base.kv_len) {
    s.q_len = s.kv_len = value;
  } else {
    s.kv_len = value;
  }
  return s;
}

const char* axis_name(TuneAxis axis) {
  return axis == TuneAxis::batch ? "batch" : "seq";
}

// Thrown when the executor abandoned a point (a stop was requested).
struct Stopped {};

// Measures values one at a time and keeps every point.
class Search {
 public:
  Search(const Spec& spec, Provider& provider, Executor& executor, const TuneOptions& options,
         TuneResult& out)
      : spec_(spec),
        provider_(provider),
        executor_(executor),
        options_(options),
        out_(out),
        env_(executor.fingerprint(provider)) {}

  // Runs the point at `value`; returns whether it fits. Throws Stopped when the executor
  // abandoned the point.
  bool fits(int64_t value) {
    TunePoint p;
    p.value = value;
    std::optional<Result> row =
        executor_.run({with_value(spec_, options_.axis, value), &provider_});
    if (!row) throw Stopped{};
    p.result = std::move(*row);
    p.result.env = env_;
    p.fits = fits_limits(p.result, options_.limits, p.why_not);
    out_.curve.push_back(std::move(p));
    if (options_.on_point) options_.on_point(out_.curve.back());
    return out_.curve.back().fits;
  }

  std::string why_not(int64_t value) const {
    const TunePoint* p = out_.at(value);
    return fmt::format("{} {}: {}", axis_name(options_.axis), value, p ? p->why_not : "");
  }

 private:
  const Spec& spec_;
  Provider& provider_;
  Executor& executor_;
  const TuneOptions& options_;
  TuneResult& out_;
  Fingerprint env_;
};

}  // namespace

const TunePoint* TuneResult::at(int64_t value) const {
  for (const TunePoint& p : curve) {
    if (p.value == value) return &p;
  }
  return nullptr;
}

bool fits_limits(const Result& r, const TuneLimits& limits, std::string& why_not) {
  if (r.status != Status::passed) {
    std::string reason = one_line(r.reason);
    if (reason.size() > 200) reason = reason.substr(0, 200) + "...";
    why_not = fmt::format("{}{}{}", to_string(r.status), reason.empty() ? "" : ": ", reason);
    return false;
  }
  if (limits.max_memory_bytes && r.memory.peak_bytes > *limits.max_memory_bytes) {
    why_not = fmt::format("peak memory {} > limit {}",
                          format_bytes(static_cast<double>(r.memory.peak_bytes)),
                          format_bytes(static_cast<double>(*limits.max_memory_bytes)));
    return false;
  }
  if (limits.max_p95_us && r.timing.p95_us > *limits.max_p95_us) {
    why_not = fmt::format("p95 {} > limit {}", format_duration_us(r.timing.p95_us),
                          format_duration_us(*limits.max_p95_us));
    return false;
  }
  why_not.clear();
  return true;
}

namespace {

void search_boundaries(Search& search, const TuneOptions& options, TuneResult& out) {
  const int64_t step = std::max<int64_t>(1, options.resolution);

  // Geometric growth: 1, 2, 4, ... (or start, 2 start, ...) until a value does not fit.
  int64_t lo = 0, hi = 0;  // the largest value known to fit; the smallest known not to
  for (int64_t v = std::max<int64_t>(1, options.start);;) {
    if (!search.fits(v)) {
      hi = v;
      break;
    }
    lo = v;
    if (v >= options.max_value) {
      out.boundary =
          fmt::format("reached the search cap ({} {})", axis_name(options.axis), options.max_value);
      break;
    }
    v = std::min(v * 2, options.max_value);
  }
  if (lo == 0) {
    out.boundary = search.why_not(hi);
  } else if (hi > 0) {
    // Binary search in (lo, hi) on multiples of `step` above lo: the first failure bounds it.
    while (hi - lo > step) {
      const int64_t mid = lo + std::max<int64_t>(1, (hi - lo) / (2 * step)) * step;
      (search.fits(mid) ? lo : hi) = mid;
    }
    out.boundary = search.why_not(hi);
  }
}

// Sorts the curve; the largest fitting value and the one with the most tokens/s.
void summarize_curve(TuneResult& out) {
  std::sort(out.curve.begin(), out.curve.end(),
            [](const TunePoint& a, const TunePoint& b) { return a.value < b.value; });
  double best = -1;
  for (const TunePoint& p : out.curve) {
    if (!p.fits) continue;
    out.largest = p.value;
    if (p.result.tokens_per_s > best) {
      best = p.result.tokens_per_s;
      out.optimal = p.value;
    }
  }
}

}  // namespace

TuneResult tune(const Spec& spec, Provider& provider, Executor& executor,
                const TuneOptions& options) {
  TuneResult out;
  out.provider = provider.name();
  out.axis = options.axis;
  out.spec = with_value(spec, options.axis, options.start);
  Search search(spec, provider, executor, options, out);
  try {
    search_boundaries(search, options, out);
  } catch (const Stopped&) {
    out.boundary = "stopped before the search ended: what was found so far";
  }
  summarize_curve(out);
  return out;
}

}  // namespace attnprof
