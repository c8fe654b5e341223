// Ragged batches (Spec::seqlens): sequences of different lengths in one batch, as a serving
// engine's prefill or decode step holds them. The tensors keep their padded shape (batch x heads x
// the spec's lengths); sequence b uses its first q_len(b) query rows and kv_len(b) keys, and the
// rows past them are padding that no provider reads and nothing verifies. The lengths are a pure
// function of the spec (a seeded distribution's draws depend on its text only), so every
// provider, the reference and the models see the same ones, in every run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/spec.hpp"

namespace attnprof {

// The forms Spec::seqlens takes.
inline constexpr std::string_view kSeqlensChoices =
    "uniform:A:B (keys drawn uniformly in [A, B]), zipf:A:B[:S] (a power law of exponent S, "
    "default 1, on [A, B]: many short, few long), or L1/L2/... (key counts, cycled over the "
    "batch)";

// What is wrong with `text` as a seqlens value (a one-line reason naming kSeqlensChoices), or
// nullopt when it parses. Bounds against the spec are Spec::validate()'s.
std::optional<std::string> seqlens_problem(std::string_view text);

// The key counts of sequences 0 .. batch-1 under `text` (which must parse). Draws of a
// distribution are seeded by the text alone, so a batch of 16 begins with the batch of 8's.
std::vector<int64_t> seqlens_draw(std::string_view text, int64_t batch);

// Per sequence: its query rows and keys. Uniform specs give every sequence q_len and kv_len. In a
// ragged one sequence b holds kv[b] keys (seqlens_draw) and its last min(q_len, kv[b]) tokens are
// the queries: a prefill (q_len == kv_len) has q[b] == kv[b], a decode step q[b] == 1, a chunk of
// q_len new tokens against a longer cache q_len each.
struct SeqLens {
  std::vector<int64_t> q, kv;
  int64_t q_total() const;
  int64_t kv_total() const;
};
SeqLens seq_lens(const Spec& spec);

// Sequence b as a spec of its own: batch 1, its lengths, not ragged; everything else the spec's.
// The masks, the models and the references apply to it as to any spec; tensors keep the padded
// spec's strides.
Spec sequence_spec(const Spec& spec, int64_t q_len, int64_t kv_len);

}  // namespace attnprof
