// What the LibTorch providers (torch.sdpa.{default,flash,efficient,cudnn,math}, torch.naive)
// share. This header includes no LibTorch header: the provider files (one per provider: its
// name, what upstream kernel it is) stay light, and the heavy code lives in torch_runtime.cpp
// (availability, versions, library path), torch_run.cpp (tensors, modes, memory, streams),
// sdpa_run.cpp and naive_run.cpp.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "attnprof/provider.hpp"

namespace attnprof::torchp {

// Which PyTorch attention a provider runs. The SDPA ones go through
// at::scaled_dot_product_attention with only that backend enabled (what
// torch.nn.attention.sdpa_kernel does); `choice` leaves ATen's choice alone.
enum class Backend { choice, flash, efficient, cudnn, math, naive };

// The provider for `backend` with its declared traits (torch_traits, declared.cpp): availability
// from LibTorch, its own worker group, spec checks, memory estimates; prepare() runs
// prepare_sdpa or prepare_naive.
std::unique_ptr<Provider> make_provider(ProviderTraits traits, Backend backend);

// torch_runtime.cpp
Availability torch_availability();  // LibTorch sees a CUDA device, or why not
WorkerGroup torch_worker_group();   // "torch", with LibTorch's and its NVIDIA wheels' lib folders
std::string torch_version();        // "2.11.0" (TORCH_VERSION of the headers built against)

// sdpa_run.cpp, naive_run.cpp
std::unique_ptr<Run> prepare_sdpa(Backend backend, const Spec& spec, const Device& device,
                                  const PrepareContext& ctx, const Io& io);
std::unique_ptr<Run> prepare_naive(const Spec& spec, const Device& device,
                                   const PrepareContext& ctx, const Io& io);

}  // namespace attnprof::torchp
