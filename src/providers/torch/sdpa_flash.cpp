// torch.sdpa.flash: PyTorch SDPA, flash backend only: FlashAttention-2 (Tri Dao's kernels as
// vendored in ATen).
#include "providers/factories.hpp"
#include "providers/torch/torch_provider.hpp"

namespace attnprof {

std::unique_ptr<Provider> make_torch_sdpa_flash() {
  return torchp::make_provider(torch_traits("flash"), torchp::Backend::flash);
}

}  // namespace attnprof
