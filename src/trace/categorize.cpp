// Kernel categories from names. Names are matched without their parameter list: a demangled
// name's arguments carry our own types (attnprof::cuda::RowMask, TensorRef) and library types
// (cutlass::NumericConverter in a GEMM's epilogue) that say nothing about what the kernel does.
// Template arguments stay: cutlass::Kernel2<cutlass_80_simt_sgemm_...> is named only there.
#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "attnprof/trace.hpp"

namespace attnprof {

namespace {

struct Patterns {
  KernelCategory category;
  std::array<std::string_view, 10> needles;  // lower case; empty entries end the list
};

// First match wins. Fused attention comes first (a fused kernel's name may say softmax or
// gemm), softmax/reduction before GEMM (a fused GEMM+softmax is counted as softmax work only if
// it is not attention), elementwise last (its words are the most generic).
constexpr Patterns kPatterns[] = {
    {KernelCategory::fused_attention,
     {"fort_native_sdpa", "fort_native", "sdpa", "flash", "fmha", "attention", "mha_fwd",
      "mha_bwd"}},
    {KernelCategory::softmax_reduction, {"softmax", "logsumexp", "reduce", "reduction"}},
    {KernelCategory::gemm,
     {"nvjet", "gemm", "gemv", "xmma", "cublaslt", "cutlass", "wgmma", "hmma", "matmul"}},
    {KernelCategory::elementwise_copy,
     {"elementwise", "cast", "convert", "copy", "fill", "repeat", "transpose", "mask", "memcpy",
      "memset"}},
};

// `name` without a trailing parameter list "(...)" (parentheses balanced from the end).
std::string_view without_parameters(std::string_view name) {
  if (name.empty() || name.back() != ')') return name;
  int depth = 0;
  for (size_t i = name.size(); i-- > 0;) {
    if (name[i] == ')') ++depth;
    if (name[i] == '(' && --depth == 0) return i == 0 ? name : name.substr(0, i);
  }
  return name;
}

}  // namespace

KernelCategory categorize(std::string_view kernel_name) {
  std::string lower(without_parameters(kernel_name));
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const Patterns& p : kPatterns) {
    for (std::string_view needle : p.needles) {
      if (!needle.empty() && lower.find(needle) != std::string::npos) return p.category;
    }
  }
  return KernelCategory::other;
}

}  // namespace attnprof
