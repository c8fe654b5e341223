// The CUDA engine's ceilings: cuBLAS GEMMs, a device copy and a read-only stream, each timed by
// the engine's cold timer; and the key they are cached under.
#include "attnprof/peaks.hpp"
#include "attnprof/env.hpp"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <stdexcept>

#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/library_versions.hpp"
#include "cuda/tensor_fill.hpp"
#include "measure/cuda/cuda_engine.hpp"
#include "measure/cuda/timing_kernels.hpp"

namespace attnprof {

namespace {

using cuda::DeviceBuffer;

constexpr int64_t kGemmN = 8192;                    // M = N = K
constexpr int64_t kStreamBytes = int64_t{1} << 30;  // each of copy source, destination, read
constexpr uint64_t kSeed = 20261129;

// A (rows x cols) matrix of seeded normal values in `dtype` storage, filled on the device with
// the same generator as attention inputs (never zeros: zeros run faster than real data).
DeviceBuffer random_matrix(int64_t rows, int64_t cols, DType dtype, TensorId which, uint64_t seed,
                           cudaStream_t stream) {
  DeviceBuffer b(rows * cols * static_cast<int64_t>(dtype_bytes(dtype)), nullptr);
  Spec s;
  s.q_len = rows;
  s.kv_len = rows;
  s.head_dim = cols;
  s.dtype = dtype;
  cuda::fill_input(b.data(), s, which, seed, InputPattern::random, stream);
  return b;
}

// Runs that exist only to be timed: they hold their own operands, no point tensors (NoTensors:
// the ceilings are measured on operands far larger than L2, in single launches).
class TimedOnly : public Run {};

class GemmRun final : public TimedOnly {
 public:
  GemmRun(DType dtype, int64_t n, uint64_t seed, cudaStream_t stream) : n_(static_cast<int>(n)) {
    a_ = random_matrix(n, n, dtype, TensorId::q, seed, stream);
    b_ = random_matrix(n, n, dtype, TensorId::k, seed, stream);
    c_ = DeviceBuffer(n * n * static_cast<int64_t>(dtype_bytes(dtype)), nullptr);
    type_ = dtype == DType::bf16 ? CUDA_R_16BF : dtype == DType::fp16 ? CUDA_R_16F : CUDA_R_32F;
    compute_ = dtype == DType::fp32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    ATTNPROF_CUBLAS(cublasCreate(&handle_));
    ATTNPROF_CUDA(cudaStreamSynchronize(stream));
  }
  ~GemmRun() override {
    if (handle_) (void)cublasDestroy(handle_);
  }
  GemmRun(const GemmRun&) = delete;
  GemmRun& operator=(const GemmRun&) = delete;

  void launch(Stream& stream, const Io&) override {
    const auto s = static_cast<cudaStream_t>(stream.native);
    if (s != stream_ || !stream_set_) {
      // cublasSetStream resets the workspace to cuBLAS's default pool: set ours after it.
      ATTNPROF_CUBLAS(cublasSetStream(handle_, s));
      ATTNPROF_CUBLAS(
          cublasSetWorkspace(handle_, workspace_.data(), static_cast<size_t>(workspace_.bytes())));
      stream_ = s;
      stream_set_ = true;
    }
    const float alpha = 1.0f, beta = 0.0f;
    ATTNPROF_CUBLAS(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n_, n_, n_, &alpha, a_.data(),
                                 type_, n_, b_.data(), type_, n_, &beta, c_.data(), type_, n_,
                                 compute_, CUBLAS_GEMM_DEFAULT));
  }

