// The search of `attnprof tune`: growth to where the limits are predicted to be met (or doubling)
// until a value does not fit, then a bracket narrowed by interpolation or halving to the
// resolution, then a few points where the throughput optimum may lie between measured values.
// Each value is one measured point.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

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
         const Settings& settings, TuneResult& out)
      : spec_(spec),
        provider_(provider),
        executor_(executor),
        options_(options),
        settings_(settings),
        out_(out),
        env_(point_env(executor, {spec, &provider, settings})) {}

  // Runs the point at `value`; returns whether it fits. Throws Stopped when the executor
  // abandoned the point.
  bool fits(int64_t value) {
    if (options_.stop && options_.stop->stop_after_point()) throw Stopped{};
    TunePoint p;
    p.value = value;
    std::optional<Result> row =
        executor_.run({with_value(spec_, options_.axis, value), &provider_, settings_});
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
  Settings settings_;
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

// The step the search resolves near `lo` (the largest value known to fit).
int64_t step_at(const TuneOptions& o, int64_t lo) {
  const auto relative = static_cast<int64_t>(o.relative_resolution * static_cast<double>(lo));
  return std::max<int64_t>({1, o.resolution, relative});
}

// A limited quantity of a row (its peak memory, its p95) and the limit's value.
struct Limit {
  double bound;
  double (*of)(const Result&);
  bool extrapolates_poorly = false;  // p95: flat until the device fills, then rising
};

std::vector<Limit> limits_of(const TuneLimits& l) {
  std::vector<Limit> out;
  if (l.max_memory_bytes) {
    out.push_back({static_cast<double>(*l.max_memory_bytes),
                   [](const Result& r) { return static_cast<double>(r.memory.peak_bytes); }});
  }
  if (l.max_p95_us) {
    out.push_back({*l.max_p95_us, [](const Result& r) { return r.timing.p95_us; }, true});
  }
  return out;
}

// Where the straight line through two measured points of a limited quantity reaches the limit;
// nullopt when the quantity does not rise between them (nothing to extrapolate).
std::optional<double> crossing(const TunePoint& a, const TunePoint& b, const Limit& limit) {
  const double ya = limit.of(a.result), yb = limit.of(b.result);
  if (b.value <= a.value || !(yb > ya)) return std::nullopt;
  return static_cast<double>(a.value) +
         (limit.bound - ya) * static_cast<double>(b.value - a.value) / (yb - ya);
}

// Rounds a predicted boundary down to a value (a hair of slack for a line that meets the limit
// exactly at an integer).
int64_t value_at(double predicted) {
  return static_cast<int64_t>(std::floor(predicted + 1e-6));
}

void search_boundaries(Search& search, const TuneOptions& options, TuneResult& out) {
  const std::vector<Limit> limits = limits_of(options.limits);
  // A measured point, by reference: valid until the next point is measured (the curve grows).
  const auto point = [&](int64_t v) -> const TunePoint& { return *out.at(v); };

  // Growth: from the start, to where the two largest fitting points' straight lines meet the
  // nearest limit, or doubling while nothing predicts, until a value does not fit.
  int64_t prev = 0, lo = 0, hi = 0;  // fitting values (the two largest); the smallest that fails
  for (int64_t v = std::max<int64_t>(1, options.start);;) {
    if (!search.fits(v)) {
      hi = v;
      break;
    }
    prev = lo;
    lo = v;
    if (v >= options.max_value) {
      out.boundary =
          fmt::format("reached the search cap ({} {})", axis_name(options.axis), options.max_value);
      break;
    }
    int64_t next = v * 2;
    if (prev > 0) {
      // Memory's line is trusted as far as it goes; p95's (flat while the device is not yet
      // full, so far too long) for at most 8x.
      std::optional<int64_t> nearest;
      for (const Limit& limit : limits) {
        const auto at = crossing(point(prev), point(lo), limit);
        if (!at) continue;
        const int64_t candidate =
            limit.extrapolates_poorly ? std::min(value_at(*at), lo * 8) : value_at(*at);
        if (!nearest || candidate < *nearest) nearest = candidate;
      }
      if (nearest) next = std::max(*nearest, lo + step_at(options, lo));
    }
    v = std::min(next, options.max_value);
  }
  if (lo == 0) {
    out.boundary = search.why_not(hi);
    return;
  }
  if (hi == 0) return;  // the cap fits

  // Bracket (lo fits, hi does not): where the straight line between them meets the limit hi
  // broke, when hi was measured; halving otherwise (in ratio while hi > 2 lo), or after a guess
  // that did not halve the gap.
  bool halve = false;
  while (hi - lo > step_at(options, lo)) {
    const int64_t step = step_at(options, lo);
    // Halving: in ratio while the bracket spans more than a doubling (a jump that overshot into
    // out-of-memory leaves one thousands of batches wide), then in steps.
    int64_t guess =
        hi > 2 * lo ? static_cast<int64_t>(std::sqrt(double(lo) * double(hi))) : lo + (hi - lo) / 2;
    if (!halve) {
      const TunePoint& h = point(hi);
      for (const Limit& limit : limits) {
        if (h.result.status != Status::passed || !(limit.of(h.result) > limit.bound)) continue;
        if (const auto at = crossing(point(lo), h, limit)) guess = value_at(*at);
        break;
      }
    }
    guess = hi - lo >= 2 * step ? std::clamp(guess, lo + step, hi - step) : lo + step;
    const int64_t gap = hi - lo;
    (search.fits(guess) ? lo : hi) = guess;
    halve = 2 * (hi - lo) > gap;
  }
  out.boundary = search.why_not(hi);
}

// Sorts the curve; the largest fitting value and the one with the most tokens/s.
void summarize_curve(TuneResult& out) {
  std::sort(out.curve.begin(), out.curve.end(),
            [](const TunePoint& a, const TunePoint& b) { return a.value < b.value; });
  out.largest.reset();
  out.optimal.reset();
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

// Where tokens/s may peak between measured values: beside an optimum below the largest value
// that fits, or below the largest when the throughput stopped growing with the value on the way
// to it. Measures the middle of the wider gap beside the optimum whose far end is more than
// options.optimum_tolerance below it, a few times (a unimodal curve's peak is then bracketed by
// the optimum's neighbors); a neighbor within the tolerance leaves its side alone: on a curve that
// is flat past saturation, more points there only chase the noise.
void refine_optimum(Search& search, const TuneOptions& options, TuneResult& out) {
  for (int extra = 0; extra < options.refine_optimum; ++extra) {
    summarize_curve(out);
    if (!out.optimal) return;
    std::vector<const TunePoint*> fit;
    for (const TunePoint& p : out.curve)
      if (p.fits) fit.push_back(&p);
    const auto o = static_cast<std::size_t>(
        std::find_if(fit.begin(), fit.end(),
                     [&](const TunePoint* p) { return p->value == *out.optimal; }) -
        fit.begin());
    const bool interior = o + 1 < fit.size();
    // Below the largest value: the throughput grew much less than the value (by under 90% of
    // it) from the fitting point before, so it saturated, and may have peaked, in between.
    const bool saturated = !interior && o > 0 &&
                           fit[o]->result.tokens_per_s / fit[o - 1]->result.tokens_per_s <
                               0.9 * double(fit[o]->value) / double(fit[o - 1]->value);
    if (!interior && !saturated) return;
    const double floor = (1 - options.optimum_tolerance) * fit[o]->result.tokens_per_s;
    const int64_t step = step_at(options, fit[o]->value);
    // The gap on each side, when its far end is below the tolerance (0: nothing to look for).
    const auto gap = [&](const TunePoint* far, int64_t width) {
      return far->result.tokens_per_s < floor && width > step ? width : int64_t{0};
    };
    const int64_t left = o > 0 ? gap(fit[o - 1], fit[o]->value - fit[o - 1]->value) : 0;
    const int64_t right = interior ? gap(fit[o + 1], fit[o + 1]->value - fit[o]->value) : 0;
    if (left == 0 && right == 0) return;
    const int64_t v = right >= left ? fit[o]->value + right / 2 : fit[o]->value - left / 2;
    if (out.at(v)) return;
    search.fits(v);
  }
  summarize_curve(out);
}

}  // namespace

TuneResult tune(const Spec& spec, Provider& provider, Executor& executor,
                const TuneOptions& options, const Settings& settings) {
  TuneResult out;
  out.provider = provider.name();
  out.axis = options.axis;
  out.spec = with_value(spec, options.axis, options.start);
  Search search(spec, provider, executor, options, settings, out);
  try {
    search_boundaries(search, options, out);
    refine_optimum(search, options, out);
  } catch (const Stopped&) {
    out.stopped = true;
    out.boundary = "stopped before the search ended: what was found so far";
  }
  summarize_curve(out);
  return out;
}

}  // namespace attnprof
