// torch.sdpa.efficient: PyTorch SDPA, memory-efficient backend only: the CUTLASS kernel that came
// from xFormers (ATen's mem_eff_attention).
#include "providers/factories.hpp"
#include "providers/torch/torch_provider.hpp"

namespace attnprof {

std::unique_ptr<Provider> make_torch_sdpa_efficient() {
  return torchp::make_provider(torch_traits("efficient"), torchp::Backend::efficient);
}

}  // namespace attnprof
