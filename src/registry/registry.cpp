#include "attnprof/registry.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "providers/factories.hpp"

namespace attnprof {

namespace {

// A factory where this build contains its provider, else null (the row lists it, unavailable).
#if defined(ATTNPROF_WITH_CUDA)
#define ATTNPROF_CUDA(factory) factory
#else
#define ATTNPROF_CUDA(factory) nullptr
#endif
#if defined(ATTNPROF_WITH_CUDNN)
#define ATTNPROF_CUDNN(factory) factory
#else
#define ATTNPROF_CUDNN(factory) nullptr
#endif
#if defined(ATTNPROF_WITH_TORCH)
#define ATTNPROF_TORCH(factory) factory
#else
#define ATTNPROF_TORCH(factory) nullptr
#endif

constexpr const char* kNoCuda =
    "not built: configured without CUDA (ATTNPROF_WITH_CUDA=OFF or no nvcc)";
constexpr const char* kNoCudnn =
    "not built: needs CUDA, cuDNN 9 and the cuDNN frontend headers (scripts/install-deps.sh "
    "fetches them)";
constexpr const char* kNoTorch =
    "not built: LibTorch not found (configure with -DATTNPROF_WITH_TORCH=ON and Torch_DIR)";

// One provider: its factory where this build has it, else its declared traits and why not.
struct Row {
  std::unique_ptr<Provider> (*make)();
  ProviderTraits (*declared)();  // null for a provider every build contains
  const char* not_built;
};

// The one table, in `attnprof list`'s order.
const Row kRows[] = {
    {make_cpu_reference, nullptr, ""},
    {make_cpu_naive, nullptr, ""},
    {make_cpu_flash, nullptr, ""},
    {ATTNPROF_CUDA(make_cuda_naive), cuda_naive_traits, kNoCuda},
    {ATTNPROF_CUDA(make_cuda_naive_expand), cuda_naive_expand_traits, kNoCuda},
    {ATTNPROF_CUDA(make_cuda_math), cuda_math_traits, kNoCuda},
    {ATTNPROF_CUDA(make_cuda_decode), cuda_decode_traits, kNoCuda},
    {ATTNPROF_CUDA(make_cuda_flash), cuda_flash_traits, kNoCuda},
    {ATTNPROF_CUDA(make_cuda_flash_sm90), cuda_flash_sm90_traits, kNoCuda},
    {ATTNPROF_CUDA(make_cuda_mla_decode), cuda_mla_decode_traits, kNoCuda},
    {ATTNPROF_CUDNN(make_cudnn_sdpa), [] { return cudnn_sdpa_traits(false); }, kNoCudnn},
    {ATTNPROF_CUDNN(make_cudnn_sdpa_infer), [] { return cudnn_sdpa_traits(true); }, kNoCudnn},
    {ATTNPROF_TORCH(make_torch_sdpa_default), [] { return torch_traits("default"); }, kNoTorch},
    {ATTNPROF_TORCH(make_torch_sdpa_flash), [] { return torch_traits("flash"); }, kNoTorch},
    {ATTNPROF_TORCH(make_torch_sdpa_efficient), [] { return torch_traits("efficient"); }, kNoTorch},
    {ATTNPROF_TORCH(make_torch_sdpa_cudnn), [] { return torch_traits("cudnn"); }, kNoTorch},
    {ATTNPROF_TORCH(make_torch_sdpa_math), [] { return torch_traits("math"); }, kNoTorch},
    {ATTNPROF_TORCH(make_torch_naive), [] { return torch_traits("naive"); }, kNoTorch},
};

#undef ATTNPROF_CUDA
#undef ATTNPROF_CUDNN
#undef ATTNPROF_TORCH

// Libraries people ask about that no adapter links, listed so `attnprof list` says why
// (docs/providers.md gives the whole story of each).
struct NoAdapter {
  const char* name;
  const char* description;
  const char* library;
  const char* reason;
};
const NoAdapter kNoAdapters[] = {
    {"flash_attn.fa2", "the standalone flash-attn library (FlashAttention-2)", "flash-attn",
     "not built: flash-attn is not installed (PyPI has only its source, no wheel) and no adapter "
     "links it; FlashAttention-2 as vendored in ATen runs as torch.sdpa.flash and "
     "py.torch.sdpa.flash"},
    // Tried on the H200 (2026-12-03): the newest wheel, built against other versions.
    {"xformers.memeff", "the standalone xFormers memory-efficient attention", "xFormers",
     "not built: xformers 0.0.35, the newest wheel, is built for PyTorch 2.10 and Python 3.10; on "
     "the H200's PyTorch 2.11 / Python 3.12 its CUDA extension does not load and "
     "memory_efficient_attention finds no operator (no source build)"},
    {"trt.fp16", "a TensorRT engine of the attention graph, fp16", "TensorRT",
     "not built: TensorRT cannot be installed here (the tensorrt packages on PyPI are stubs that "
     "download from a host this workplace cannot reach, and Debian has none); with TensorRT "
     "installed it would be a Python provider (docs/providers.md)"},
};

std::vector<std::unique_ptr<Provider>> build_table() {
  std::vector<std::unique_ptr<Provider>> t;
  for (const Row& row : kRows)
    t.push_back(row.make ? row.make() : make_unbuilt(row.declared(), row.not_built));
  for (const NoAdapter& n : kNoAdapters)
    t.push_back(make_unbuilt(fused_cuda_traits(n.name, n.description, n.library), n.reason));
  if (test_providers_enabled()) {
    t.push_back(make_test_abort());
    t.push_back(make_test_segv());
    t.push_back(make_test_hang());
    t.push_back(make_test_oom());
    t.push_back(make_test_sticky());
    t.push_back(make_test_group());
    t.push_back(make_test_pid());
    for (auto& mutant : make_test_mutants()) t.push_back(std::move(mutant));
#if defined(ATTNPROF_WITH_CUDA)
    t.push_back(make_test_illegal_address());
#endif
  }
  return t;
}

std::vector<std::unique_ptr<Provider>>& table() {
  static std::vector<std::unique_ptr<Provider>> t = build_table();
  return t;
}

}  // namespace

const std::vector<std::unique_ptr<Provider>>& all_providers() {
  return table();
}

void add_providers(std::vector<std::unique_ptr<Provider>> providers) {
  for (auto& p : providers) {
    if (find_provider(p->name()) != nullptr)
      throw std::invalid_argument(fmt::format("a provider named '{}' exists already", p->name()));
    table().push_back(std::move(p));
  }
}

bool glob_match(std::string_view p, std::string_view t) {
  // Iterative matcher with backtracking to the last '*'.
  std::size_t pi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  while (ti < t.size()) {
    if (pi < p.size() && (p[pi] == '?' || p[pi] == t[ti])) {
      ++pi;
      ++ti;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = ti;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      ti = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

void backfill_traits(std::vector<Result>& rows) {
  for (Result& r : rows) {
    if (!r.traits.description.empty()) continue;
    if (const Provider* p = find_provider(r.provider)) r.traits = p->traits();
  }
}

std::string default_refusal(const Provider& p, const Spec& spec, const Device& device) {
  const ProviderTraits t = p.traits();
  if (std::string why = variant_refusal(t, spec); !why.empty()) return why;
  if (spec.mode != Mode::fwd && !t.backward) return p.name() + " runs the forward only";
  if (spec.mode == Mode::fwd && !t.forward) return p.name() + " runs the backward only";
  if (const Support s = p.supports(spec, device); !s.ok) return s.reason;
  return {};
}

DefaultSet default_set(const Device& device, std::span<const Spec> specs,
                       const std::function<std::string(const Provider&)>& cannot_run) {
  DefaultSet out;
  for (const auto& p : all_providers()) {
    const ProviderTraits t = p->traits();
    if (!t.in_default_set || t.device != device.kind || !cannot_run(*p).empty()) continue;
    std::string first_why;  // the first valid point's refusal
    bool runs_one = specs.empty();
    for (const Spec& spec : specs) {
      if (runs_one) break;
      if (!spec.validate().empty()) continue;  // refused to every provider alike
      const std::string why = default_refusal(*p, spec, device);
      runs_one = why.empty();
      if (first_why.empty()) first_why = why;
    }
    if (runs_one) {
      out.providers.push_back(p.get());
    } else {
      out.left_out.push_back({p.get(), first_why});
    }
  }
  return out;
}

Provider* find_provider(std::string_view name) {
  for (const auto& p : all_providers()) {
    if (p->name() == name) return p.get();
  }
  return nullptr;
}

std::vector<Provider*> select_providers(std::string_view patterns) {
  std::vector<Provider*> out;
  std::size_t start = 0;
  while (start <= patterns.size()) {
    std::size_t comma = patterns.find(',', start);
    std::string_view pat =
        patterns.substr(start, comma == std::string_view::npos ? patterns.npos : comma - start);
    if (!pat.empty()) {
      bool any = false;
      for (const auto& p : all_providers()) {
        if (glob_match(pat, p->name())) {
          any = true;
          if (std::find(out.begin(), out.end(), p.get()) == out.end()) out.push_back(p.get());
        }
      }
      if (!any) {
        std::string known;
        for (const auto& p : all_providers()) known += (known.empty() ? "" : ", ") + p->name();
        throw std::invalid_argument(
            fmt::format("--providers: '{}' matches no provider (known: {})", pat, known));
      }
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace attnprof
