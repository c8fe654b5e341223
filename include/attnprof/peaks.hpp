// A device's measured ceilings and what rows take from them: % of the best measured FLOP/s and
// bandwidth, and whether a point is compute- or memory-bound. Engines measure them
// (Engine::measure_peaks: cuBLAS GEMMs and device streams on a GPU, BLAS sgemm and host streams on
// the CPU); `attnprof peaks` shows them, and the first GPU point of run, tune or trace measures
// them when none are cached for the device (src/run/ceilings.cpp).
#pragma once

#include <optional>
#include <string>

#include "attnprof/device.hpp"
#include "attnprof/env.hpp"
#include "attnprof/result.hpp"
#include "attnprof/spec.hpp"

namespace attnprof {

struct Peaks {
  std::string key;          // device and library identity the figures belong to (peaks_key)
  std::string device;       // "NVIDIA H200"
  std::string measured_at;  // ISO-8601 UTC
  DeviceKind kind = DeviceKind::cuda;
  // GPU: cuBLAS GEMM, M = N = K = 8192, random inputs, fp32 accumulation; 2*M*N*K / median time.
  double bf16_tflops = 0, fp16_tflops = 0, tf32_tflops = 0;
  // GPU, sm_89 and newer: a cuBLASLt e4m3 x e4m3 GEMM of the same size (bf16 output), the rate
  // both fp8 dtypes are held against; 0 where the device has no fp8 tensor cores.
  double fp8_tflops = 0;
  // CPU: BLAS sgemm, M = N = K = 2048, on the engine's threads (every CPU provider computes in
  // fp32, whatever the dtype it stores).
  double fp32_tflops = 0;
  // Bytes read plus bytes written per second (TB/s = 1e12 B/s): a copy (GPU: cudaMemcpyAsync
  // over 1 GiB; CPU: 256 MiB on the engine's threads) and a read-only stream over as much.
  double copy_tbps = 0, read_tbps = 0;
  // GPU: the median SM clock over each GEMM's samples (MHz; 0: not read, and on the CPU). The
  // H200's bf16 ceiling read 685, 746 and 792 TFLOP/s on three machines of the kind: the clock
  // under the power cap is most of the difference, so rows give % of peak at their own clock too.
  double bf16_clock_mhz = 0, fp16_clock_mhz = 0, tf32_clock_mhz = 0, fp8_clock_mhz = 0;
  // CPU: the share of the host's CPU time other processes used while the figures were measured
  // (host_load.hpp); a busy host measures low ceilings, which would then make rows read above
  // 100% of peak. 0 on the GPU.
  double host_busy = 0;
  Fingerprint env;  // the fingerprint at measurement time

  // The matrix rate a point of this dtype is held against: bf16 -> bf16, fp16 -> fp16, fp8 ->
  // fp8, fp32 -> tf32 (the fastest way a GPU multiplies fp32 inputs); on the CPU fp32 for all.
  // TFLOP/s.
  double tflops_for(DType dtype) const;
  // The SM clock tflops_for(dtype) was measured at (MHz); 0 when unknown or on the CPU.
  double clock_for(DType dtype) const;
  // The best measured bandwidth (a read-only stream beats a copy): TB/s.
  double best_tbps() const;
};

// A vendor's datasheet figures (dense, no sparsity), where the device is known: H200 and H100
// SXM, A100. A measured figure above these is impossible and flagged.
struct Datasheet {
  bool known = false;
  std::string source;  // "NVIDIA H200 SXM datasheet"
  double bf16_tflops = 0, fp16_tflops = 0, tf32_tflops = 0, hbm_tbps = 0;
  double fp8_tflops = 0;  // 0: no fp8 tensor cores
  // The rate a point of this dtype is held against (Peaks::tflops_for's choice).
  double tflops_for(DType dtype) const;
};
Datasheet datasheet_for(const std::string& device_name);

// ~/.cache/attnprof/peaks-<16 hex digits of the key's hash>.json ($XDG_CACHE_HOME if set);
// "" when neither HOME nor XDG_CACHE_HOME is set.
std::string peaks_cache_path(const std::string& key);
// The cached figures for this key (Engine::peaks_key), if they were measured with this device,
// driver and libraries; a damaged or older file is nullopt (measured again, never trusted).
std::optional<Peaks> load_cached_peaks(const std::string& key);
// The cache file's content: every figure, the key, the time and the fingerprint.
std::string to_json(const Peaks& peaks);
// Writes the cache file (creating its folder); returns its path, "" when it could not write.
std::string save_peaks(const Peaks& peaks);
// One line when the figures were measured on a busy host (they read low), else "". Such figures
// are cached all the same (a CI machine running tests two at a time is never idle) and measured
// again by the first run that finds the host idle (run/ceilings.cpp).
std::string busy_note(const Peaks& peaks);

// Records the ceilings in the row (peak_tflops, peak_tbps, peaks_source) and, for a timed row
// (r.tflops, r.gbps, r.flops and r.bytes set), fills r.pct_peak_flops, r.pct_peak_bw and r.bound:
// "compute" when flops/bytes reaches the ridge point tflops_for(dtype) / best_tbps(), else
// "memory"; and, where known, r.peak_clock_mhz with r.pct_peak_flops_at_clock (the ceiling
// scaled to the row's own SM clock) and r.datasheet_tflops with r.pct_datasheet_flops.
void apply_peaks(Result& r, const Peaks& peaks);

}  // namespace attnprof
