// Grids of Specs: lists and ranges per dimension, presets from TOML, cartesian product.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/spec.hpp"

namespace attnprof {

// "64,128", "64:2048:*2" (geometric), "512:4096:512" (arithmetic), "1k", "32k" (x1024).
// Throws std::invalid_argument with a one-line message naming what is wrong.
std::vector<int64_t> parse_int_list(std::string_view text);

// One series of the grid: lists per dimension; empty kv_seq means "same as seq" (paired, not
// crossed); empty kv_heads means "same as heads".
struct GridAxes {
  std::vector<int64_t> batch{1};
  std::vector<int64_t> heads{8};
  std::vector<int64_t> kv_heads;
  std::vector<int64_t> seq{1024};
  std::vector<int64_t> kv_seq;
  std::vector<int64_t> head_dim{64};
  std::vector<int64_t> v_head_dim;  // empty: same as head_dim (MLA: 128 for a 192 head dim)
  std::vector<DType> dtype{DType::fp16};
  std::vector<Mask> mask{Mask{}};
  std::vector<Mode> mode{Mode::fwd};
  std::vector<int64_t> page_size{0};       // keys per page of a paged KV cache; 0: contiguous
  std::vector<int64_t> softcap{0};         // logit softcap (whole numbers here); 0: none
  std::vector<bool> sinks{false};          // attention sinks off, on
  std::vector<bool> shared_latent{false};  // V as K's first Dv columns (absorbed MLA) off, on
  // Ragged batches (Spec::seqlens, ragged.hpp): "" (uniform lengths), "uniform:512:8192", ...
  std::vector<std::string> seqlens{""};
  // Tokens per batch: when set, batch = tokens / seq for each seq (fa-bench style), and the
  // batch list is ignored. Model dim: when set, heads = model_dim / head_dim.
  std::optional<int64_t> tokens;
  std::optional<int64_t> model_dim;
};

// Cartesian product in a stable order (mode, dtype, mask, head_dim, v_head_dim, heads, batch,
// seq, kv_seq, page_size, softcap, sinks, seqlens).
std::vector<Spec> expand(const GridAxes& axes);

// A preset: one or more series (e.g. seed-000 has the MHA sweep and a GQA point).
struct Preset {
  std::string name;
  std::string description;
  std::vector<GridAxes> series;
  std::vector<std::string> providers;  // default providers, may be empty
};

// One share of a grid run on many hosts (`run --shard K/N`: srun's $SLURM_PROCID/$SLURM_NTASKS,
// an MPI rank and size): shape i of the grid goes to shard i % count, so every provider of a
// shape runs on one host (their comparison is on one device) and the shards' sizes differ by one
// shape at most.
struct Shard {
  int64_t index = 0, count = 1;
};
// "K/N" with N >= 1 and 0 <= K < N; throws std::invalid_argument with one line otherwise.
Shard parse_shard(std::string_view text);
std::vector<Spec> shard_specs(const std::vector<Spec>& specs, const Shard& shard);

// Directory holding presets/*.toml: $ATTNPROF_PRESETS, else next to the executable
// (../share/attnprof/presets), else the source tree's presets/.
std::filesystem::path preset_dir();
std::vector<std::string> preset_names();
// Throws std::invalid_argument ("unknown preset 'x' (known: ...)") or on a malformed file.
Preset load_preset(std::string_view name);
// Throws std::invalid_argument with one line naming `source` (the file; `name` when empty), the
// series and the key: invalid TOML, an unknown key (top-level or in a series), a value of the
// wrong type, an empty axis, no [[series]].
Preset parse_preset(std::string_view toml_text, std::string_view name,
                    std::string_view source = "");

// Model shapes (heads, kv heads, head dim) from presets/models.toml.
struct ModelShape {
  std::string name;
  int64_t heads = 0, kv_heads = 0, head_dim = 0;
  int64_t v_head_dim = 0;      // 0: same as head_dim
  int64_t softcap = 0;         // the model's attention logit softcap (Gemma 2: 50); 0: none
  bool sinks = false;          // the model's attention sinks (GPT-OSS)
  bool shared_latent = false;  // V is K's first Dv columns (DeepSeek-V3's absorbed decode)
};
// "on"/"true" and "off"/"false"; nullopt otherwise.
std::optional<bool> parse_on_off(std::string_view s);
// A comma list of seqlens values (ragged.hpp kSeqlensChoices), "off" for uniform lengths ("");
// throws std::invalid_argument with one line naming the bad value.
std::vector<std::string> parse_seqlens_list(std::string_view text);
std::vector<ModelShape> model_shapes();
ModelShape find_model(std::string_view name);  // throws with the known names

}  // namespace attnprof
