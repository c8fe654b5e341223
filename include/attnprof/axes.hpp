// The axes of a grid, declared once: every Spec field a sweep can vary, and the two rules that
// derive one from another (tokens per batch, model dim). One row gives the key (presets,
// presets/models.toml), the command-line flag, the help, the default, the parser, the setter and
// the spec's JSON field. The grid's product (grid.hpp expand), the CLI's grid options, presets,
// model shapes, the row codec's spec (result_json.hpp) and python/attnprof/spec.py (a test holds
// it to the table) all follow it: a new axis is one row here and its Spec field.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/spec.hpp"

namespace attnprof {

// How one value is written in a row's JSON (and read back).
enum class AxisKind { integer, number, boolean, text };

struct Axis {
  std::string_view key{};   // "kv_heads": the preset and models.toml key
  std::string_view flag{};  // "--kv-heads"
  std::string_view help{};
  // The default list, as text; empty: unset unless given (derived by `derive`, or a rule).
  std::string_view fallback{};
  // The spec's JSON field ("q_heads"); empty for a rule, which is not a field of its own.
  std::string_view json{};
  // A row writes the field only where the spec differs from Spec{}'s (page_size, softcap, ...).
  bool json_when_set = false;
  AxisKind kind = AxisKind::integer;
  // Place in the product, outermost first (two rows share one when a rule replaces an axis).
  int nest = 0;
  // A rule replaces this axis while it is set (tokens: batch; model_dim: heads).
  std::string_view replaces{};
  bool single = false;  // takes one value (the rules)
  bool model = false;   // part of a model shape: --model sets it (or resets it to the default)
  // The canonical text of each value a list gives ("64:256:*2" -> 64, 128, 256; "on" -> on);
  // throws std::invalid_argument with one line saying what is allowed (callers name the flag or
  // key).
  std::vector<std::string> (*parse)(std::string_view list) = nullptr;
  // Applies one canonical value; the axes above it in the table are already applied.
  void (*set)(Spec& s, std::string_view value) = nullptr;
  // The spec's value as canonical text (the codec writes it as `kind`); null for a rule.
  std::string (*get)(const Spec& s) = nullptr;
  // Fills the field when the axis is unset (kv_heads: the query heads); may be null.
  void (*derive)(Spec& s) = nullptr;
  // Its part of the spec's key (Spec::key: "b8", "p16"; "" where it writes none, as a page size
  // of 0 does); null for a rule. Parts are joined with '.' in key_at order: the history database,
  // tune files, resume and compare match points by key, so that order is the one keys have always
  // had, not the table's.
  std::string (*key_part)(const Spec& s) = nullptr;
  int key_at = 0;
  // Its words in the spec's label (Spec::label: "H8/2", "paged16"; "": none), in label_at order;
  // null where another axis's words say it (kv_heads: heads writes "H8/2").
  std::string (*label_part)(const Spec& s) = nullptr;
  int label_at = 0;
  // Set (its value differs from `fallback`) only in mode fwd: what Spec::validate calls it ("a
  // paged KV cache"); empty for an axis every mode takes.
  std::string_view forward_only{};
};

// "64,128", "64:2048:*2" (geometric), "512:4096:512" (arithmetic), "1k", "32k" (x1024).
// Throws std::invalid_argument with a one-line message naming what is wrong.
std::vector<int64_t> parse_int_list(std::string_view text);
// "on"/"true" and "off"/"false"; nullopt otherwise.
std::optional<bool> parse_on_off(std::string_view s);
// A comma list of seqlens values (ragged.hpp kSeqlensChoices), "off" for uniform lengths ("");
// throws std::invalid_argument with one line naming the bad value.
std::vector<std::string> parse_seqlens_list(std::string_view text);

// Every axis, in the order a spec is built (a rule after the axes it reads).
std::span<const Axis> axes();
// The axis of a key, or null.
const Axis* find_axis(std::string_view key);
// "batch, heads, ..." for an unknown-key error.
std::string axis_keys();

// The options that give exactly `spec` on a command line: each axis with a field, its flag and
// canonical value, in the table's order (what a child process is handed to run the same point:
// `trace --ncu`'s target). Expanding them back gives `spec`.
std::vector<std::string> spec_argv(const Spec& spec);

// Whether the spec's value of `axis` differs from its default (Axis::fallback).
bool axis_is_set(const Axis& axis, const Spec& spec);

// One series of a grid: the values given per axis (canonical text); an axis not given takes its
// default (Axis::fallback) or stays unset.
class GridAxes {
 public:
  // Replaces the axis's values with those of `list` (Axis::parse; its errors unprefixed) and
  // clears a rule that replaces this axis (--batch clears --tokens). Throws std::invalid_argument
  // for an unknown key, an empty list or more than one value where the axis takes one.
  void set(std::string_view key, std::string_view list);
  // Back to the default (or unset).
  void reset(std::string_view key);
  // The values given for the axis, else its default's; empty when unset.
  std::vector<std::string> values(std::string_view key) const;
  bool given(std::string_view key) const;

 private:
  std::vector<std::pair<std::string, std::vector<std::string>>> given_;
};

// Cartesian product in the axes' nesting order (mode, dtype, mask, head_dim, v_head_dim, heads,
// kv_heads, seq, batch, kv_seq, page_size, softcap, sinks, shared_latent, seqlens, layout, scale).
std::vector<Spec> expand(const GridAxes& axes);

}  // namespace attnprof
