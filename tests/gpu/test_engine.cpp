// The CUDA engine's timer and clocks (src/measure/cuda/cuda_timer.cpp, sm_clock.cpp) against
// kernels of known length. Each test skips with the engine's reason where there is no GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

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
    EXPECT_THROW(engine.measure(run, MeasureOptions{}), std::runtime_error);
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
  run.launch(engine().stream());
  const TimingResult t = engine().measure(run, quick("cold"));
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
  run.launch(engine().stream());
  const TimingResult t = engine().measure(run, quick("cold"));
  ATTNPROF_CUDA(cudaStreamSynchronize(side));
  ATTNPROF_CUDA(cudaStreamDestroy(side));
  record("with_side_stream", t);
  EXPECT_NEAR(t.median_us, kSpinUs, 0.02 * kSpinUs);
}

TEST_F(CudaEngineTest, CycleSpinMatchesTheMeasuredClock) {
  // 2 ms at the rated clock; it lasts cycles / f for the clock the engine measured.
  const auto cycles = static_cast<uint64_t>(2e-3 * engine().device().clock_khz * 1e3);
  CyclesRun run(cycles);
  run.launch(engine().stream());
  const TimingResult t = engine().measure(run, quick("cold"));
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
  const TimingResult t = engine().measure(run, quick("hot"));
  record("hot", t);
  EXPECT_NEAR(t.clock_mhz, rated_mhz, 0.1 * rated_mhz);
  EXPECT_EQ(t.dropped_throttled, 0);
}

TEST_F(CudaEngineTest, ColdIsSlowerThanHotForABufferThatFitsInL2) {
  const int64_t bytes = int64_t{16} << 20;
  ASSERT_LT(bytes, engine().device().l2_bytes / 2) << "the buffer must fit in L2";
  ReadRun run(bytes);
  for (int i = 0; i < 3; ++i) run.launch(engine().stream());
  const TimingResult hot = engine().measure(run, quick("hot"));
  const TimingResult cold = engine().measure(run, quick("cold"));
  record("hot", hot);
  record("cold", cold);
  RecordProperty("most_copies", std::to_string(run.most_copies()));
  // A 16 MiB read takes a few microseconds: both are timed in batches, cold over rotating
  // copies that together exceed 2x L2, so every launch in a cold batch reads from HBM.
  EXPECT_GT(hot.launches_per_sample, 1);
  EXPECT_GT(cold.launches_per_sample, 1);
  EXPECT_GT(run.most_copies(), 2);
  EXPECT_EQ(run.copies(), 1) << "the engine releases the copies";
  EXPECT_EQ(run.selected(), 0) << "the engine selects copy 0 again";
  EXPECT_GT(cold.median_us, 1.2 * hot.median_us)
      << "cold " << cold.median_us << " us, hot " << hot.median_us << " us";
}

TEST_F(CudaEngineTest, ShortLaunchesAreBatched) {
  SpinRun run(10'000);  // 10 us
  run.launch(engine().stream());
  const TimingResult t = engine().measure(run, quick("hot"));
  record("hot", t);
  EXPECT_GE(t.launches_per_sample, 10);
  // Per launch: the spin plus the gap between back-to-back kernels (about a microsecond).
  EXPECT_GE(t.median_us, 9.9);
  EXPECT_LE(t.median_us, 13.0);
}

TEST_F(CudaEngineTest, GraphAndWallModes) {
  SpinRun run(kSpinNs);
  run.launch(engine().stream());
  const TimingResult g = engine().measure(run, quick("graph"));
  record("graph", g);
  EXPECT_EQ(g.mode, "graph");
  EXPECT_NEAR(g.median_us, kSpinUs, 0.02 * kSpinUs);
  const TimingResult w = engine().measure(run, quick("wall"));
  record("wall", w);
  EXPECT_EQ(w.mode, "wall");
  // Host time includes the launch call and the synchronize's wake-up: a little over 2 ms.
  EXPECT_GE(w.median_us, kSpinUs);
  EXPECT_LE(w.median_us, 1.1 * kSpinUs);

  SpinRun short_run(5'000);
  const TimingResult gs = engine().measure(short_run, quick("graph"));
  record("graph_short", gs);
  EXPECT_GT(gs.launches_per_sample, 1);
  EXPECT_GE(gs.median_us, 5.0);
  EXPECT_THROW(engine().measure(run, quick("lukewarm")), std::invalid_argument);
}

}  // namespace
}  // namespace attnprof::testing
