// The split-KV decode kernel behind cuda.decode (decode.cpp): attention of a few query tokens
// per sequence (a decode step, or a short chunk of speculative tokens) over a long K/V cache,
// memory-bound, so it is written to read K and V once at the memory's pace.
//
//   grid (splits, kv_heads, batch), 128 threads: one CTA per (sequence, KV head, chunk of keys).
//   The CTA holds every query row of its KV head's group (G query heads x the sequence's query
//   tokens) and streams its chunk through shared memory (cp.async, 16-byte copies, keys past
//   the sequence or the chunk zero-filled and never read), with an online softmax in base 2.
//   Up to kMmaRows rows at head dim 64 or 128, tensor cores (mma.sync for Q.K^T and P.V, the
//   warps' sums combined at the end; decode_mma_tile.cuh), in one of two kernels: each warp its
//   own tiles of 16 keys, three stages deep (decode_mma.cu), or on sm_90 a producer warp filling
//   CTA-wide stages of 64 keys for four consumer warps (decode_producer.cu; DecodePipeline);
//   otherwise, up to kMaxDecodeRows rows, the CUDA cores
//   (decode_kernel.cu: tiles of 64 keys, 32 at D 256, two stages, fp32 FMAs). One split writes
//   O and the LSE itself; several write fp32 partial sums (unnormalized O, row max, row sum)
//   that a merge kernel combines exactly.
//
// K and V contiguous (bhsd or bshd, the spec's strides) or paged (io.hpp PageMap); a ragged
// batch's lengths (Io::seq_q, seq_kv) give each sequence its query rows, keys and mask; a logit
// softcap is applied to each scaled score, a sink logit joins each row's max and sum at the end.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "attnprof/io.hpp"
#include "attnprof/spec.hpp"
#include "providers/cuda/attention_args.hpp"
#include "providers/cuda/kernel_dispatch.hpp"
#include "providers/cuda/tensor_map.hpp"

