// What a kernel is instantiated for, declared once beside it (flash_kernel.cuh's FlashHeadDims):
// its provider's supports() reads the list, and its launch dispatches through it, so a head dim
// or dtype it was not built for takes an explicit branch (std::logic_error: supports() should
// have refused it) instead of falling through to another instantiation.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "attnprof/spec.hpp"

namespace attnprof::cuda {

template <int... Dims>
struct HeadDims {
  static constexpr std::array<int64_t, sizeof...(Dims)> kList{Dims...};
  static constexpr std::span<const int64_t> list() { return kList; }
  static constexpr bool contains(int64_t head_dim) { return ((head_dim == Dims) || ...); }

  // f(std::integral_constant<int, D>{}) for the D that is head_dim; its result.
  template <class F>
  static decltype(auto) dispatch(int64_t head_dim, const char* kernel, F&& f) {
    using R = decltype(f(std::integral_constant<int, kFirst>{}));
    if constexpr (std::is_void_v<R>) {
      if (!((head_dim == Dims ? (f(std::integral_constant<int, Dims>{}), true) : false) || ...))
        unsupported(head_dim, kernel);
    } else {
      R out{};
      if (!((head_dim == Dims ? (out = f(std::integral_constant<int, Dims>{}), true) : false) ||
            ...))
        unsupported(head_dim, kernel);
      return out;
    }
  }

 private:
  static constexpr int kFirst = kList[0];
  [[noreturn]] static void unsupported(int64_t head_dim, const char* kernel) {
    throw std::logic_error(std::string(kernel) + " is not built for head dim " +
                           std::to_string(head_dim) + " (its provider should have refused it)");
  }
};

// f(T{}) for the element type of `dtype`: fp16 Half, bf16 BFloat16 (a kernel's .cu passes
// __half and __nv_bfloat16); anything else is refused explicitly.
template <class Half, class BFloat16, class F>
decltype(auto) dispatch_dtype(DType dtype, const char* kernel, F&& f) {
  if (dtype == DType::fp16) return f(Half{});
  if (dtype != DType::bf16)
    throw std::logic_error(std::string(kernel) + " takes fp16 and bf16 only, not " +
                           std::string(to_string(dtype)));
  return f(BFloat16{});
}

}  // namespace attnprof::cuda
