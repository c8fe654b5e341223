// Factory functions of every provider, one per provider file, and the declared traits of the
// providers a build may leave out. The registry's table (src/registry/registry.cpp, one row per
// provider) is the only caller of the factories; a factory of a provider this build leaves out
// is declared here but never referenced (its row holds null).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/provider.hpp"

namespace attnprof {

// CPU (src/providers/cpu/)
std::unique_ptr<Provider> make_cpu_reference();
std::unique_ptr<Provider> make_cpu_naive();
std::unique_ptr<Provider> make_cpu_flash();

// Declared traits, compiled in every build (declared.cpp of each folder): a provider and the
// registry's "not built" entry for it read the same facts.
ProviderTraits cuda_naive_traits();
ProviderTraits cuda_naive_expand_traits();
ProviderTraits cuda_math_traits();
ProviderTraits cuda_decode_traits();
ProviderTraits cuda_flash_traits();
ProviderTraits cuda_flash_sm90_traits();
ProviderTraits cuda_mla_decode_traits();
// A fused attention kernel of a CUDA library `library` (its name, what it is): the facts every
// fused CUDA provider starts from, built or not.
ProviderTraits fused_cuda_traits(std::string name, std::string description, std::string library);
ProviderTraits cudnn_sdpa_traits(bool inference);
// backend: "default", "flash", "efficient", "cudnn", "math" (torch.sdpa.*) or "naive".
ProviderTraits torch_traits(std::string_view backend);

// CUDA (src/providers/cuda/), built with ATTNPROF_WITH_CUDA
std::unique_ptr<Provider> make_cuda_naive();
std::unique_ptr<Provider> make_cuda_naive_expand();
std::unique_ptr<Provider> make_cuda_math();
std::unique_ptr<Provider> make_cuda_decode();      // attnprof's own decode kernel
std::unique_ptr<Provider> make_cuda_flash();       // attnprof's own prefill kernel
std::unique_ptr<Provider> make_cuda_flash_sm90();  // and its Hopper form
std::unique_ptr<Provider> make_cuda_mla_decode();  // attnprof's own MLA decode kernel (sm_90a)

// cuDNN (src/providers/cudnn/), built with ATTNPROF_WITH_CUDNN
std::unique_ptr<Provider> make_cudnn_sdpa();
std::unique_ptr<Provider> make_cudnn_sdpa_infer();  // the inference forward (no log-sum-exp)

// LibTorch (src/providers/torch/), built with ATTNPROF_WITH_TORCH
std::unique_ptr<Provider> make_torch_sdpa_default();
std::unique_ptr<Provider> make_torch_sdpa_flash();
std::unique_ptr<Provider> make_torch_sdpa_efficient();
std::unique_ptr<Provider> make_torch_sdpa_cudnn();
std::unique_ptr<Provider> make_torch_sdpa_math();
std::unique_ptr<Provider> make_torch_naive();

// Fault injection (src/providers/test/), in the table only when test_providers_enabled():
// the environment has ATTNPROF_TEST_PROVIDERS=1.
bool test_providers_enabled();
std::unique_ptr<Provider> make_test_abort();
std::unique_ptr<Provider> make_test_segv();
std::unique_ptr<Provider> make_test_hang();
std::unique_ptr<Provider> make_test_oom();
std::unique_ptr<Provider> make_test_sticky();
std::unique_ptr<Provider> make_test_illegal_address();  // built with ATTNPROF_WITH_CUDA
// test.group runs in worker group "test" with this library path first; test.pid in the default
// group. Both are cpu.reference noting their pid and LD_LIBRARY_PATH (src/providers/test/).
inline constexpr std::string_view kTestGroupLibraryPath = "/attnprof-test-group/lib";
std::unique_ptr<Provider> make_test_group();
std::unique_ptr<Provider> make_test_pid();
// test.mutant.* (src/providers/test/mutant.hpp): every mutation on the CPU, and on CUDA builds on
// the GPU too.
std::vector<std::unique_ptr<Provider>> make_test_mutants();

// A provider this build does not contain: listed with its declared traits, never available,
// with the reason.
std::unique_ptr<Provider> make_unbuilt(ProviderTraits traits, std::string reason);

}  // namespace attnprof
