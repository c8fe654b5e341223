#include "attnprof/audit.hpp"

#include "attnprof/ragged.hpp"

namespace attnprof {

std::vector<InputRange> input_ranges(const Spec& spec, const Io& io) {
  std::vector<InputRange> out;
  for (TensorRole r : launch_inputs(spec, io)) {
    const bool forward_state = r == TensorRole::o || r == TensorRole::lse;
    if (io[r].present()) out.push_back({to_string(r), io[r].data, io[r].bytes(), !forward_state});
  }
  const int64_t table = spec.block_table_elems() * int64_t(sizeof(int32_t));
  if (io.k.block_table != nullptr) out.push_back({"block_table", io.k.block_table, table});
  if (io.v.block_table != nullptr && io.v.block_table != io.k.block_table)
    out.push_back({"block_table (v)", io.v.block_table, table});
  const int64_t lens = spec.batch * int64_t(sizeof(int32_t));
  if (io.seq_q != nullptr) out.push_back({"seq_q", io.seq_q, lens});
  if (io.seq_kv != nullptr) out.push_back({"seq_kv", io.seq_kv, lens});
  return out;
}

int64_t padding_elems(const Spec& spec, TensorRole r, const TensorView& t) {
  if (!spec.ragged() || (r != TensorRole::o && r != TensorRole::lse)) return 0;
  const int64_t rows = spec.batch * spec.q_len - seq_lens(spec).q_total();
  return rows * spec.q_heads * (r == TensorRole::o ? t.dim : 1);
}

}  // namespace attnprof
