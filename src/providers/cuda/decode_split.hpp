// How cuda.decode splits each sequence's keys across CTAs (decode.cpp): chosen from the shape and
// the SM count so that the grid fills the GPU, a ragged batch's long sequences do not set the
// time, and chunks stay long enough to stream. Host code, tested without a GPU
// (tests/gpu/test_decode.cpp, CudaDecodeSplit).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "attnprof/spec.hpp"
#include "providers/cuda/decode_kernel.cuh"

namespace attnprof::cuda {

// A "W:C" setting's waves and shortest chunk (provider_settings.hpp waves_chunk); nullopt: the
// rule's own.
using WavesChunk = std::optional<std::pair<int64_t, int64_t>>;

// `splits` chunks of `chunk` keys (a multiple of kDecodeChunkGranule) per sequence.
struct DecodeSplit {
  int chunk = 0, splits = 1;
};

// The split for `spec` on a GPU of `sm_count` SMs running the tensor-core kernel's `pipeline`
// (`asked`, the setting cuda.decode.split=W:C, overrides the waves and the shortest chunk, for
// comparing them).
DecodeSplit choose_decode_split(const Spec& spec, int sm_count, DecodePipeline pipeline,
                                const WavesChunk& asked = std::nullopt);

// The tensor-core kernel's pipeline for a split of `chunk` keys a CTA, none being asked for: a
// producer warp's stages of 64 keys where each CTA streams 1024 keys or more, else four warps
// three deep (each decode_pipeline_used: the producer needs the tensor copies). Measured on the
// H200 (bench/results/h200/2026-12-02-decode-producer, call 2; both without L2 promotion), at B
// 8 and 64, 32/8 heads, D 128: the producer 1.00-1.06x four warps at chunks of 1024 keys or more
// (B 8, KV 32k: 17 splits of 1984 keys, 4.25 TB/s where four warps ran 4.02), 0.95x at 256
// (B 8, KV 1k).
DecodePipeline choose_decode_pipeline(int chunk);

// cuda.mla.decode's split (mla_decode_kernel.cuh: one CTA of `row_blocks` per KV head and chunk,
// one CTA per SM): a uniform batch that fills a wave is not split; under a wave, as many splits
// as fill one, in chunks of at least 256 keys. A ragged batch aims at four waves in chunks of at
// least 512 keys, so that its long sequences do not set the time. `asked` (the setting
// cuda.mla.decode.split=W:C) aims at W waves in chunks of at least C keys instead, for comparing
// them.
DecodeSplit choose_mla_decode_split(const Spec& spec, int sm_count, int row_blocks,
                                    const WavesChunk& asked = std::nullopt);
// The most splits that choice gives `spec` on any GPU (its shortest chunk's; the workspace bound).
int64_t mla_decode_most_splits(const Spec& spec, const WavesChunk& asked = std::nullopt);

}  // namespace attnprof::cuda
