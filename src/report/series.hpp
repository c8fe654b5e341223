// Rows grouped the way a report plots them: a group holds the rows whose specs differ only in
// sequence length (a fixed-batch series), or in sequence length and batch at a fixed number of
// tokens per batch (fa-bench style); within a group, one line per provider, ordered by N.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "attnprof/result.hpp"

namespace attnprof {

struct SeriesGroup {
  std::string key;    // stable identity of the group
  std::string title;  // "H12 D64 fp16 causal fwd, B1" or "..., B·N = 16384 tokens"
  bool fixed_batch = true;
  bool self_attention = true;  // q_len == kv_len in every row: N is both
  // Passed, timed rows per provider, ordered by N (kv_len); providers in order of appearance.
  std::vector<std::string> providers;
  std::map<std::string, std::vector<const Result*>> rows;

  std::string x_label() const;
  int64_t distinct_n() const;  // distinct N over all providers
};

// N of a row on the report's x axis: the KV length (the sequence length for self-attention).
inline int64_t row_n(const Result& r) {
  return r.spec.kv_len;
}

// Groups the passed, timed rows of `results` (pointers into it). Groups in order of appearance.
std::vector<SeriesGroup> group_series(const std::vector<Result>& results);

// Providers with at least one passed, timed row, in order of first appearance.
std::vector<std::string> passed_providers(const std::vector<Result>& results);

// The baseline for speedups: `requested` when given; else the device's naive provider
// (cuda.naive, then cpu.naive) when it has passed rows; else "" (no baseline).
std::string choose_baseline(const std::vector<Result>& results, const std::string& requested);

// Passed, timed rows by spec key and timing mode ("<mode>|<spec key>"), each with its rows in
// order of appearance: the shapes a report compares providers at.
std::vector<std::pair<std::string, std::vector<const Result*>>> rows_by_shape(
    const std::vector<Result>& results);

bool passed_and_timed(const Result& r);

}  // namespace attnprof
