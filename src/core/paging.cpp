#include "attnprof/paging.hpp"

#include <numeric>
#include <utility>

#include "attnprof/inputs.hpp"

namespace attnprof {

std::vector<int32_t> block_table(const Spec& spec, uint64_t seed) {
  if (!spec.paged()) return {};
  std::vector<int32_t> table(static_cast<size_t>(spec.block_table_elems()));
  std::iota(table.begin(), table.end(), 0);
  // A stream of its own: the tensors' generator keys on (seed, tensor id < 4, index).
  uint64_t state = splitmix64(seed ^ 0x5061676554626C65ull);  // "PageTble"
  for (size_t i = table.size(); i > 1; --i) {
    state = splitmix64(state);
    std::swap(table[i - 1], table[static_cast<size_t>(state % i)]);
  }
  return table;
}

}  // namespace attnprof
