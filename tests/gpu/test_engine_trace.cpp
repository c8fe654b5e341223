// The CUPTI tracer (src/trace/cuda/cupti_tracer.cpp): demangled names, counts, durations and the
// stream each kernel ran on. Under ncu or compute-sanitizer CUPTI is taken: the tracer says so
// and these tests skip with its note.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "cuda/cupti_tracer.hpp"
#include "engine_test_util.hpp"

namespace attnprof::testing {
namespace {

TEST(CuptiDemangle, DemanglesCxxNamesAndKeepsOthers) {
  EXPECT_EQ(cuda::demangle("_ZN8attnprof4cuda14spin_ns_kernelEm"),
            "attnprof::cuda::spin_ns_kernel(unsigned long)");
  EXPECT_EQ(cuda::demangle("nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_TNT"),
            "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_TNT");
  EXPECT_EQ(cuda::demangle(nullptr), "?");
}

TEST(CuptiAggregate, GroupsByNameInOrderOfFirstAppearance) {
  using A = cuda::TraceActivity;
  std::vector<A> acts(4);
  acts[0] = {A::Kind::kernel, "gemm", 0, 10'000, 0, 7, 1, 0};
  acts[1] = {A::Kind::kernel, "softmax", 10'000, 12'000, 0, 7, 2, 0};
  acts[2] = {A::Kind::memset, "memset", 12'000, 13'000, 0, 7, 3, 64};
  acts[3] = {A::Kind::kernel, "gemm", 13'000, 23'000, 0, 7, 4, 0};
  const auto k = cuda::aggregate_kernels(acts);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].name, "gemm");
  EXPECT_EQ(k[0].count, 2);
  EXPECT_DOUBLE_EQ(k[0].total_us, 20.0);
  EXPECT_EQ(k[1].name, "softmax");
  EXPECT_EQ(k[1].count, 1);
  EXPECT_DOUBLE_EQ(k[1].total_us, 2.0);
}

TEST_F(CudaEngineTest, CuptiSeesTheSpinKernelOnTheTimedStream) {
  SpinRun run(50'000);  // 50 us
  run.launch(engine().stream(), Io{});
  const cuda::TraceCapture cap =
      cuda::trace_activities([&] { run.launch(engine().stream(), Io{}); }, stream());
  if (!cap.available) GTEST_SKIP() << cap.note;
  const auto kernels = cuda::aggregate_kernels(cap.activities);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].name.rfind("attnprof::cuda::spin_ns_kernel(", 0), 0u) << kernels[0].name;
  EXPECT_EQ(kernels[0].count, 1);
  EXPECT_GE(kernels[0].total_us, 49.0);
  EXPECT_LE(kernels[0].total_us, 70.0);
  for (const cuda::TraceActivity& a : cap.activities) EXPECT_EQ(a.stream_id, cap.stream_id);

  const KernelTrace via_engine = engine().trace_kernels(run, none_, false);
  EXPECT_EQ(via_engine.note, "");
  EXPECT_TRUE(via_engine.audited);
  EXPECT_EQ(via_engine.off_stream, 0);
  ASSERT_EQ(via_engine.kernels.size(), 1u);  // the window's markers are left out
  EXPECT_EQ(via_engine.kernels[0].name, kernels[0].name);
  EXPECT_EQ(via_engine.kernels[0].count, 1);
}

TEST_F(CudaEngineTest, AKernelOnAStreamTheTimedStreamNeverWaitsForIsOffTheStream) {
  cudaStream_t side = nullptr;
  ATTNPROF_CUDA(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  SpinRun run(20'000, side, 200'000);  // the side spin outlasts the launch's window
  const KernelTrace t = engine().trace_kernels(run, none_, false);
  const KernelTrace own = engine().trace_kernels(run, none_, true);
  ATTNPROF_CUDA(cudaStreamSynchronize(side));
  ATTNPROF_CUDA(cudaStreamDestroy(side));
  if (!t.audited) GTEST_SKIP() << t.note;
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.kernels[0].count, 2);
  EXPECT_EQ(t.off_stream, 1);
  EXPECT_EQ(t.off_stream_first.rfind("attnprof::cuda::spin_ns_kernel(", 0), 0u);
  EXPECT_EQ(own.off_stream, 1);  // outside the window: declaring streams of its own is no excuse
}

// Forks to a side stream and joins it back, as a framework with streams of its own does.
class JoinedRun final : public KernelRun {
 public:
  explicit JoinedRun(cudaStream_t side) : side_(side) {
    ATTNPROF_CUDA(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
    ATTNPROF_CUDA(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming));
  }
  ~JoinedRun() override {
    (void)cudaEventDestroy(fork_);
    (void)cudaEventDestroy(join_);
  }
  void launch(Stream& s, const Io&) override {
    const auto timed = static_cast<cudaStream_t>(s.native);
    ATTNPROF_CUDA(cudaEventRecord(fork_, timed));
    ATTNPROF_CUDA(cudaStreamWaitEvent(side_, fork_));
    cuda::launch_spin_ns(50'000, side_);
    ATTNPROF_CUDA(cudaEventRecord(join_, side_));
    ATTNPROF_CUDA(cudaStreamWaitEvent(timed, join_));
  }

 private:
  cudaStream_t side_;
  cudaEvent_t fork_ = nullptr, join_ = nullptr;
};

TEST_F(CudaEngineTest, AJoinedSideStreamIsOnTheStreamOnlyForAProviderThatDeclaresIt) {
  cudaStream_t side = nullptr;
  ATTNPROF_CUDA(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  {
    JoinedRun run(side);
    const KernelTrace plain = engine().trace_kernels(run, none_, false);
    const KernelTrace own = engine().trace_kernels(run, none_, true);
    if (!plain.audited) GTEST_SKIP() << plain.note;
    EXPECT_EQ(plain.off_stream, 1);
    EXPECT_EQ(own.off_stream, 0);
    ASSERT_EQ(own.kernels.size(), 1u);
  }
  ATTNPROF_CUDA(cudaStreamDestroy(side));
}

}  // namespace
}  // namespace attnprof::testing
