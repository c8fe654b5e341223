// `attnprof trace --ncu`: Nsight Compute over one launch of a point. The point runs in a child
// `attnprof trace ... --ncu-target` (cudaProfilerStart/Stop around one launch) under
// `ncu --clock-control none --profile-from-start off --metrics ... --csv`; its CSV is read
// back per kernel. CUPTI belongs to ncu there, so the child traces nothing itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/provider_settings.hpp"
#include "attnprof/spec.hpp"
#include "attnprof/trace.hpp"

namespace attnprof {

inline constexpr std::string_view kNcuDramMetric =
    "dram__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view kNcuTensorMetric =
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active";
inline constexpr std::string_view kNcuTimeMetric = "gpu__time_duration.sum";

struct NcuKernel {
  std::string name;  // as ncu prints it
  KernelCategory category = KernelCategory::other;
  double duration_us = 0;
  std::optional<double> dram_pct;    // DRAM throughput, % of peak sustained
  std::optional<double> tensor_pct;  // tensor pipe (HMMA) active, % of peak sustained
};

struct NcuReport {
  std::vector<NcuKernel> kernels;  // in launch order
  std::string error;               // why there are no kernels ("" when there are)
};

// The executable's full path where `name` is found on $PATH, else "".
std::string find_on_path(std::string_view name);

// Parses `ncu --csv` output (one row per kernel and metric; other lines are ignored). Values
// may carry thousands separators; durations are converted to µs from ncu's unit.
std::vector<NcuKernel> parse_ncu_csv(std::string_view text);

// ncu's command line around `target` (the child's argv, target[0] the executable).
std::vector<std::string> ncu_command(const std::string& ncu,
                                     const std::vector<std::string>& target);

// Runs the command, reads its output and parses it; error names ncu's last "==ERROR==" line
// or the exit status when no kernel came back.
NcuReport run_ncu(const std::vector<std::string>& command);

// The target ncu runs: `exe trace`, the point's every axis (axes.hpp spec_argv), the provider
// and its settings (--set PROVIDER.NAME=VALUE), the seed and warm-up, --ncu-target: the point
// traced, no other.
std::vector<std::string> ncu_target_argv(const std::string& exe, const Spec& spec,
                                         const std::string& provider, const Settings& settings,
                                         uint64_t seed, int warmup);

// One row per kernel, and the time-weighted DRAM and tensor-pipe figures over all of them.
std::string render_ncu(const NcuReport& report, bool markdown);

}  // namespace attnprof
