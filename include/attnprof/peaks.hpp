// The device's measured ceilings (`attnprof peaks`) and what rows take from them: % of the
// best measured FLOP/s and bandwidth, and whether a point is compute- or memory-bound.
// Defined in CUDA builds only (src/measure/cuda/); guard callers with ATTNPROF_WITH_CUDA.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "attnprof/device.hpp"
#include "attnprof/engine.hpp"
#include "attnprof/env.hpp"
#include "attnprof/result.hpp"
#include "attnprof/spec.hpp"

namespace attnprof {

struct Peaks {
  std::string key;          // device and library identity the figures belong to (peaks_key)
  std::string device;       // "NVIDIA H200"
  std::string measured_at;  // ISO-8601 UTC
  // cuBLAS GEMM, M = N = K = 8192, random inputs, fp32 accumulation; 2*M*N*K / median time.
  double bf16_tflops = 0, fp16_tflops = 0, tf32_tflops = 0;
  // Bytes read plus bytes written per second (TB/s = 1e12 B/s): cudaMemcpyAsync device to
  // device over 1 GiB, and a read-only kernel over 1 GiB.
  double copy_tbps = 0, read_tbps = 0;
  Fingerprint env;  // the fingerprint at measurement time

  // The matrix rate a point of this dtype is held against: bf16 -> bf16, fp16 -> fp16,
  // fp32 -> tf32 (the fastest way a GPU multiplies fp32 inputs). TFLOP/s.
  double tflops_for(DType dtype) const;
  // The best measured bandwidth (a read-only stream beats a copy): TB/s.
  double best_tbps() const;
};

// A vendor's datasheet figures (dense, no sparsity), where the device is known: H200 and H100
// SXM, A100. A measured figure above these is impossible and flagged.
struct Datasheet {
  bool known = false;
  std::string source;  // "NVIDIA H200 SXM datasheet"
  double bf16_tflops = 0, fp16_tflops = 0, tf32_tflops = 0, hbm_tbps = 0;
};
Datasheet datasheet_for(const std::string& device_name);

// The cache key: device name, SMs, compute capability, memory, driver, CUDA runtime, cuBLAS.
std::string peaks_key(const Device& device);
// ~/.cache/attnprof/peaks-<16 hex digits of the key's hash>.json ($XDG_CACHE_HOME if set);
// "" when neither HOME nor XDG_CACHE_HOME is set.
std::string peaks_cache_path(const std::string& key);
// The cached figures for this device, if `attnprof peaks` measured them with this driver and
// these libraries.
std::optional<Peaks> load_cached_peaks(const Device& device);
// The cache file's content: every figure, the key, the time and the fingerprint.
std::string to_json(const Peaks& peaks);
// Writes the cache file (creating its folder); returns its path, "" when it could not write.
std::string save_peaks(const Peaks& peaks);

// Measures the ceilings with `engine` (a CUDA engine; its cold timer, after >= 100 ms of
// warm-up launches each): cuBLAS bf16, fp16 and tf32 GEMM at M = N = K = 8192 (cublasGemmEx,
// random inputs, fp32 accumulation), cudaMemcpyAsync device to device over 1 GiB (bytes read +
// written) and the read-only stream kernel over 1 GiB. `progress` hears one line per figure.
// Throws (std::runtime_error, CudaError) when the engine is unavailable or CUDA fails.
Peaks measure_peaks(Engine& engine, const std::function<void(const std::string&)>& progress);

// Records the ceilings in the row (peak_tflops, peak_tbps, peaks_source) and, for a timed row
// (r.tflops, r.gbps, r.flops and r.bytes set), fills r.pct_peak_flops, r.pct_peak_bw and r.bound:
// "compute" when flops/bytes reaches the ridge point tflops_for(dtype) / best_tbps(), else
// "memory".
void apply_peaks(Result& r, const Peaks& peaks);

}  // namespace attnprof
