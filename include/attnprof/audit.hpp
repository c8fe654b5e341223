// What the harness audits of a point's memory (docs/method.md, "What a provider cannot fake"):
// the ranges a launch reads, which it must leave as the harness wrote them, and the output
// elements a launch need not write.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "attnprof/io.hpp"

namespace attnprof {

// One range of memory a launch reads: a tensor of launch_inputs, the block table, the lengths.
// What the harness digests (digest.hpp) to prove a provider left its inputs as they were, and
// what the device check's kept reference is keyed on.
struct InputRange {
  std::string_view name;  // "q", ..., "block_table", "seq_q", "seq_kv"
  const void* data = nullptr;
  int64_t bytes = 0;
  // Written by the harness's fill; false for the forward state (O, the LSE) prepare() wrote in
  // mode bwd, an input only from PointTensors::seal_inputs on.
  bool generated = true;
};
std::vector<InputRange> input_ranges(const Spec& spec, const Io& io);

// Elements of output `r` (`t`, its view) a launch need not write: the padding rows of a ragged
// batch's O and LSE (no output; ProviderTraits::ragged). 0 for every other output.
int64_t padding_elems(const Spec& spec, TensorRole r, const TensorView& t);

}  // namespace attnprof
