// DeviceBuffer and the MemoryTracker (src/measure/cuda/device_buffer.cpp) against what the
// driver reports: the tracker's bytes are the bytes cudaMemGetInfo sees go, to within the
// allocation granularity.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <utility>
#include <vector>

#include "engine_test_util.hpp"

namespace attnprof::testing {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGranularity = 2 * kMiB;  // cudaMalloc rounds large allocations to 2 MiB pages

int64_t free_bytes() {
  size_t free_b = 0, total_b = 0;
  ATTNPROF_CUDA(cudaMemGetInfo(&free_b, &total_b));
  return static_cast<int64_t>(free_b);
}

TEST_F(CudaEngineTest, TrackerAgreesWithMemGetInfo) {
  MemoryTracker tracker;
  const int64_t sizes[] = {64 * kMiB, 100 * kMiB + 12345, 256 * kMiB};
  const int64_t sum = sizes[0] + sizes[1] + sizes[2];
  const int64_t free0 = free_bytes();
  {
    std::vector<cuda::DeviceBuffer> buffers;
    for (int64_t s : sizes) buffers.emplace_back(s, &tracker);
    EXPECT_EQ(tracker.current(), sum);
    const int64_t used = free0 - free_bytes();
    RecordProperty("driver_used_bytes", std::to_string(used));
    RecordProperty("tracked_bytes", std::to_string(sum));
    EXPECT_GE(used, sum);
    EXPECT_LE(used, sum + 3 * kGranularity) << "driver saw " << used << ", tracker " << sum;

    // A move transfers ownership: nothing is counted twice or released early.
    cuda::DeviceBuffer moved = std::move(buffers[0]);
    EXPECT_EQ(tracker.current(), sum);
    EXPECT_EQ(buffers[0].data(), nullptr);
    // Assigning an empty buffer releases the old allocation.
    buffers[1] = cuda::DeviceBuffer();
    EXPECT_EQ(tracker.current(), sum - sizes[1]);
    const int64_t used_after = free0 - free_bytes();
    EXPECT_NEAR(static_cast<double>(used_after), static_cast<double>(sum - sizes[1]),
                static_cast<double>(2 * kGranularity));
  }
  EXPECT_EQ(tracker.current(), 0);
  EXPECT_EQ(tracker.peak(), sum);
  EXPECT_NEAR(static_cast<double>(free_bytes()), static_cast<double>(free0),
              static_cast<double>(kGranularity));
}

TEST_F(CudaEngineTest, OutOfMemoryThrowsAndLeavesTheContextUsable) {
  MemoryTracker tracker;
  const int64_t too_much = 2 * engine().device().memory_bytes;
  try {
    cuda::DeviceBuffer b(too_much, &tracker);
    FAIL() << "allocating twice the device's memory succeeded";
  } catch (const cuda::CudaError& e) {
    EXPECT_EQ(e.code(), cudaErrorMemoryAllocation);
    EXPECT_FALSE(e.sticky());
    EXPECT_EQ(e.fault(), Fault::oom);
    EXPECT_NE(std::string(e.what()).find("cudaErrorMemoryAllocation"), std::string::npos);
  }
  EXPECT_EQ(cuda::sticky_error(), "") << "an out-of-memory does not poison the context";
  EXPECT_EQ(tracker.current(), 0);
  cuda::DeviceBuffer ok(kMiB, &tracker);
  EXPECT_EQ(tracker.current(), kMiB);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(CudaErrors, StickyErrorsAreKnown) {
  EXPECT_TRUE(cuda::CudaError(cudaErrorIllegalAddress, "x").sticky());
  EXPECT_TRUE(cuda::CudaError(cudaErrorLaunchFailure, "x").sticky());
  EXPECT_FALSE(cuda::CudaError(cudaErrorMemoryAllocation, "x").sticky());
  EXPECT_FALSE(cuda::CudaError(cudaErrorInvalidValue, "x").sticky());
  // Classified once, by the code: the fault travels typed (fault.hpp).
  EXPECT_EQ(cuda::CudaError(cudaErrorIllegalAddress, "x").fault(), Fault::sticky_device);
  EXPECT_EQ(cuda::CudaError(cudaErrorMemoryAllocation, "x").fault(), Fault::oom);
  EXPECT_EQ(cuda::CudaError(cudaErrorInvalidValue, "x").fault(), Fault::device);
  EXPECT_EQ(classify(cuda::CudaError(cudaErrorLaunchFailure, "x")), Fault::sticky_device);
  try {
    ATTNPROF_CUDA(cudaErrorInvalidValue);
    FAIL();
  } catch (const cuda::CudaError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cudaErrorInvalidValue"), std::string::npos) << what;
    EXPECT_NE(what.find("test_engine_memory.cpp"), std::string::npos) << what;
  }
  try {
    ATTNPROF_CUBLAS(CUBLAS_STATUS_NOT_SUPPORTED);
    FAIL();
  } catch (const FaultError& e) {
    EXPECT_EQ(e.fault(), Fault::library);
  }
  try {
    ATTNPROF_CUBLAS(CUBLAS_STATUS_ALLOC_FAILED);
    FAIL();
  } catch (const FaultError& e) {
    EXPECT_EQ(e.fault(), Fault::oom);
  }
}

}  // namespace
}  // namespace attnprof::testing
