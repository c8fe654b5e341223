// RAII device allocation reported to the engine's MemoryTracker (inputs, outputs, workspace,
// temporaries all go through this, so a point's peak bytes are known exactly).
#pragma once

#include <cstdint>

#include "attnprof/memory.hpp"

namespace attnprof::cuda {

// Memory the harness holds for reuse and can give back (the device check's kept reference,
// src/measure/cuda/device_check_kept.hpp): when a cudaMalloc fails for want of memory, the
// reclaimer is called once and, if it freed anything, the allocation is tried again, so what
// the harness keeps never moves a point's out-of-memory boundary. Null: none.
using MemoryReclaimer = bool (*)();
void set_memory_reclaimer(MemoryReclaimer reclaim);

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // Allocates `bytes` with cudaMalloc; throws CudaError (cudaErrorMemoryAllocation for OOM).
  // `guard` more bytes follow them, unreported to the tracker and outside bytes(): the point
  // tensors' guard (attnprof/digest.hpp), a measurement device rather than the point's memory.
  DeviceBuffer(int64_t bytes, MemoryTracker* tracker, int64_t guard = 0);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return ptr_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  int64_t bytes() const { return bytes_; }

 private:
  void release() noexcept;
  void* ptr_ = nullptr;
  int64_t bytes_ = 0;
  MemoryTracker* tracker_ = nullptr;
};

}  // namespace attnprof::cuda
