// The engine's own kernels, callable from host code (and from the GPU self-tests, which are
// plain C++): spin kernels of known length, the read-only L2 flush / stream-read kernel and
// the in-stream SM clock stamp. Each launch is checked (throws CudaError).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace attnprof::cuda {

// One thread spins until `ns` nanoseconds of %globaltimer have passed: a kernel whose length
// does not depend on the SM clock (used to hide host launch overhead, and as a known length).
void launch_spin_ns(uint64_t ns, cudaStream_t stream);

// One thread spins for `cycles` cycles of its SM's clock64(): its length is cycles / f_SM.
void launch_spin_cycles(uint64_t cycles, cudaStream_t stream);

// Reads `bytes` (rounded down to 16) from `src` with 16-byte loads, several in flight per
// thread, over `blocks` blocks (0: 4 per SM of the current device). It writes nothing back to
// the buffer; `sink` (8 bytes of device memory) receives one value only when the data XORs to
// a fixed sentinel, which keeps the loads alive without a write per thread. Used to evict L2
// before cold samples (a read leaves no dirty lines to be written back inside the timed
// region) and as the read-only stream of `attnprof peaks`.
void launch_read(const void* src, int64_t bytes, uint64_t* sink, int blocks, cudaStream_t stream);

// Writes %globaltimer (ns) into out[0] and SM 0's clock64() into out[1]. One single-thread
// block per SM is launched so one of them lands on SM 0 (as NVBench's gpu_frequency does);
// `out` may be host-mapped pinned memory.
void launch_clock_stamp(uint64_t* out, int sm_count, cudaStream_t stream);

// Blocks of the read kernel for full bandwidth on the current device (4 per SM).
int read_kernel_blocks();

}  // namespace attnprof::cuda
