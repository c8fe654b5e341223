// One row of results: everything measured and checked for one (Spec, Provider) point.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attnprof/fault.hpp"
#include "attnprof/spec.hpp"
#include "attnprof/trace_events.hpp"
#include "attnprof/traits.hpp"

namespace attnprof {

// 2: harness-owned inputs; rows carry fault, traits, clock policy, power and host load.
// 3: verify carries its time, the launches checked and the device reference's cross-check.
inline constexpr int kSchemaVersion = 3;

enum class Status { passed, incorrect, not_supported, oom, failed, timeout, skipped };
std::string_view to_string(Status s);
std::optional<Status> parse_status(std::string_view s);
// The status of a point that ended in `fault`: not_supported (and invalid), oom, timeout;
// incorrect for the verdicts on what a provider produced (unwritten, stale, implausible); failed
// otherwise; passed for none.
Status status_of(Fault f);

struct TimingResult {
  std::string mode;  // "cpu-wall", "cold", "hot", "graph", "wall"
  double median_us = 0, mean_us = 0, min_us = 0, p5_us = 0, p95_us = 0;
  double cv = 0, rel_noise = 0;
  int64_t samples = 0;
  int64_t launches_per_sample = 1;  // >1 when short kernels are timed in batches
  bool noisy = false;
  std::string stop_reason;
  int64_t dropped_throttled = 0;  // samples dropped for low SM clock (CUDA)
  // Times the older half of the samples was dropped because the SM clock was still falling
  // (sustained policy, stats.hpp clock_falling; CUDA)
  int64_t clock_settling = 0;
  double clock_mhz = 0;      // median SM clock over kept samples (CUDA)
  std::string clock_policy;  // "sustained" or "recover" (engine.hpp ClockPolicy)
  double power_w = 0;        // median board power over kept samples (CUDA, NVML); 0 unknown
  int64_t copies = 1;        // sets of tensors a batch rotated through (cold, CUDA)
  // CPU timing: the host's 1-minute load average at the end, and the share of the host's CPU
  // time other processes used while this point was sampled; above kBusyHost the row is noisy.
  double host_load = 0;
  double host_busy = 0;
  // Seconds the timed samples' audits took (poison before, publish and scan after each sample,
  // outside its time): part of the row's measure_s and its audits.outputs; not written alone.
  double audit_s = 0;
};

// What a point's audits cost, in seconds, by kind. A row of an older build has only the sum.
struct AuditSeconds {
  double outputs = 0;   // poison before every timed sample and checked launch, the scans after
  double inputs = 0;    // digests and guard bytes of the inputs
  double launches = 0;  // the audits' own launches and checks: other parity, new input values
  double streams = 0;   // the CUPTI stream audit's launch
  double unsplit = 0;   // an older row's audit_s, not split by kind
  double total() const { return outputs + inputs + launches + streams + unsplit; }
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
  int64_t nan_count = 0;         // output elements still NaN (poison not overwritten) or NaN/inf
  std::string sampling;          // "all" (host), "all (device)", "sample" (host, beyond its budget)
  std::string detail;            // worst row and tensor, in words
  double seconds = 0;            // time spent verifying this point (every check of it)
  int64_t launches_checked = 0;  // launches whose outputs were checked (first, last, repeats)
  // Device checks: the largest |rel err against the device reference - rel err against the fp64
  // host reference| over the cross-checked rows (the device reference checked); -1 when none.
  double reference_disagreement = -1;
};

struct KernelRecord {
  std::string name;
  int64_t count = 0;
  double total_us = 0;
};

struct Result {
  int schema_version = kSchemaVersion;
  std::string provider;
  ProviderTraits traits;  // what the provider declared (traits.hpp)
  Status status = Status::skipped;
  Fault fault = Fault::none;  // why it did not pass, classified where it was caught
  std::string reason;
  Spec spec;
  // The seed the point's random inputs are drawn from (--seed): with the spec, what reproduces
  // them. Every row made by this build has it (unrun rows the run's); rows of schema 1 lack it.
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
  // The ceilings the percentages are of: TFLOP/s of the dtype's matrix rate, TB/s, and where
  // they come from ("attnprof peaks 2026-11-29T..."); 0 and "" where none were known.
  double peak_tflops = 0, peak_tbps = 0;
  std::string peaks_source;
  // The SM clock the matrix ceiling was measured at (its GEMM's median; 0: unknown, and on the
  // CPU), and % of that ceiling scaled to this row's own clock (timing.clock_mhz): tflops /
  // (peak_tflops * clock_mhz / peak_clock_mhz). A reader with another machine of the kind, whose
  // GEMM ran at another clock, gets the same figure for the same kernel; unset when either clock
  // is unknown.
  double peak_clock_mhz = 0;
  std::optional<double> pct_peak_flops_at_clock;
  // The vendor's dense rate for the dtype (datasheet_for; 0: not a known device) and % of it.
  double datasheet_tflops = 0;
  std::optional<double> pct_datasheet_flops;
  MemoryResult memory;
  VerifyResult verify;
  std::vector<KernelRecord> kernels;
  std::string kernels_note;   // e.g. "unavailable (CUPTI busy)"
  std::string provider_note;  // Run::note(): e.g. the backend a dispatcher chose
  // Seconds the provider's prepare() and first bind took (plans, compilation, autotuning:
  // torch.compile's lands here, never in the timed launches); none for a point not prepared.
  std::optional<double> prepare_s;
  // Seconds of the warm-up and the timed sampling (the measurement, cold copies included); none
  // for a point that did not get there.
  std::optional<double> measure_s;
  // Seconds the harness spent auditing the provider, by kind (docs/method.md, "What a provider
  // cannot fake"): the cost of trusting it, within the point's other seconds.
  std::optional<AuditSeconds> audits;
  std::map<std::string, std::string> env;  // the environment fingerprint
  std::string started_at;                  // ISO-8601 UTC
  std::optional<PointTrace> trace;         // phases and device events (attnprof trace only)
};

}  // namespace attnprof
