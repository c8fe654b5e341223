// torch.sdpa.cudnn: PyTorch SDPA, cuDNN backend only: cuDNN's fused attention through ATen's own
// cuDNN frontend graphs (the cuDNN PyTorch loads).
#include "providers/factories.hpp"
#include "providers/torch/torch_provider.hpp"

namespace attnprof {

std::unique_ptr<Provider> make_torch_sdpa_cudnn() {
  return torchp::make_provider(torch_traits("cudnn"), torchp::Backend::cudnn);
}

}  // namespace attnprof
