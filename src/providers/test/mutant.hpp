// test.mutant.*: correct providers broken on purpose, to prove the verifier catches the bugs
// attention kernels really have (docs/method.md, "Verification"; tests/run/test_mutants.cpp and
// tests/gpu/test_device_verify.cpp). A mutant runs its base provider (cpu.flash or, for backward,
// cpu.reference on the CPU; cuda.naive or cudnn.sdpa on a GPU), then overwrites some output rows
// with what a kernel with the bug computes: the fp64 reference under the bug (a key tile dropped,
// the diagonal moved, the other KV head read), or the right rows damaged by just more than the
// dtype's bound (one row, one LSE, dK of one KV head, a random row on one launch in ten). In the
// registry only with ATTNPROF_TEST_PROVIDERS=1.
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "attnprof/provider.hpp"

namespace attnprof::test {

enum class Mutation {
  dropped_tail_tile,    // the last query tile of 64 misses the last, partial key tile of 64
  wrong_row,            // one interior O row off by 3x the dtype's bound
  wrong_pair,           // one (batch, head) gets the output of the next head
  swapped_kv_heads,     // the first (batch, KV group) reads the next KV head's K and V
  diagonal_off_by_one,  // causal: the middle query tile sees one key past the diagonal
  window_too_wide,      // sliding window: the middle query tile sees W + 1 keys
  wrong_lse,            // one row's LSE off by 3x the LSE bound
  wrong_dk_head,        // dK of the last (batch, KV head) off by 3x the gradient bound
  race,                 // every tenth launch damages a random O (or dQ) row by 3x the bound
  // One interior O row off by 5%, whatever the dtype's bound: the mutations above scale with the
  // bounds, so a bound loosened by mistake would still catch them; this one would slip through
  // a bf16 bound above 5% (today's is 4%), and through any bound of fp16 or fp32 loosened 10x.
  row_off_5pct,
};
inline constexpr Mutation kMutations[] = {
    Mutation::dropped_tail_tile, Mutation::wrong_row,           Mutation::wrong_pair,
    Mutation::swapped_kv_heads,  Mutation::diagonal_off_by_one, Mutation::window_too_wide,
    Mutation::wrong_lse,         Mutation::wrong_dk_head,       Mutation::race,
    Mutation::row_off_5pct};
std::string_view to_string(Mutation m);
std::optional<Mutation> parse_mutation(std::string_view s);

// A shape and the mutations the tests run at it.
struct MutationCase {
  Spec spec;
  std::vector<Mutation> mutations;
};

// Rows of a point's tensor, read and written wherever it lives.
class RowAccess {
 public:
  virtual ~RowAccess() = default;
  // Rows [pos, pos + count) of (b, h) of `t`: count x t.dim values. Synchronous.
  virtual std::vector<double> read(const TensorView& t, int64_t b, int64_t h, int64_t pos,
                                   int64_t count, Stream& stream) = 0;
  // Writes them, rounded to t's storage. Synchronous.
  virtual void write(const TensorView& t, int64_t b, int64_t h, int64_t pos, int64_t count,
                     const std::vector<double>& values, Stream& stream) = 0;
};
std::unique_ptr<RowAccess> make_host_rows();
std::unique_ptr<RowAccess> make_device_rows();  // CUDA builds (mutant_rows.cu)

// The mutant of `m` on `device`: test.mutant.<m> (CPU) or test.mutant.cuda.<m>.
std::unique_ptr<Provider> make_mutant(Mutation m, DeviceKind device);

}  // namespace attnprof::test
