// The declared traits of the LibTorch providers (traits.hpp), compiled in every build: the
// providers (torch_provider.cpp) and the registry's "not built" entries read the same facts.
#include <stdexcept>

#include "providers/factories.hpp"

namespace attnprof {

ProviderTraits torch_traits(std::string_view backend) {
  ProviderTraits t;
  t.device = DeviceKind::cuda;
  t.library = "PyTorch";
  t.in_default_set = true;
  t.backward = true;
  t.name = backend == "naive" ? "torch.naive" : "torch.sdpa." + std::string(backend);
  t.family = Family::fused;
  t.fused = true;
  if (backend == "default") {
    t.family = Family::dispatcher;
    t.fused = false;  // ATen may choose its math backend
    t.description =
        "PyTorch scaled_dot_product_attention with ATen's own backend choice (the row's "
        "provider_note names the backend and why the others were passed over)";
  } else if (backend == "flash") {
    t.description =
        "PyTorch SDPA, flash backend only: FlashAttention-2 (Tri Dao's kernels as vendored in "
        "ATen)";
  } else if (backend == "efficient") {
    t.description =
        "PyTorch SDPA, memory-efficient backend only: the CUTLASS kernel that came from xFormers "
        "(ATen's mem_eff_attention)";
  } else if (backend == "cudnn") {
    t.description =
        "PyTorch SDPA, cuDNN backend only: cuDNN's fused attention through ATen's own cuDNN "
        "frontend graphs (the cuDNN PyTorch loads)";
  } else if (backend == "math") {
    t.family = Family::math;
    t.fused = false;
    t.description =
        "PyTorch SDPA, math backend only: unfused ATen ops (matmul, softmax), fp16/bf16 computed "
        "in fp32";
  } else if (backend == "naive") {
    t.family = Family::naive;
    t.fused = false;
    t.description =
        "PyTorch eager softmax(scale * Q K^T, masked) V: cuBLAS matmuls and ATen's softmax, "
        "scores materialized (GQA as grouped matmuls)";
  } else {
    throw std::logic_error("torch_traits: unknown backend " + std::string(backend));
  }
  return t;
}

}  // namespace attnprof
