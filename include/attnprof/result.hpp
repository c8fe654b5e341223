// One row of results: everything measured and checked for one (Spec, Provider) point.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attnprof/spec.hpp"

namespace attnprof {

inline constexpr int kSchemaVersion = 1;

enum class Status { passed, incorrect, not_supported, oom, failed, timeout, skipped };
std::string_view to_string(Status s);
std::optional<Status> parse_status(std::string_view s);

struct TimingResult {
  std::string mode;  // "cpu-wall", "cold", "hot", "graph", "wall"
  double median_us = 0, mean_us = 0, min_us = 0, p5_us = 0, p95_us = 0;
  double cv = 0, rel_noise = 0;
  int64_t samples = 0;
  int64_t launches_per_sample = 1;  // >1 when short kernels are timed in batches
  bool noisy = false;
  std::string stop_reason;
  int64_t dropped_throttled = 0;  // samples dropped for low SM clock (CUDA)
  double clock_mhz = 0;           // median SM clock over kept samples (CUDA)
};

struct MemoryResult {
  int64_t peak_bytes = 0;      // peak bytes held by the point (tracked allocations)
  int64_t extra_bytes = 0;     // peak - inputs - outputs
  int64_t analytic_bytes = 0;  // inputs + outputs: the floor any implementation needs
  int64_t workspace_bytes = 0;
  int64_t process_hwm_bytes = 0;  // process resident-set high-water mark (CPU), 0 if unknown
};

struct VerifyResult {
  bool checked = false;
  double max_abs_err = 0;
  double rel_l2_err = 0;        // worst relative L2 error over checked rows
  double tolerance = 0;         // the bound rel_l2_err is gated on
  double lse_max_abs_err = -1;  // -1 when the provider exposes no LSE
  double lse_tolerance = 0;     // the bound lse_max_abs_err is gated on
  int64_t rows_checked = 0;
  int64_t rows_total = 0;
  int64_t nan_count = 0;  // output elements still NaN (poison not overwritten) or NaN/inf
  std::string sampling;   // "all" or "stratified"
  std::string detail;     // worst row and tensor, in words
};

struct KernelRecord {
  std::string name;
  int64_t count = 0;
  double total_us = 0;
};

struct Result {
  int schema_version = kSchemaVersion;
  std::string provider;
  Status status = Status::skipped;
  std::string reason;
  Spec spec;
  // The seed the point's random inputs are drawn from (--seed): with the spec, what reproduces
  // them. Absent in rows of points never tried (skipped, no engine) and in older journals.
  std::optional<uint64_t> seed;
  std::string device;  // device name the point ran on
  TimingResult timing;
  double tflops = 0;        // flops / median
  double gbps = 0;          // min_bytes / median, in GB/s (1e9)
  double tokens_per_s = 0;  // batch * q_len / median
  double flops = 0;
  double bytes = 0;
  std::string flop_convention;
  std::optional<double> pct_peak_flops;  // % of the measured peak, where peaks are known
  std::optional<double> pct_peak_bw;
  std::string bound;  // "compute" or "memory" (arithmetic intensity against the ridge point)
  MemoryResult memory;
  VerifyResult verify;
  std::vector<KernelRecord> kernels;
  std::string kernels_note;                // e.g. "unavailable (CUPTI busy)"
  std::string provider_note;               // Run::note(): e.g. the backend a dispatcher chose
  std::map<std::string, std::string> env;  // the environment fingerprint
  std::string started_at;                  // ISO-8601 UTC
};

}  // namespace attnprof
