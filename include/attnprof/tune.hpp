// The batch-size auto-tuner (`attnprof tune`): for a spec and a provider, the largest batch (or
// sequence length) that meets a memory limit and a p95 latency limit, and the throughput-optimal
// batch among those that fit. The search jumps to where the measured points' peak memory and p95,
// extrapolated as straight lines in the tuned value, meet the limits (doubling when nothing
// predicts), then narrows the bracket by interpolation or halving; every value is a real point.
// Every point is a real point run by an Executor (the supervisor's workers, or in-process),
// through the one point lifecycle; an OOM is a boundary, never a crash.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attnprof/engine.hpp"
#include "attnprof/interrupt.hpp"
#include "attnprof/provider.hpp"
#include "attnprof/result.hpp"
#include "attnprof/runner.hpp"
#include "attnprof/spec.hpp"
#include "attnprof/sweep.hpp"

namespace attnprof {

// What grows: the batch (at the spec's sequence lengths) or the sequence length (at its batch).
// For the sequence, q_len and kv_len grow together when equal; otherwise only kv_len grows
// (decode: one query over a growing KV cache).
enum class TuneAxis { batch, seq };

struct TuneLimits {
  std::optional<int64_t> max_memory_bytes;  // the point's measured peak_bytes must not exceed
  std::optional<double> max_p95_us;         // timing.p95_us must not exceed
};

// One value tried.
struct TunePoint {
  int64_t value = 0;    // the batch or sequence length
  Result result;        // the measured row (its env is stamped by the tuner)
  bool fits = false;    // passed and within both limits
  std::string why_not;  // which limit or status failed, in words, when !fits
};

struct TuneOptions {
  TuneAxis axis = TuneAxis::batch;
  TuneLimits limits;
  int64_t start = 1;            // first value tried (batch 1, or the spec's length)
  int64_t max_value = 1 << 16;  // never tried beyond this (the search's cap)
  // The search stops when the gap between the largest value that fits and the smallest that
  // does not is at most max(resolution, relative_resolution x the largest that fits).
  int64_t resolution = 1;
  double relative_resolution = 0;
  // After the boundary, at most this many more points look for the throughput optimum between
  // the measured ones (where tokens/s peaks below the largest value that fits), on the sides of
  // the best point whose measured neighbor is more than optimum_tolerance (a share) below it.
  int refine_optimum = 4;
  double optimum_tolerance = 0.02;
  RunOptions run;  // how each point is measured (the executor's options)
  // A stop request (Ctrl-C): checked before each point, so the search ends after the point in
  // flight with what it found so far (TuneResult::stopped). Null: never stopped.
  const StopRequest* stop = nullptr;
  // Called after each measured point, in the order tried (progress, JSONL journal).
  std::function<void(const TunePoint&)> on_point;
};

struct TuneResult {
  std::string provider;
  Spec spec;  // the spec tuned (its batch or length is the start value)
  TuneAxis axis = TuneAxis::batch;
  std::vector<TunePoint> curve;    // every point tried, sorted by value
  std::optional<int64_t> largest;  // the largest value that fits; nullopt: none fits
  std::optional<int64_t> optimal;  // the fitting value with the most tokens/s
  // Why the search stopped above `largest` ("batch 18: peak 21.0 MiB > limit 20.0 MiB"), or
  // why nothing fits ("batch 1: oom: ..."), or "reached the search cap 65536".
  std::string boundary;
  // The search was stopped (a signal) before it ended: largest and optimal are what was found
  // so far, not the answer.
  bool stopped = false;

  const TunePoint* at(int64_t value) const;
};

// Runs the search for one provider on `executor` (whose run options are options.run). `spec`
// gives every dimension but the tuned one. Stops early, with what it found, when a stop was
// requested (options.stop) or the executor abandons a point.
// `settings`: the provider's settings at every point (provider_settings.hpp).
TuneResult tune(const Spec& spec, Provider& provider, Executor& executor,
                const TuneOptions& options, const Settings& settings = {});

// Whether a measured row fits the limits; the reason in words when not.
bool fits_limits(const Result& r, const TuneLimits& limits, std::string& why_not);

// The summary table, one line per result:
// "provider | shape | max batch | optimal batch | tokens/s at optimum | p95 at optimum |
//  peak memory | boundary" (sequence mode: max seq and the figures at it).
std::string format_tune_summary(const std::vector<TuneResult>& results, TuneAxis axis);
// One line of progress for a point just measured: "cpu.naive batch 16: passed, p95 1.23 ms, fits".
std::string format_tune_point(const TunePoint& point, TuneAxis axis);
// Every point tried for one result: value, status, median, p95, peak memory, tokens/s, fits.
std::string format_tune_curve(const TuneResult& result);
// The summary as one JSON document (limits, per provider: largest, optimal, boundary, complete,
// curve; each point's noisy flag). `stopped_by` names the signal that stopped the search
// ("SIGINT"), "" when it ended.
std::string tune_summary_json(const std::vector<TuneResult>& results, const TuneLimits& limits,
                              const std::string& stopped_by = "");

}  // namespace attnprof
