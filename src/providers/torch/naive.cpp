// torch.naive: PyTorch eager softmax(scale * Q K^T, masked) V: cuBLAS matmuls and ATen's softmax,
// scores materialized (GQA as grouped matmuls).
#include "providers/factories.hpp"
#include "providers/torch/torch_provider.hpp"

namespace attnprof {

std::unique_ptr<Provider> make_torch_naive() {
  return torchp::make_provider(torch_traits("naive"), torchp::Backend::naive);
}

}  // namespace attnprof