 private:
  int n_;
  DeviceBuffer a_, b_, c_;
  cudaDataType_t type_{};
  cublasComputeType_t compute_{};
  cublasHandle_t handle_ = nullptr;
  // cuBLAS's recommended workspace on Hopper (32 MiB; 4 MiB suffices before it), as PyTorch
  // gives its handles: some of the fastest GEMM kernels need it.
  DeviceBuffer workspace_{int64_t{32} << 20, nullptr};
  cudaStream_t stream_ = nullptr;
  bool stream_set_ = false;
};

// The fp8 rate: D = A^T B with e4m3 A and B (cuBLASLt's fp8 GEMMs take A transposed), fp32
// accumulation, bf16 D, the algorithm cuBLASLt's heuristic ranks first with the same 32 MiB
// workspace.
class Fp8GemmRun final : public TimedOnly {
 public:
  Fp8GemmRun(int64_t n, uint64_t seed, cudaStream_t stream) : n_(static_cast<uint64_t>(n)) {
    a_ = random_matrix(n, n, DType::fp8_e4m3, TensorId::q, seed, stream);
    b_ = random_matrix(n, n, DType::fp8_e4m3, TensorId::k, seed, stream);
    d_ = DeviceBuffer(n * n * 2, nullptr);
    ATTNPROF_CUBLAS(cublasLtCreate(&lt_));
    ATTNPROF_CUBLAS(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t t = CUBLAS_OP_T, none = CUBLAS_OP_N;
    ATTNPROF_CUBLAS(
        cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
    ATTNPROF_CUBLAS(
        cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof none));
    ATTNPROF_CUBLAS(cublasLtMatrixLayoutCreate(&ab_, CUDA_R_8F_E4M3, n_, n_, int64_t(n_)));
    ATTNPROF_CUBLAS(cublasLtMatrixLayoutCreate(&cd_, CUDA_R_16BF, n_, n_, int64_t(n_)));
    cublasLtMatmulPreference_t pref = nullptr;
    ATTNPROF_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
    const size_t ws = static_cast<size_t>(workspace_.bytes());
    ATTNPROF_CUBLAS(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    int found = 0;
    const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt_, desc_, ab_, ab_, cd_, cd_, pref,
                                                             1, &heuristic_, &found);
    (void)cublasLtMatmulPreferenceDestroy(pref);
    ATTNPROF_CUBLAS(st);
    if (found == 0) throw std::runtime_error("cuBLASLt has no fp8 GEMM for this device");
    ATTNPROF_CUDA(cudaStreamSynchronize(stream));
  }
  ~Fp8GemmRun() override {
    if (ab_) (void)cublasLtMatrixLayoutDestroy(ab_);
    if (cd_) (void)cublasLtMatrixLayoutDestroy(cd_);
    if (desc_) (void)cublasLtMatmulDescDestroy(desc_);
    if (lt_) (void)cublasLtDestroy(lt_);
  }
  Fp8GemmRun(const Fp8GemmRun&) = delete;
  Fp8GemmRun& operator=(const Fp8GemmRun&) = delete;

  void launch(Stream& stream, const Io&) override {
    const float alpha = 1.0f, beta = 0.0f;
    ATTNPROF_CUBLAS(cublasLtMatmul(lt_, desc_, &alpha, a_.data(), ab_, b_.data(), ab_, &beta,
                                   d_.data(), cd_, d_.data(), cd_, &heuristic_.algo,
                                   workspace_.data(), static_cast<size_t>(workspace_.bytes()),
                                   static_cast<cudaStream_t>(stream.native)));
  }

 private:
  uint64_t n_;
  DeviceBuffer a_, b_, d_;
  DeviceBuffer workspace_{int64_t{32} << 20, nullptr};
  cublasLtHandle_t lt_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t ab_ = nullptr, cd_ = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic_{};
};

class CopyRun final : public TimedOnly {
 public:
  CopyRun(int64_t bytes, uint64_t seed, cudaStream_t stream) {
    src_ = random_matrix(bytes / 4 / 1024, 1024, DType::fp32, TensorId::v, seed, stream);
    dst_ = DeviceBuffer(src_.bytes(), nullptr);
    ATTNPROF_CUDA(cudaStreamSynchronize(stream));
  }
  void launch(Stream& stream, const Io&) override {
    ATTNPROF_CUDA(cudaMemcpyAsync(dst_.data(), src_.data(), static_cast<size_t>(src_.bytes()),
                                  cudaMemcpyDeviceToDevice,
                                  static_cast<cudaStream_t>(stream.native)));
  }
  int64_t bytes() const { return src_.bytes(); }

 private:
  DeviceBuffer src_, dst_;
};

class ReadRun final : public TimedOnly {
 public:
  ReadRun(int64_t bytes, uint64_t seed, cudaStream_t stream) {
    src_ = random_matrix(bytes / 4 / 1024, 1024, DType::fp32, TensorId::v, seed, stream);
    sink_ = DeviceBuffer(sizeof(uint64_t), nullptr);
    blocks_ = cuda::read_kernel_blocks();
    ATTNPROF_CUDA(cudaStreamSynchronize(stream));
  }
  void launch(Stream& stream, const Io&) override {
    cuda::launch_read(src_.data(), src_.bytes(), sink_.as<uint64_t>(), blocks_,
                      static_cast<cudaStream_t>(stream.native));
  }
  int64_t bytes() const { return src_.bytes(); }

