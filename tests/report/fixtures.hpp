// Fixed Results for the reporter tests: one per status, with the awkward cases a reporter must
// survive (commas, quotes and newlines in text, non-finite numbers, absent optional fields,
// rows that were never timed). The golden files in tests/golden/ are these rows, printed.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "attnprof/model.hpp"
#include "attnprof/result.hpp"

namespace attnprof::test {

inline Spec make_spec(int64_t batch, int64_t q_heads, int64_t kv_heads, int64_t q_len,
                      int64_t kv_len, int64_t head_dim, DType dtype, Mask mask, Mode mode) {
  Spec s;
  s.batch = batch;
  s.q_heads = q_heads;
  s.kv_heads = kv_heads;
  s.q_len = q_len;
  s.kv_len = kv_len;
  s.head_dim = head_dim;
  s.dtype = dtype;
  s.mask = mask;
  s.mode = mode;
  return s;
}

inline TimingResult make_timing(std::string mode, double median_us, double p95_us, int64_t samples,
                                bool noisy) {
  TimingResult t;
  t.mode = std::move(mode);
  t.median_us = median_us;
  t.mean_us = median_us * 1.01;
  t.min_us = median_us * 0.98;
  t.p5_us = median_us * 0.99;
  t.p95_us = p95_us;
  t.cv = 0.012;
  t.rel_noise = noisy ? 0.021 : 0.004;
  t.samples = samples;
  t.noisy = noisy;
  t.stop_reason = noisy ? "timeout" : "converged";
  return t;
}

inline VerifyResult make_verify(double rel_l2_err, double tolerance) {
  VerifyResult v;
  v.checked = true;
  v.rel_l2_err = rel_l2_err;
  v.max_abs_err = rel_l2_err * 4;
  v.tolerance = tolerance;
  v.rows_checked = 512;
  v.rows_total = 512;
  v.sampling = "all";
  return v;
}

// One row of every status, in the order a sweep might print them.
inline std::vector<Result> sample_results() {
  std::vector<Result> rows;

  Result cpu;  // passed, CPU timing, nothing above 1 TFLOP/s
  cpu.provider = "cpu.flash";
  cpu.status = Status::passed;
  cpu.spec = make_spec(1, 12, 12, 2048, 2048, 64, DType::fp32, {MaskKind::causal_tl, 0}, Mode::fwd);
  cpu.seed = 20261129;
  cpu.device = "AMD EPYC 9654 (16 threads)";
  cpu.timing = make_timing("cpu-wall", 48231.5, 49874.25, 12, false);
  cpu.flops = 6445596672;
  cpu.bytes = 25165824;
  cpu.tflops = 0.13364;
  cpu.gbps = 0.521774;
  cpu.tokens_per_s = 42462.4;
  cpu.flop_convention = std::string(kFlopConvention);
  cpu.bound = "compute";
  cpu.memory = {27262976, 2097152, 25165824, 0, 134217728};
  cpu.verify = make_verify(3.1e-7, 1e-5);
  cpu.started_at = "2026-01-12T09:30:00Z";
  rows.push_back(cpu);

  Result gpu;  // passed but noisy; GQA with bottom-right causal; kernel names with commas
  gpu.provider = "cuda.flash2";
  gpu.status = Status::passed;
  gpu.spec = make_spec(2, 32, 8, 512, 4096, 128, DType::bf16, {MaskKind::causal_br, 0}, Mode::fwd);
  gpu.seed = std::numeric_limits<uint64_t>::max();  // beyond int64: written as unsigned
  gpu.device = "NVIDIA H200";
  gpu.timing = make_timing("cold", 85.25, 91.5, 240, true);
  gpu.timing.launches_per_sample = 8;
  gpu.timing.clock_mhz = 1980;
  gpu.flops = 64432898048;
  gpu.bytes = 50331648;
  gpu.tflops = 755.81;
  gpu.gbps = 590.4;
  gpu.tokens_per_s = 12011730;
  gpu.flop_convention = std::string(kFlopConvention);
  gpu.pct_peak_flops = 76.4;
  gpu.pct_peak_bw = 14.2;
  gpu.bound = "compute";
  gpu.memory = {51380224, 1048576, 50331648, 1048576, 0};
  gpu.verify = make_verify(0.00213, 0.02);
  gpu.verify.sampling = "stratified";
  gpu.kernels = {
      {"void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>, true>", 8, 660.0},
      {"fill_poison", 1, 2.5}};
  gpu.started_at = "2026-01-12T09:30:02Z";
  rows.push_back(gpu);

  Result unsupported;  // never ran: no timing, memory or verification
  unsupported.provider = "cudnn.sdpa";
  unsupported.status = Status::not_supported;
  unsupported.reason = "head_dim 96 not supported, needs \"64\" or \"128\"";
  unsupported.spec = make_spec(4, 16, 16, 1024, 1024, 96, DType::fp16, {}, Mode::fwd);
  unsupported.seed = 20261129;
  unsupported.device = "NVIDIA H200";
  unsupported.memory.analytic_bytes = 50331648;
  rows.push_back(unsupported);

  Result wrong;  // incorrect: the poison survived, so the error is NaN
  wrong.provider = "cuda.naive";
  wrong.status = Status::incorrect;
  wrong.reason = "rel_l2_err nan > tolerance 2.0e-02 (b0 h3 row 17, O); 4096 NaN outputs";
  wrong.spec = make_spec(1, 8, 8, 1000, 1000, 64, DType::fp16, {MaskKind::window, 128}, Mode::fwd);
  wrong.seed = 0;
  wrong.device = "NVIDIA H200";
  wrong.memory = {20096000, 16000000, 4096000, 0, 0};
  wrong.verify = make_verify(std::numeric_limits<double>::quiet_NaN(), 0.02);
  wrong.verify.nan_count = 4096;
  rows.push_back(wrong);

  Result oom;
  oom.provider = "torch.sdpa.math";
  oom.status = Status::oom;
  oom.reason = "CUDA out of memory: tried to allocate 128.00 GiB";
  oom.spec =
      make_spec(8, 32, 32, 32768, 32768, 128, DType::bf16, {MaskKind::causal_tl, 0}, Mode::fwd_bwd);
  oom.device = "NVIDIA H200";
  oom.memory.analytic_bytes = 17179869184;
  rows.push_back(oom);

  Result failed;  // the worker died; the reason spans lines
  failed.provider = "cuda.flash2";
  failed.status = Status::failed;
  failed.reason = "worker killed by signal 11 (SIGSEGV)\nlast CUDA call: cudaLaunchKernel";
  failed.spec = make_spec(1, 1, 1, 65536, 65536, 256, DType::fp16, {}, Mode::bwd);
  failed.seed = 7;
  failed.device = "NVIDIA H200";
  rows.push_back(failed);

  Result timeout;
  timeout.provider = "cpu.naive";
  timeout.status = Status::timeout;
  timeout.reason = "no result after 120 s; the worker was replaced";
  timeout.spec = make_spec(16, 16, 16, 8192, 8192, 128, DType::fp32, {}, Mode::fwd);
  timeout.device = "AMD EPYC 9654 (16 threads)";
  rows.push_back(timeout);

  Result skipped;
  skipped.provider = "torch.sdpa.math";
  skipped.status = Status::skipped;
  skipped.reason = "a smaller size of this series ran out of memory";
  skipped.spec =
      make_spec(8, 32, 32, 65536, 65536, 128, DType::bf16, {MaskKind::causal_tl, 0}, Mode::fwd_bwd);
  skipped.device = "NVIDIA H200";  // never tried: no seed
  rows.push_back(skipped);

  return rows;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

inline std::filesystem::path golden_path(const std::string& name) {
  return std::filesystem::path(ATTNPROF_TEST_GOLDEN_DIR) / name;
}

// Compares `actual` with tests/golden/<name>. On a mismatch the actual text is written next to
// the test's temp dir for diffing. ATTNPROF_UPDATE_GOLDEN=1 rewrites the golden file instead
// (review the diff before committing it); the test is then reported as skipped, never passed.
inline void expect_golden(const std::string& name, const std::string& actual) {
  const std::filesystem::path golden = golden_path(name);
  if (const char* update = std::getenv("ATTNPROF_UPDATE_GOLDEN"); update && *update == '1') {
    write_text(golden, actual);
    GTEST_SKIP() << "rewrote " << golden;
  }
  ASSERT_TRUE(std::filesystem::exists(golden)) << golden << " is missing";
  const std::string expected = read_text(golden);
  if (expected != actual) {
    const std::filesystem::path got = std::filesystem::path(::testing::TempDir()) / name;
    write_text(got, actual);
    FAIL() << "output differs from " << golden << "\nactual output written to " << got
           << "\n(diff them; if the change is intended, rerun with ATTNPROF_UPDATE_GOLDEN=1)";
  }
}

// A passed, timed H200 row of `provider` at B, Hq/Hkv, N (causal, D64, fp16) with its median and
// extra memory, declaring the traits its name stands for in these tests.
inline Result row(const std::string& provider, int64_t batch, int64_t hq, int64_t hkv, int64_t n,
                  double median_us, int64_t extra_bytes) {
  Result r;
  r.provider = provider;
  r.status = Status::passed;
  r.spec =
      test::make_spec(batch, hq, hkv, n, n, 64, DType::fp16, {MaskKind::causal_tl, 0}, Mode::fwd);
  r.device = "NVIDIA H200";
  r.timing = test::make_timing("cold", median_us, median_us * 1.02, 50, false);
  r.memory.analytic_bytes = 1 << 20;
  r.memory.extra_bytes = extra_bytes;
  r.memory.peak_bytes = r.memory.analytic_bytes + extra_bytes;
  r.tflops = 1;
  r.flops = static_cast<double>(batch * hq * n * n);  // orders shapes by size
  // What the providers declare (traits.hpp); cuda.flash stands for a fused kernel of ours.
  r.traits.name = provider;
  r.traits.description = "test row";
  r.traits.device = DeviceKind::cuda;
  if (provider == "cuda.naive") {
    r.traits.family = Family::naive;
    r.traits.role = Role::baseline;
  } else if (provider == "cuda.naive.expand") {
    r.traits.family = Family::naive;
    r.traits.role = Role::gqa_expansion;
    r.traits.variant_of = "cuda.naive";
  } else if (provider == "torch.sdpa.default") {
    r.traits.family = Family::dispatcher;
  } else {
    r.traits.family = Family::fused;
    r.traits.fused = true;
  }
  return r;
}

}  // namespace attnprof::test
