// The CUDA engine's timer and clocks (src/measure/cuda/cuda_timer.cpp, sm_clock.cpp) against
// kernels of known length. Each test skips with the engine's reason where there is no GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "engine_test_util.hpp"
#include "measure/cuda/sm_clock.hpp"

namespace attnprof::testing {
namespace {

constexpr uint64_t kSpinNs = 2'000'000;  // 2 ms
constexpr double kSpinUs = 2000.0;

// The figures behind each check go into the gtest JSON report (--gtest_output=json:...).
void record(const std::string& what, const TimingResult& t) {
  ::testing::Test::RecordProperty(what + "_median_us", std::to_string(t.median_us));
  ::testing::Test::RecordProperty(what + "_p95_us", std::to_string(t.p95_us));
  ::testing::Test::RecordProperty(what + "_samples", std::to_string(t.samples));
  ::testing::Test::RecordProperty(what + "_launches_per_sample",
                                  std::to_string(t.launches_per_sample));
  ::testing::Test::RecordProperty(what + "_clock_mhz", std::to_string(t.clock_mhz));
  ::testing::Test::RecordProperty(what + "_stop", t.stop_reason);
}

// Runs everywhere: without a GPU the engine explains itself in words and refuses to measure.
TEST(CudaEngineAvailability, ExplainsItselfOrDescribesTheDevice) {
  cuda::CudaEngine engine(0);
  const Availability a = engine.availability();
  const Fingerprint f = engine.fingerprint();
  EXPECT_EQ(engine.kind(), DeviceKind::cuda);
  EXPECT_TRUE(f.count("cuda_runtime")) << "the runtime version is known without a driver";
  if (!a.available) {
    EXPECT_NE(a.reason.find("CUDA"), std::string::npos) << a.reason;
    SpinRun run(1000);
    NoTensors none;
    EXPECT_THROW(engine.measure(run, none, MeasureOptions{}), std::runtime_error);
    return;
  }
  const Device& d = engine.device();
  EXPECT_FALSE(d.name.empty());
  EXPECT_GT(d.sm_count, 0);
  EXPECT_GT(d.l2_bytes, 0);
  EXPECT_GT(d.clock_khz, 0);
  EXPECT_GT(d.memory_bytes, int64_t{1} << 30);
  for (const char* key : {"gpu", "gpu_sm_count", "gpu_cc", "cuda_driver", "cublas", "driver"}) {
    EXPECT_TRUE(f.count(key)) << key;
  }
  EXPECT_EQ(f.at("gpu"), d.name);
  EXPECT_NE(engine.tracker(), nullptr);
  for (const auto& [key, value] : f) ::testing::Test::RecordProperty(key, value);
}

TEST(CudaEngineAvailability, NoSuchDeviceIsUnavailableWithAReason) {
  cuda::CudaEngine engine(1000);
  EXPECT_FALSE(engine.availability().available);
  EXPECT_FALSE(engine.availability().reason.empty());
}

TEST_F(CudaEngineTest, SpinOfKnownLengthWithinTwoPercentCold) {
  SpinRun run(kSpinNs);
  run.launch(engine().stream(), Io{});
  const TimingResult t = engine().measure(run, none_, quick("cold"));
  record("cold", t);
  EXPECT_NEAR(t.median_us, kSpinUs, 0.02 * kSpinUs);
  EXPECT_EQ(t.mode, "cold");
  EXPECT_EQ(t.launches_per_sample, 1);
  EXPECT_GE(t.samples, 10);
  EXPECT_GT(t.clock_mhz, 0);
  EXPECT_LE(t.p5_us, t.median_us);
  EXPECT_GE(t.p95_us, t.median_us);
}

TEST_F(CudaEngineTest, KernelOnAnotherStreamIsNotCounted) {
  cudaStream_t side = nullptr;
  ATTNPROF_CUDA(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  // Each launch also queues a 5 ms spin on the side stream: those run concurrently for the
  // whole measurement, and counting them would read >= 5 ms.
  SpinRun run(kSpinNs, side, 5'000'000);
  run.launch(engine().stream(), Io{});
  const TimingResult t = engine().measure(run, none_, quick("cold"));
  ATTNPROF_CUDA(cudaStreamSynchronize(side));
  ATTNPROF_CUDA(cudaStreamDestroy(side));
  record("with_side_stream", t);
  EXPECT_NEAR(t.median_us, kSpinUs, 0.02 * kSpinUs);
}

TEST_F(CudaEngineTest, CycleSpinMatchesTheMeasuredClock) {
  // 2 ms at the rated clock; it lasts cycles / f for the clock the engine measured.
  const auto cycles = static_cast<uint64_t>(2e-3 * engine().device().clock_khz * 1e3);
  CyclesRun run(cycles);
  run.launch(engine().stream(), Io{});
  const TimingResult t = engine().measure(run, none_, quick("cold"));
  record("cycles", t);
  ASSERT_GT(t.clock_mhz, 0);
  const double expected_us = static_cast<double>(cycles) / t.clock_mhz;
  EXPECT_NEAR(t.median_us, expected_us, 0.02 * expected_us) << "clock " << t.clock_mhz << " MHz";
}

TEST_F(CudaEngineTest, ClockWithinTenPercentOfRated) {
  const double rated_mhz = engine().device().clock_khz / 1e3;
  cuda::SmClock clock(engine().device().sm_count);
  cuda::launch_spin_ns(20'000'000, stream());  // let the clock ramp up from idle
  clock.start(stream());
  cuda::launch_spin_ns(5'000'000, stream());
  clock.stop(stream());
  ATTNPROF_CUDA(cudaStreamSynchronize(stream()));
  RecordProperty("probe_mhz", std::to_string(clock.mhz()));
  RecordProperty("rated_mhz", std::to_string(rated_mhz));
  EXPECT_NEAR(clock.mhz(), rated_mhz, 0.1 * rated_mhz);

  SpinRun run(kSpinNs);
  const TimingResult t = engine().measure(run, none_, quick("hot"));
  record("hot", t);
  EXPECT_NEAR(t.clock_mhz, rated_mhz, 0.1 * rated_mhz);
  EXPECT_EQ(t.dropped_throttled, 0);
}

// Q, K and V of B1 H8 N4096 D64 bf16: 12 MiB, in L2 for a hot batch.
Spec l2_resident_spec() {
  Spec s;
  s.q_heads = s.kv_heads = 8;
  s.q_len = s.kv_len = 4096;
  s.head_dim = 64;
  s.dtype = DType::bf16;
  return s;
}

TEST_F(CudaEngineTest, ColdIsSlowerThanHotForTensorsThatFitInL2) {
  const Spec spec = l2_resident_spec();
  auto tensors = engine().allocate(spec, false, InputFill{1});
  ASSERT_LT(tensors->bytes(), engine().device().l2_bytes / 2) << "the tensors must fit in L2";
  ReadRun run;
  const Io first[] = {tensors->io()};
  run.bind(first);
  for (int i = 0; i < 3; ++i) run.launch(engine().stream(), tensors->io());
  const TimingResult hot = engine().measure(run, *tensors, quick("hot"));
  const TimingResult cold = engine().measure(run, *tensors, quick("cold"));
  record("hot", hot);
  record("cold", cold);
  RecordProperty("most_bound", std::to_string(run.most_bound()));
  // Reading 12 MiB takes a few microseconds: both are timed in batches, cold over copies of the
  // harness's tensors that together exceed 2x L2, so every launch of a cold batch reads HBM.
  EXPECT_GT(hot.launches_per_sample, 1);
  EXPECT_GT(cold.launches_per_sample, 1);
  EXPECT_EQ(hot.copies, 1);
  EXPECT_GT(cold.copies, 2);
  EXPECT_EQ(run.most_bound(), cold.copies);
  EXPECT_GT(run.distinct_sets_launched(), 2u);
  EXPECT_EQ(run.bound(), 1) << "the engine binds copy 0 alone again";
  EXPECT_EQ(run.last_q(), tensors->io().q.data) << "the last timed launch is on copy 0";
  EXPECT_GT(cold.median_us, 1.2 * hot.median_us)
      << "cold " << cold.median_us << " us, hot " << hot.median_us << " us";
  // Without rotation a cold batch re-reads what its first launch left in L2: hot in disguise.
  MeasureOptions same_copy = quick("cold");
  same_copy.rotate = false;
  const TimingResult unrotated = engine().measure(run, *tensors, same_copy);
  record("cold_unrotated", unrotated);
  EXPECT_EQ(unrotated.copies, 1);
  EXPECT_LT(unrotated.median_us, 0.9 * cold.median_us);
}

TEST_F(CudaEngineTest, BatchedColdAgreesWithSingleLaunchCold) {
  // A kernel of ~25 us that reads its tensors: batched cold samples (rotating copies) and one
  // launch per cold sample (L2 flushed before each) must see the same cost per launch. Single
  // launches carry the event timer's 0.5 us resolution, so they are compared within a noise
  // band of 2% or 1 us, whichever is larger.
  Spec spec = l2_resident_spec();
  spec.batch = 4;  // K and V 32 MiB: reads from HBM take ~10 us
  // Q and O small: the run writes O (every timed sample must), and a batch pays the previous
  // launch's write-back, which a single launch after an L2 flush does not (seen: 16 MiB of O
  // made batched read 8% above single); this test is about the reads.
  spec.q_len = 256;
  auto tensors = engine().allocate(spec, false, InputFill{2});
  ReadRun run;
  const Io first[] = {tensors->io()};
  run.bind(first);
  run.launch(engine().stream(), tensors->io());
  MeasureOptions single = quick("cold");
  single.launches_per_sample = 1;
  const TimingResult one = engine().measure(run, *tensors, single);
  const TimingResult batched = engine().measure(run, *tensors, quick("cold"));
  record("single", one);
  record("batched", batched);
  EXPECT_EQ(one.launches_per_sample, 1);
  EXPECT_GT(batched.launches_per_sample, 1);
  EXPECT_GT(batched.copies, 1);
  const double band = std::max(0.02 * one.median_us, 1.0);
  EXPECT_NEAR(batched.median_us, one.median_us, band)
      << "batched " << batched.median_us << " us, single " << one.median_us << " us";
}

TEST_F(CudaEngineTest, RecoverPolicyIdlesBetweenSamplesAndSaysSo) {
  SpinRun run(kSpinNs);
  run.launch(engine().stream(), Io{});
  MeasureOptions o = quick("cold");
  o.clock = ClockPolicy::recover;
  const auto t0 = std::chrono::steady_clock::now();
  const TimingResult t = engine().measure(run, none_, o);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  record("recover", t);
  EXPECT_EQ(t.clock_policy, "recover");
  EXPECT_NEAR(t.median_us, kSpinUs, 0.02 * kSpinUs);
  // Each sample is preceded by an idle gap of twice its length: wall time >= 3x measured.
  EXPECT_GE(wall, 3.0 * t.median_us * 1e-6 * static_cast<double>(t.samples));
  const TimingResult s = engine().measure(run, none_, quick("cold"));
  EXPECT_EQ(s.clock_policy, "sustained");
  RecordProperty("power_w", std::to_string(s.power_w));
}

TEST_F(CudaEngineTest, ShortLaunchesAreBatched) {
  SpinRun run(10'000);  // 10 us
  run.launch(engine().stream(), Io{});
  const TimingResult t = engine().measure(run, none_, quick("hot"));
  record("hot", t);
  EXPECT_GE(t.launches_per_sample, 10);
  // Per launch: the spin plus the gap between back-to-back kernels (about a microsecond).
  EXPECT_GE(t.median_us, 9.9);
  EXPECT_LE(t.median_us, 13.0);
}

TEST_F(CudaEngineTest, GraphAndWallModes) {
  SpinRun run(kSpinNs);
  run.launch(engine().stream(), Io{});
  const TimingResult g = engine().measure(run, none_, quick("graph"));
  record("graph", g);
  EXPECT_EQ(g.mode, "graph");
  EXPECT_NEAR(g.median_us, kSpinUs, 0.02 * kSpinUs);
  const TimingResult w = engine().measure(run, none_, quick("wall"));
  record("wall", w);
  EXPECT_EQ(w.mode, "wall");
  // Host time includes the launch call and the synchronize's wake-up: a little over 2 ms.
  EXPECT_GE(w.median_us, kSpinUs);
  EXPECT_LE(w.median_us, 1.1 * kSpinUs);

  SpinRun short_run(5'000);
  const TimingResult gs = engine().measure(short_run, none_, quick("graph"));
  record("graph_short", gs);
  EXPECT_GT(gs.launches_per_sample, 1);
  EXPECT_GE(gs.median_us, 5.0);
  EXPECT_THROW(engine().measure(run, none_, quick("lukewarm")), std::invalid_argument);
}

}  // namespace
}  // namespace attnprof::testing
