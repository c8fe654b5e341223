#include "measure/cpu_peaks.hpp"
#include "measure/host_load.hpp"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "attnprof/env.hpp"

extern "C" char* openblas_get_config(void);
extern "C" void openblas_set_num_threads(int);

namespace attnprof {

namespace {

constexpr int kGemmN = 1024;
constexpr int64_t kStreamBytes = int64_t{256} << 20;

// Values that are neither zero nor denormal (zeros multiply faster than real data).
void fill(std::vector<float>& v, uint32_t seed) {
  uint32_t x = seed;
  for (float& f : v) {
    x = x * 1664525u + 1013904223u;
    f = static_cast<float>(x >> 8) / static_cast<float>(1u << 24) - 0.5f;
  }
}

// One sgemm per thread, all at once.
class SgemmRun final : public Run {
 public:
  explicit SgemmRun(int threads) : threads_(threads) {
    const auto size = static_cast<std::size_t>(kGemmN) * kGemmN;
    for (int t = 0; t < threads_; ++t) {
      mats_.push_back(
          {std::vector<float>(size), std::vector<float>(size), std::vector<float>(size, 0.0f)});
      fill(mats_.back().a, 2u * static_cast<uint32_t>(t) + 1u);
      fill(mats_.back().b, 2u * static_cast<uint32_t>(t) + 2u);
    }
  }
  void launch(Stream&, const Io&) override {
#pragma omp parallel for num_threads(threads_) schedule(static, 1)
    for (int t = 0; t < threads_; ++t) {
      Mats& m = mats_[static_cast<std::size_t>(t)];
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kGemmN, kGemmN, kGemmN, 1.0f,
                  m.a.data(), kGemmN, m.b.data(), kGemmN, 0.0f, m.c.data(), kGemmN);
    }
  }
  double flops() const {
    return threads_ * 2.0 * kGemmN * double(kGemmN) * kGemmN;
  }

 private:
  struct Mats {
    std::vector<float> a, b, c;
  };
  int threads_;
  std::vector<Mats> mats_;
};

class ReadRun final : public Run {
 public:
  explicit ReadRun(int threads) : threads_(threads), src_(kStreamBytes / sizeof(uint64_t)) {
    uint64_t x = 7;
    for (uint64_t& w : src_) w = x = x * 6364136223846793005ull + 1442695040888963407ull;
  }
  void launch(Stream&, const Io&) override {
    // An integer XOR: vectorized without reassociating floating point, so the loads, not an
    // add's latency, set the pace.
    const auto n = static_cast<int64_t>(src_.size());
    const uint64_t* src = src_.data();
    uint64_t acc = 0;
#pragma omp parallel for num_threads(threads_) reduction(^ : acc) schedule(static)
    for (int64_t i = 0; i < n; ++i) acc ^= src[i];
    sink_ = acc;  // volatile: the reduction is not optimized away
  }
  double bytes() const {
    return static_cast<double>(src_.size() * sizeof(uint64_t));
  }

 private:
  int threads_;
  std::vector<uint64_t> src_;
  volatile uint64_t sink_ = 0;
};

class CopyRun final : public Run {
 public:
  explicit CopyRun(int threads)
      : threads_(threads), src_(kStreamBytes / 2 / sizeof(float)), dst_(src_.size()) {
    fill(src_, 11u);
  }
  void launch(Stream&, const Io&) override {
    constexpr int64_t kChunk = int64_t{1} << 18;  // floats per task: 1 MiB
    const auto n = static_cast<int64_t>(src_.size());
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (int64_t at = 0; at < n; at += kChunk) {
      const auto count = static_cast<std::size_t>(std::min(kChunk, n - at));
      std::memcpy(dst_.data() + at, src_.data() + at, count * sizeof(float));
    }
  }
  // Read plus written.
  double bytes() const {
    return 2.0 * static_cast<double>(src_.size() * sizeof(float));
  }

 private:
  int threads_;
  std::vector<float> src_, dst_;
};

// One untimed launch, then the engine's timer: at least 5 samples and 0.2 s.
TimingResult time_run(Engine& engine, Run& run) {
  run.launch(engine.stream(), Io{});
  MeasureOptions m;
  m.rule.min_samples = 5;
  m.rule.min_time_s = 0.2;
  m.rule.timeout_s = 2.0;
  m.rule.max_noise = 0.01;
  NoTensors none;
  return engine.measure(run, none, m);
}

std::string timing_note(const TimingResult& t) {
  return fmt::format("{:.3f} ms median of {}{}", t.median_us * 1e-3, t.samples,
                     t.noisy ? ", noisy" : "");
}

}  // namespace

std::string cpu_peaks_key(const Device& device) {
  return fmt::format("{}|threads {}|{}", device.name, device.threads, openblas_get_config());
}

Peaks measure_cpu_peaks(Engine& engine, const std::function<void(const std::string&)>& progress) {
  openblas_set_num_threads(1);  // as the CPU providers call it: one BLAS thread per OpenMP thread
  const int threads = std::max(1, engine.device().threads);
  Peaks p;
  p.key = cpu_peaks_key(engine.device());
  p.device = engine.device().name;
  p.kind = DeviceKind::cpu;
  p.env = engine.fingerprint();
  p.env["blas"] = openblas_get_config();
  const CpuTimes before = read_cpu_times();
  {
    SgemmRun run(threads);
    const TimingResult t = time_run(engine, run);
    p.fp32_tflops = run.flops() / (t.median_us * 1e-6) / 1e12;
    progress(fmt::format("fp32 sgemm {}^3 on each of {} threads: {:.3f} TFLOP/s ({})", kGemmN,
                         threads, p.fp32_tflops, timing_note(t)));
  }
  {
    CopyRun run(threads);
    const TimingResult t = time_run(engine, run);
    p.copy_tbps = run.bytes() / (t.median_us * 1e-6) / 1e12;
    progress(fmt::format("copy {} MiB: {:.1f} GB/s read + write ({})", kStreamBytes >> 21,
                         p.copy_tbps * 1e3, timing_note(t)));
  }
  {
    ReadRun run(threads);
    const TimingResult t = time_run(engine, run);
    p.read_tbps = run.bytes() / (t.median_us * 1e-6) / 1e12;
    progress(fmt::format("read-only stream {} MiB: {:.1f} GB/s ({})", kStreamBytes >> 20,
                         p.read_tbps * 1e3, timing_note(t)));
  }
  p.host_busy = others_busy_share(before, read_cpu_times());
  if (p.host_busy > kBusyHost) {
    progress(
        fmt::format("other processes used {:.0f}% of the host's CPU time meanwhile: these "
                    "figures read low",
                    100 * p.host_busy));
  }
  p.measured_at = utc_now_iso8601();
  return p;
}

}  // namespace attnprof
