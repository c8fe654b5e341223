// cuda.decode's split of the keys across CTAs (decode_split.hpp).
#include "providers/cuda/decode_split.hpp"

#include <algorithm>
#include <cstdlib>

namespace attnprof::cuda {

namespace {

// CTAs of 128 threads resident per SM at this shared-memory size (228 KiB per SM, 1 KiB of it
// reserved per CTA), at least 1.
int ctas_per_sm(int smem_bytes) {
  return std::max(1, std::min(16, (228 * 1024) / (smem_bytes + 1024)));
}

// How the keys are split: `splits` chunks of `chunk` keys (a multiple of the key tile) per
// sequence. Measured on the H200 (bench/results/h200/2026-12-01-sweep, calls 5 and 6), at B 1, 8
// and 64, 32/8 heads, D 128, KV 1k..32k:
//  - a (batch, KV head) per CTA already fills a wave: no split (B 64: 3.50 TB/s at KV 1k where
//    3 splits of 384 keys gave 2.62). Not for a ragged batch, whose long sequences would then
//    set the time: it keeps about sixteen waves in chunks of at least 2048 keys (KV 1k..32k,
//    bench/results/h200/2026-12-02-decode-paged, calls 6-9: at B 64 9 splits of 3648 keys,
//    0.97x its uniform rate, where 3 gave 0.90x and one 0.71x; at B 8 16 of 2048, where 32 of
//    1024 gave 0.82x and 64 of 512 0.73x);
//  - else up to about four waves, in chunks of at least 1024 keys (B 8, KV 32k: 17 splits of
//    1984 keys, 3.56 TB/s, where 5 gave 2.67);
//  - and where that is under a wave, as many splits as fill one, in chunks of at least 256 keys
//    (B 1, KV 32k: 32 splits of 1024, 2.68 TB/s, where 128 of 256 gave 1.49); a ragged batch
//    under a wave as well.

// The split's knobs, for comparing them on a device: --set cuda.decode.split=W:C aims at W waves
// of CTAs (a uniform batch and a ragged one alike) in chunks of at least C >= 256 keys
// (default: 4 waves and 1024 keys; for a ragged batch 16 waves and 2048 keys).
struct SplitKnobs {
  int64_t waves = 4, min_chunk = 1024, ragged_waves = 16, ragged_min_chunk = 2048;
};
SplitKnobs split_knobs(const WavesChunk& asked) {
  SplitKnobs k;
  if (const auto& wc = asked) {  // W:C, C >= 256
    k.waves = k.ragged_waves = wc->first;
    k.min_chunk = k.ragged_min_chunk = wc->second;
  }
  return k;
}

// `kv_len` keys in about `splits` chunks, each a multiple of `tile`.
DecodeSplit chunks_of(int64_t kv_len, int64_t splits, int64_t tile) {
  const int64_t chunk = ((kv_len + splits - 1) / splits + tile - 1) / tile * tile;
  DecodeSplit out;
  out.chunk = int(chunk);
  out.splits = int((kv_len + chunk - 1) / chunk);
  return out;
}

// cuda.mla.decode's knobs: --set cuda.mla.decode.split=W:C, for comparing on a device: W waves of
// CTAs, chunks of at least C >= 64 keys (default 1 and 256). A ragged batch's chunks: 512 keys or
// more.
struct MlaKnobs {
  int64_t waves = 1, shortest = 256;
};
constexpr int64_t kMlaRaggedChunk = 512;
MlaKnobs mla_knobs(const WavesChunk& asked) {
  MlaKnobs k;
  if (const auto& wc = asked) {  // W:C, C >= 64
    k.waves = wc->first;
    k.shortest = wc->second;
  }
  return k;
}

}  // namespace

DecodeSplit choose_decode_split(const Spec& s, int sm_count, DecodePipeline pipeline,
                                const WavesChunk& asked) {
  const int tile = kDecodeChunkGranule;
  const int rows = int(s.group_size() * s.q_len);
  const int64_t slots = int64_t(std::max(sm_count, 1)) *
                        ctas_per_sm(decode_smem_bytes(int(s.head_dim), rows, pipeline));
  const int64_t ctas = s.batch * s.kv_heads;
  const SplitKnobs knobs = split_knobs(asked);
  const int64_t want = (knobs.waves * slots + ctas - 1) / ctas;
  const int64_t most = std::max<int64_t>(1, s.kv_len / 256);
  int64_t splits = 1;
  if (s.ragged()) {
    splits = std::min((knobs.ragged_waves * slots + ctas - 1) / ctas,
                      std::max<int64_t>(1, s.kv_len / knobs.ragged_min_chunk));
  } else if (ctas < slots) {
    splits = std::min(want, std::max<int64_t>(1, s.kv_len / knobs.min_chunk));
  }
  if (splits * ctas < slots) splits = std::max(splits, std::min(slots / ctas, most));
  return chunks_of(s.kv_len, splits, tile);
}

DecodePipeline choose_decode_pipeline(int chunk) {
  return chunk >= 1024 ? DecodePipeline::producer64_stages3 : DecodePipeline::warps4_stages3;
}

DecodeSplit choose_mla_decode_split(const Spec& s, int sm_count, int row_blocks,
                                    const WavesChunk& asked) {
  const MlaKnobs knobs = mla_knobs(asked);
  const int64_t slots = std::max(sm_count, 1) * knobs.waves;
  const int64_t ctas = s.batch * s.kv_heads * std::max(row_blocks, 1);
  int64_t splits = std::max<int64_t>(1, slots / ctas);
  splits = std::min(splits, std::max<int64_t>(1, s.kv_len / knobs.shortest));
  if (s.ragged())
    splits = std::max(splits, std::min((4 * slots + ctas - 1) / ctas,
                                       std::max<int64_t>(1, s.kv_len / kMlaRaggedChunk)));
  return chunks_of(s.kv_len, splits, kDecodeChunkGranule);
}

int64_t mla_decode_most_splits(const Spec& s, const WavesChunk& asked) {
  const int64_t shortest = std::min(mla_knobs(asked).shortest, kMlaRaggedChunk);
  return std::max<int64_t>(1, s.kv_len / shortest);
}

}  // namespace attnprof::cuda