 private:
  DeviceBuffer src_, sink_;
  int blocks_ = 0;
};

// Warm-up (at least 100 ms of launches, so clocks have ramped and libraries have loaded),
// then the engine's timer, keeping samples whatever the clock (below). Returns the median seconds
// per launch.
TimingResult time_run(Engine& engine, Run& run) {
  using Clock = std::chrono::steady_clock;
  const auto stream = static_cast<cudaStream_t>(engine.stream().native);
  const auto t0 = Clock::now();
  do {
    run.launch(engine.stream(), Io{});
    ATTNPROF_CUDA(cudaStreamSynchronize(stream));
  } while (Clock::now() - t0 < std::chrono::milliseconds(100));
  MeasureOptions m;
  m.mode = TimingMode::cold;
  m.keep_throttled = true;
  m.rule.timeout_s = 3.0;
  NoTensors none;
  return engine.measure(run, none, m);
}

// "(1.443 ms median of 312, SM clock 1980 MHz)"
std::string timing_note(const TimingResult& t) {
  return fmt::format("{:.3f} ms median of {}, SM clock {:.0f} MHz{}", t.median_us * 1e-3, t.samples,
                     t.clock_mhz, t.noisy ? ", noisy" : "");
}

}  // namespace

std::string cuda::CudaEngine::peaks_key() const {
  return fmt::format("{}|sm{}|cc{}.{}|mem{}|cuda_driver {}|cuda_runtime {}|cublas {}", device_.name,
                     device_.sm_count, device_.cc_major, device_.cc_minor, device_.memory_bytes,
                     cuda::cuda_driver_version(), cuda::cuda_runtime_version(),
                     cuda::cublas_version());
}

Peaks cuda::CudaEngine::measure_peaks(const std::function<void(const std::string&)>& progress) {
  if (!availability_.available) throw std::runtime_error(availability_.reason);
  Engine& engine = *this;
  const auto stream = static_cast<cudaStream_t>(engine.stream().native);
  Peaks p;
  p.key = peaks_key();
  p.kind = DeviceKind::cuda;
  p.device = engine.device().name;
  p.env = engine.fingerprint();
  const double gemm_flops =
      2.0 * static_cast<double>(kGemmN) * static_cast<double>(kGemmN) * static_cast<double>(kGemmN);
  struct Gemm {
    DType dtype;
    double Peaks::*tflops;
    double Peaks::*clock_mhz;
  };
  const Gemm gemms[] = {{DType::bf16, &Peaks::bf16_tflops, &Peaks::bf16_clock_mhz},
                        {DType::fp16, &Peaks::fp16_tflops, &Peaks::fp16_clock_mhz},
                        {DType::fp32, &Peaks::tf32_tflops, &Peaks::tf32_clock_mhz}};
  // A ceiling is the device's steady state, clock and power caps included: its samples are kept
  // whatever the SM clock (the timer drops those under 75% of the rated clock as throttled).
  // The H200's fp8 GEMM runs there under the 700 W cap (1296-1549 MHz on three machines), and on
  // one machine every bf16 sample did too, which left no sample and an infinite rate. A ceiling
  // with no sample is 0 (unknown), never inf; the note gives the clock.
  const auto rate = [&](double flops, const TimingResult& t) {
    return t.samples > 0 && t.median_us > 0 ? flops / (t.median_us * 1e-6) / 1e12 : 0.0;
  };
  for (const Gemm& g : gemms) {
    GemmRun run(g.dtype, kGemmN, kSeed, stream);
    const TimingResult t = time_run(engine, run);
    p.*g.tflops = rate(gemm_flops, t);
    p.*g.clock_mhz = t.clock_mhz;
    progress(fmt::format("{} GEMM {}^3: {:.1f} TFLOP/s ({})",
                         g.dtype == DType::fp32 ? "tf32" : to_string(g.dtype), kGemmN, p.*g.tflops,
                         timing_note(t)));
  }
  if (engine.device().cc_major * 10 + engine.device().cc_minor >= 89) {
    Fp8GemmRun run(kGemmN, kSeed, stream);
    const TimingResult t = time_run(engine, run);
    p.fp8_tflops = rate(gemm_flops, t);
    p.fp8_clock_mhz = t.clock_mhz;
    progress(fmt::format("fp8 e4m3 GEMM {}^3: {:.1f} TFLOP/s ({})", kGemmN, p.fp8_tflops,
                         timing_note(t)));
  }
  {
    CopyRun run(kStreamBytes, kSeed, stream);
    const TimingResult t = time_run(engine, run);
    p.copy_tbps = rate(2.0 * static_cast<double>(run.bytes()), t);
    progress(fmt::format("device copy {} MiB: {:.3f} TB/s read + write ({})", run.bytes() >> 20,
                         p.copy_tbps, timing_note(t)));
  }
  {
    ReadRun run(kStreamBytes, kSeed, stream);
    const TimingResult t = time_run(engine, run);
    p.read_tbps = rate(static_cast<double>(run.bytes()), t);
    progress(fmt::format("read-only stream {} MiB: {:.3f} TB/s ({})", run.bytes() >> 20,
                         p.read_tbps, timing_note(t)));
  }
  p.measured_at = utc_now_iso8601();
  return p;
}

}  // namespace attnprof