namespace attnprof::cuda {

// The head dims the decode is instantiated for (fp16 and bf16 each), and those of its
// tensor-core kernels (decode_mma.cu, decode_producer.cu; the others take the scalar one).
using DecodeHeadDims = HeadDims<64, 128, 256>;
using DecodeMmaHeadDims = HeadDims<64, 128>;

// The most query rows (G x q_len) one CTA holds.
inline constexpr int kMaxDecodeRows = 64;
inline constexpr int kDecodeThreads = 128;

// Floats of one partial-sum record: D of O, the max and the sum, padded to 16 bytes.
__host__ __device__ constexpr int partial_stride(int head_dim) {
  return head_dim + 4;
}

// The tensor-core kernel's pipeline: warps per CTA x tiles in flight per warp. Four warps three
// tiles deep is the default: two CTAs an SM. Eight warps three deep (one CTA an SM, a CTA's
// warps streaming 128 consecutive keys at a time) and four warps two deep (three CTAs an SM) are
// kept to compare (bench/results/h200/2026-12-02-decode-copy); two warps six deep ran 0.57-0.65x
// the default (2026-12-01-decode) and was removed.
// The producer forms (decode_producer.cu; sm_90 and the tensor copies only): four consumer
// warps and a producer warp that streams the CTA's keys in stages of 64 or 128 keys, three or
// six stages in flight.
// producer64_stages3_rows asks for boxes of whole rows (tensor_map.hpp row_tensor_map) rather
// than of 64 columns.
enum class DecodePipeline {
  warps4_stages3,
  warps8_stages3,
  warps4_stages2,
  producer64_stages3,
  producer128_stages3,
  producer64_stages6,
  producer64_stages3_rows
};
constexpr bool pipeline_has_producer(DecodePipeline p) {
  return p == DecodePipeline::producer64_stages3 || p == DecodePipeline::producer128_stages3 ||
         p == DecodePipeline::producer64_stages6 || p == DecodePipeline::producer64_stages3_rows;
}
// Warps that compute (the producer aside).
constexpr int pipeline_warps(DecodePipeline p) {
  return p == DecodePipeline::warps8_stages3 ? 8 : 4;
}
constexpr int pipeline_stages(DecodePipeline p) {
  if (p == DecodePipeline::warps4_stages2) return 2;
  return p == DecodePipeline::producer64_stages6 ? 6 : 3;
}
// Keys of a producer form's stage (0: each warp streams its own tiles).
constexpr int pipeline_stage_keys(DecodePipeline p) {
  if (!pipeline_has_producer(p)) return 0;
  return p == DecodePipeline::producer128_stages3 ? 128 : 64;
}

// How the tensor-core kernel's K and V tiles reach shared memory: 16-byte cp.async copies from
// every lane, or (sm_90; contiguous, or pages of a tile or more) the tensor memory accelerator's
// boxes of 64 columns x 16 keys, asked for by one lane and completing on an mbarrier of the
// warp's stage (bench/results/h200/2026-12-02-decode-copy compares them, and the two forms tried
// before: cp.async asking L2 for 256-byte blocks, and a bulk copy per K or V row).
enum class DecodeCopy { cp_async, tma };

struct DecodeArgs : AttentionArgs {
  PageMap k_pages, v_pages;  // table null: contiguous
  int chunk = 0;             // keys per split (a multiple of the key tile)
  int splits = 1;
  DecodePipeline pipeline = DecodePipeline::warps4_stages3;
  DecodeCopy copy = DecodeCopy::cp_async;
  CUtensorMap k_map{}, v_map{};  // DecodeCopy::tma: filled by the launch
  // DecodeCopy::tma: what the L2 fetches on a miss of a box's row.
  L2Promotion l2_promotion = L2Promotion::none;
  float* partial = nullptr;  // splits > 1: B*Hq*Nq*splits records of partial_stride(D) floats
  // sm_90: the merge is launched as a programmatic dependent of the split kernel (it starts
  // while the split kernel's last CTAs run, and waits for their writes).
  bool dependent_merge = false;
};

// Keys a split's chunk is a multiple of (every kernel's tile divides it).
inline constexpr int kDecodeChunkGranule = 64;
// The most query rows the tensor-core kernel takes (decode_mma.cu; head dims 64 and 128), and
// the keys of its tiles.
inline constexpr int kMmaRows = 16;
inline constexpr int kMmaKeyTile = 16;
// Whether the tensor-core kernel runs a shape (else the CUDA-core kernel).
bool decode_uses_mma(int head_dim, int rows);
// Bytes of dynamic shared memory one CTA needs for `rows` query rows.
int decode_smem_bytes(int head_dim, int rows, DecodePipeline pipeline);
// Floats of the partial-sum workspace for `splits` splits (0 for one).
int64_t decode_partial_floats(int64_t batch, int64_t q_heads, int64_t q_len, int64_t head_dim,
                              int splits);

// The copy the tensor-core kernel runs when `asked` is asked for over a cache in pages of
// `page_size` keys (0: contiguous): cp.async instead of the tensor copies for pages of less than
// a tile (a tile's keys then lie on several pages).
DecodeCopy decode_copy_used(DecodeCopy asked, int64_t page_size);
// The pipeline the tensor-core kernel runs when `asked` is asked for and its tiles are copied by
// `copy` (decode_copy_used): the producer forms need the tensor copies, else the default runs.
DecodePipeline decode_pipeline_used(DecodePipeline asked, DecodeCopy copy);

// Enqueues the decode (and, with several splits, the merge) on `stream`. head_dim 64, 128 or
// 256; G * q_len <= kMaxDecodeRows.
void launch_decode(const DecodeArgs& a, cudaStream_t stream);

// Columns one block of the merge (kDecodeMergeThreads threads, four columns a thread) takes of a
// row: as few as leave a group of threads per split, up to 16 groups of 64 columns, so that few
// splits still keep every thread busy (value_dim at most).
inline constexpr int kDecodeMergeThreads = 256;
int decode_merge_columns(int splits, int value_dim);

// Enqueues the merge of `a.splits` partial sums of `value_dim` (64, 128, 256 or 512) columns per
// row into O and the LSE: cuda.decode's, and cuda.mla.decode's (mla_decode_kernel.cuh).
void launch_decode_merge(const DecodeArgs& a, int value_dim, cudaStream_t stream);

}  // namespace attnprof::cuda
