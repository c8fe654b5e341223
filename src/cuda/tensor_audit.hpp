// The harness's audits of device memory (docs/method.md, "What a provider cannot fake"): digests
// of a range (attnprof/digest.hpp's, so a device range and its host copy digest alike), the guard
// bytes past a tensor's end, and how many elements of an output still hold the poison.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace attnprof::cuda {

// Adds the digest of device memory [data, data + bytes) salted `salt` to *sum (device memory),
// asynchronously on `stream`.
void add_digest(const void* data, int64_t bytes, uint64_t salt, unsigned long long* sum,
                cudaStream_t stream);
// Elements of `elem_bytes` bytes (1, 2 or 4) among the `elems` at `data` whose every bit is set:
// the poison (tensor_fill.hpp), which no arithmetic result holds; counted in `counter` (device
// memory, the caller's). Synchronous.
int64_t count_poisoned(const void* data, int64_t elems, int elem_bytes, unsigned long long* counter,
                       cudaStream_t stream);

}  // namespace attnprof::cuda
