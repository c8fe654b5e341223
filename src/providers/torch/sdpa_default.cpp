// torch.sdpa.default: PyTorch scaled_dot_product_attention with ATen's own backend choice (the
// row's provider_note names the backend and why the others were passed over).
#include "providers/factories.hpp"
#include "providers/torch/torch_provider.hpp"

namespace attnprof {

std::unique_ptr<Provider> make_torch_sdpa_default() {
  return torchp::make_provider(torch_traits("default"), torchp::Backend::choice);
}

}  // namespace attnprof
