// Presets (series of grid axes, from presets/*.toml), model shapes and shards of a grid.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/axes.hpp"
#include "attnprof/spec.hpp"

namespace attnprof {

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

// A model's attention shape from presets/models.toml: the values it gives its axes (those marked
// Axis::model: heads, KV heads, head dims, softcap, sinks, shared latent), as list text.
struct ModelShape {
  std::string name;
  std::vector<std::pair<std::string, std::string>> values;
  // The value the model gives an axis; empty when it gives none.
  std::string_view value(std::string_view key) const;
};
std::vector<ModelShape> model_shapes();
ModelShape find_model(std::string_view name);  // throws with the known names
// Sets every model axis to the model's value, or back to its default where the model gives none.
void apply_model(GridAxes& axes, const ModelShape& model);

}  // namespace attnprof
