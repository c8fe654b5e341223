// Noise-aware comparison of two runs (after NVBench's compare): rows are joined on provider,
// spec and timing mode, and a difference counts only when it stands out of both runs' noise.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnprof/result.hpp"

namespace attnprof {

enum class Verdict { faster, slower, same, ambiguous };
std::string_view to_string(Verdict v);  // "FASTER", "SLOWER", "SAME", "AMBIGUOUS"

struct CompareOptions {
  // Smallest relative change worth a verdict: smaller, significant changes are SAME.
  double threshold = 0.05;
  // Width of the noise band in standard errors: a change is significant when |ln(B/A)| exceeds
  // z * sqrt(noise_A^2 + noise_B^2). 2 keeps a quiet pair of runs from reporting ~5% of its
  // points as changed by chance.
  double z = 2.0;
};

// The relative standard error of a row's median: the row's rel_noise (from the median absolute
// deviation, so one preempted sample does not swamp it), or, where that is 0 (all samples but a
// few equal), 1.2533 * cv / sqrt(samples) from the standard deviation. Infinite when fewer than 2
// samples were taken: nothing is known about the noise.
double median_noise(const TimingResult& t);

// The verdict for a new/base ratio of medians with the two relative noises (see CompareOptions):
// FASTER or SLOWER when significant and at least `threshold`; SAME when the change is under the
// threshold and the noise band is narrower than the threshold; AMBIGUOUS otherwise (the noise
// is too wide to tell).
Verdict judge(double ratio, double noise_base, double noise_new, const CompareOptions& options);

// One pair of passed, timed rows.
struct ComparedRow {
  Result base, head;
  double ratio = 0;  // head median / base median
  double band = 0;   // z * combined relative noise: |ln ratio| above this is significant
  Verdict verdict = Verdict::ambiguous;
  // head / base mean SM clock while sampling (timing.clock_mhz); 0 when either is unknown.
  double clock_ratio = 0;
};

// Compared points whose SM clocks differ by at least this much are listed with the comparison:
// a power-capped GPU moves its clock between runs, compute-bound kernels follow it and
// memory-bound ones do not, so such a change may be the clock rather than the code.
inline constexpr double kClockShiftNoted = 0.02;

// A point that passed on one side only, or whose status differs.
struct StatusChange {
  std::string provider;
  Spec spec;
  std::string base_status, head_status;  // "passed", "oom", ..., or "absent"
  std::string reason;                    // the non-passed side's reason
  bool regression = false;               // passed before, incorrect/failed/timeout/oom now
};

struct Comparison {
  std::vector<ComparedRow> rows;  // in base order
  std::vector<StatusChange> changes;
  // "provider shape" of unmatched points; a point that passed in A and is absent from B is in
  // `missing` instead, so no point is listed twice.
  std::vector<std::string> only_base, only_head;
  // Points that passed in A and have no passed row in B (absent, or not_supported, skipped...),
  // as "provider shape: absent" or "provider shape: <B's status>"; those that broke (changes[]
  // with `regression`) are not repeated here, and the formatter does not repeat these among the
  // status changes.
  std::vector<std::string> missing;
  std::vector<std::string> mode_mismatches;  // passed on both sides but timed differently
  // Fingerprint entries that differ between the runs, e.g. "git_commit: abc -> def".
  std::vector<std::string> env_differences;
  int64_t duplicates = 0;  // rows that a later row of the same key replaced

  int64_t count(Verdict v) const;
  double geomean_ratio() const;  // over compared rows; 0 when none
  int64_t broken() const;        // points that passed in A and broke in B
  // Any SLOWER, any passed row that broke, or, unless `allow_missing`, any point missing from B:
  // a CI gate must not pass because the points that got slower stopped running.
  bool has_regression(bool allow_missing = false) const;
};

Comparison compare_runs(const std::vector<Result>& base, const std::vector<Result>& head,
                        const CompareOptions& options);

// The comparison as text for a terminal: a table of compared rows, the summary line, status
// changes, unmatched points and environment differences. `base_label`/`head_label` name A, B.
std::string format_comparison(const Comparison& c, const std::string& base_label,
                              const std::string& head_label, const CompareOptions& options);

// The same comparison as one JSON document: labels, threshold, a summary (counts by verdict,
// geomean, broken, missing, whether --fail-on-regression would fail), each compared row (medians,
// ratio, noise, verdict), status changes and the unmatched points (docs/usage.md, "compare").
std::string comparison_json(const Comparison& c, const std::string& base_label,
                            const std::string& head_label, const CompareOptions& options);

}  // namespace attnprof
