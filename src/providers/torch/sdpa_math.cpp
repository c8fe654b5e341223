// torch.sdpa.math: PyTorch SDPA, math backend only: unfused ATen ops (matmul, softmax), fp16/bf16
// computed in fp32.
#include "providers/factories.hpp"
#include "providers/torch/torch_provider.hpp"

namespace attnprof {

std::unique_ptr<Provider> make_torch_sdpa_math() {
  return torchp::make_provider(torch_traits("math"), torchp::Backend::math);
}

}  // namespace attnprof
