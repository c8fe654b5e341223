// The harness's audits on the GPU (docs/method.md, "What a provider cannot fake"): cuda.naive's
// correct run, cheating through plain CUDA calls on the harness's device memory, ends with the
// row that says what it did, at a small shape and at one large enough that the verification's
// repeat launches are skipped (the shape an H200 check once let a lazy provider pass at).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>

#include "attnprof/digest.hpp"
#include "attnprof/registry.hpp"
#include "attnprof/runner.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "engine_test_util.hpp"
#include "wrapped_provider.hpp"

namespace attnprof::testing {
namespace {

enum class Cheat { none, lazy, memoize, zero_q, past_end, side_stream, legacy_stream };

class CheatRun final : public test::WrappedRun {
 public:
  CheatRun(std::unique_ptr<Run> inner, Cheat c) : WrappedRun(std::move(inner)), cheat_(c) {
    if (cheat_ == Cheat::side_stream)
      ATTNPROF_CUDA(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
  }
  ~CheatRun() override {
    if (side_) {
      (void)cudaStreamSynchronize(side_);
      (void)cudaStreamDestroy(side_);
    }
  }
  void launch(Stream& s, const Io& io) override {
    const auto stream = static_cast<cudaStream_t>(s.native);
    ++launches_;
    if (cheat_ == Cheat::lazy && launches_ > 1) return;
    if (cheat_ == Cheat::memoize && launches_ > 1) {
      ATTNPROF_CUDA(cudaMemcpyAsync(io.o.data, kept_.data(), size_t(io.o.bytes()),
                                    cudaMemcpyDeviceToDevice, stream));
      return;
    }
    if (cheat_ == Cheat::zero_q && launches_ > 1)
      ATTNPROF_CUDA(cudaMemsetAsync(io.q.data, 0, size_t(io.q.bytes()), stream));
    Stream elsewhere{cheat_ == Cheat::side_stream ? side_ : nullptr};
    const bool off = cheat_ == Cheat::side_stream || cheat_ == Cheat::legacy_stream;
    WrappedRun::launch(off ? elsewhere : s, io);  // off the timed stream: never joined
    if (cheat_ == Cheat::memoize && launches_ == 1) {
      kept_ = cuda::DeviceBuffer(io.o.bytes(), nullptr);
      ATTNPROF_CUDA(cudaMemcpyAsync(kept_.data(), io.o.data, size_t(io.o.bytes()),
                                    cudaMemcpyDeviceToDevice, stream));
    }
    if (cheat_ == Cheat::past_end)
      ATTNPROF_CUDA(cudaMemsetAsync(static_cast<char*>(io.o.data) + io.o.bytes(), 0, 16, stream));
  }

 private:
  Cheat cheat_;
  int launches_ = 0;
  cudaStream_t side_ = nullptr;
  cuda::DeviceBuffer kept_;
};

class CheatProvider final : public test::WrappedProvider {
 public:
  explicit CheatProvider(Cheat c)
      : WrappedProvider("cuda.naive", "test.cheat.gpu." + std::to_string(int(c)),
                        "cuda.naive, cheating"),
        cheat_(c) {}

 private:
  std::unique_ptr<Run> wrap(std::unique_ptr<Run> inner, const Io&) override {
    return std::make_unique<CheatRun>(std::move(inner), cheat_);
  }
  Cheat cheat_;
};

Spec shape(bool large) {
  Spec s;
  s.batch = large ? 8 : 1;
  s.q_heads = large ? 16 : 4;
  s.kv_heads = large ? 16 : 2;
  s.q_len = s.kv_len = large ? 4096 : 256;
  s.head_dim = large ? 128 : 64;
  s.dtype = DType::bf16;
  s.mask = {MaskKind::causal_tl, 0};
  return s;
}

RunOptions options() {
  RunOptions o;
  o.measure.rule.min_time_s = 0.02;
  o.measure.rule.timeout_s = 2.0;
  o.measure.rule.min_samples = 5;
  o.auto_peaks = AutoPeaks::gpu;
  return o;
}

Result run_cheat(Cheat c, bool large) {
  CheatProvider p(c);
  return run_point(shape(large), p, process_engine(), options());
}

void expect(Cheat c, Status status, Fault fault, const std::string& in_reason) {
  for (const bool large : {false, true}) {
    const Result r = run_cheat(c, large);
    EXPECT_EQ(r.status, status) << (large ? "large: " : "small: ") << r.reason;
    EXPECT_EQ(r.fault, fault) << to_string(r.fault) << ": " << r.reason;
    EXPECT_NE(r.reason.find(in_reason), std::string::npos) << r.reason;
  }
}

TEST(GpuRunnerAudits, AnHonestProviderPassesAtBothShapes) {
  REQUIRE_ENGINE();
  for (const bool large : {false, true}) {
    const Result r = run_cheat(Cheat::none, large);
    EXPECT_EQ(r.status, Status::passed) << r.reason;
    EXPECT_GT(r.tflops, 0);
  }
}

TEST(GpuRunnerAudits, ALazyProviderIsUnwritten) {
  REQUIRE_ENGINE();
  expect(Cheat::lazy, Status::incorrect, Fault::unwritten, "timed sample 1");
}

TEST(GpuRunnerAudits, AMemoizedOutputIsStaleOrImplausible) {
  REQUIRE_ENGINE();
  for (const bool large : {false, true}) {
    const Result r = run_cheat(Cheat::memoize, large);
    EXPECT_EQ(r.status, Status::incorrect) << r.reason;
    EXPECT_TRUE(r.fault == Fault::stale || r.fault == Fault::implausible)
        << to_string(r.fault) << ": " << r.reason;
  }
}

TEST(GpuRunnerAudits, AnInputZeroedInPlaceIsNamed) {
  REQUIRE_ENGINE();
  expect(Cheat::zero_q, Status::failed, Fault::modified_inputs, "input q");
}

TEST(GpuRunnerAudits, AWritePastTheEndOfOIsOutOfBounds) {
  REQUIRE_ENGINE();
  expect(Cheat::past_end, Status::failed, Fault::out_of_bounds, "past the end of o");
}

TEST(GpuRunnerAudits, WorkOffTheTimedStreamIsAFailedTiming) {
  REQUIRE_ENGINE();
  expect(Cheat::side_stream, Status::failed, Fault::off_stream, "stream the timed stream");
  expect(Cheat::legacy_stream, Status::failed, Fault::off_stream, "stream the timed stream");
}

}  // namespace
}  // namespace attnprof::testing
